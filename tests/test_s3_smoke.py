"""The minimal s3a round trip against the local MinIO: the base that the other S3 tests stand on."""

from __future__ import annotations


def test_csv_on_s3_to_parquet_on_s3(spark, run_job, s3, bucket):
    s3.put_object(Bucket=bucket, Key="raw/pv.csv", Body=b"en A 1 10\nde B 2 20\n")
    result = run_job(
        "csv_to_parquet",
        "--input",
        f"s3a://{bucket}/raw/",
        "--schema",
        "@pageviews",
        "--delimiter",
        "space",
        "--no-header",
        "--output",
        f"s3a://{bucket}/lake/pv",
    )
    assert result.code == 0, result.stderr
    assert spark.read.parquet(f"s3a://{bucket}/lake/pv").count() == 2
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="lake/pv/")["Contents"]]
    assert "lake/pv/_SUCCESS" in keys and any(k.endswith(".parquet") for k in keys)
