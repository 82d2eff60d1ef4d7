"""Row counts and sizes of written output, read from the files themselves."""

from __future__ import annotations

from s3spark import storage


def test_parquet_output_rows_come_from_the_footers_of_every_data_file(spark, tmp_path):
    frame = spark.range(1000).selectExpr("id", "id % 3 AS part")
    plain, partitioned = str(tmp_path / "plain"), str(tmp_path / "partitioned")
    frame.repartition(4).write.parquet(plain)
    frame.write.partitionBy("part").parquet(partitioned)
    plain_bytes = sum(part.stat().st_size for part in (tmp_path / "plain").glob("part-*.parquet"))
    assert plain_bytes > 0
    assert storage.parquet_output(spark, plain) == storage.ParquetOutput(rows=1000, bytes=plain_bytes)
    assert storage.parquet_output(spark, partitioned).rows == 1000
    # _SUCCESS and hidden files are not data; more files than max_files are left to a Spark count
    (tmp_path / "plain" / ".ignored.parquet").write_text("not parquet")
    assert storage.parquet_output(spark, plain) == storage.ParquetOutput(rows=1000, bytes=plain_bytes)
    assert storage.parquet_output(spark, plain, max_files=2) == storage.ParquetOutput(rows=None, bytes=plain_bytes)
    assert storage.parquet_output(spark, str(tmp_path / "missing")) == storage.ParquetOutput(rows=0, bytes=0)
