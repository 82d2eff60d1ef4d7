"""Measure fs.s3a.fast.upload.buffer (disk, array, bytebuffer) writing Parquet to an S3 server.

    eval "$(scripts/local-s3 start)"
    .venv/bin/python bench/upload_buffer.py --rows 4000000 --repeats 3

Writes the same frame (uncompressed Parquet, 2 files) with each buffer, interleaved, and prints the median
seconds and MB/s of each. The frame is cached first so only the upload path differs.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from s3spark.session import session

BUFFERS = ("disk", "array", "bytebuffer")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bucket", default="s3spark")
    parser.add_argument("--driver-memory", default="3g", help="array/bytebuffer hold blocks in memory")
    args = parser.parse_args()
    spark = session(
        profile="minio",
        master="local[2]",
        conf={"spark.ui.enabled": "false", "spark.driver.memory": args.driver_memory},
    )
    frame = (
        spark.range(0, args.rows, numPartitions=2)
        .selectExpr("id", "sha2(cast(id AS STRING), 256) AS digest", "uuid() AS tag")
        .cache()
    )
    frame.count()
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    times: dict[str, list[float]] = {name: [] for name in BUFFERS}
    size = 0
    for _ in range(args.repeats):
        for name in BUFFERS:
            bucket_conf = f"fs.s3a.bucket.{args.bucket}.fast.upload.buffer"
            hadoop.set(bucket_conf, name)
            spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.closeAll()  # new instance, new setting
            target = f"s3a://{args.bucket}/bench-upload/{name}-{uuid.uuid4().hex[:8]}"
            start = time.monotonic()
            frame.write.option("compression", "none").parquet(target)
            times[name].append(time.monotonic() - start)
            path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(target)
            size = path.getFileSystem(hadoop).getContentSummary(path).getLength()
            path.getFileSystem(hadoop).delete(path, True)
    for name, values in times.items():
        median = statistics.median(values)
        rate = size / median / 1e6
        print(f"{name:11} median {median:6.2f}s  min {min(values):6.2f}s  {rate:7.1f} MB/s  ({size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
