"""csv_to_parquet on a real S3 server (MinIO on 127.0.0.1): committer, multipart, odd keys, many objects,
parallel splits, per-bucket endpoints and HTTPS."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from chispa import assert_df_equality

from conftest import run_submit
from s3spark.local_s3 import LocalS3
from s3spark.sample_data import pageview_lines

PAGEVIEWS = ("--schema", "@pageviews", "--delimiter", "space", "--no-header")
PV_SCHEMA = "project STRING, url STRING, count INT, bytes BIGINT"
NO_UI = ("--conf", "spark.ui.enabled=false")


def keys(s3, bucket: str, prefix: str = "") -> list[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def put_pageviews(s3, bucket: str, key: str, rows: int, seed: int = 0) -> list[str]:
    lines = list(pageview_lines(rows, seed))
    s3.put_object(Bucket=bucket, Key=key, Body=("\n".join(lines) + "\n").encode())
    return lines


def test_s3_to_s3_partitioned_with_quarantine_and_magic_committer(spark, run_job, s3, bucket):
    lines = put_pageviews(s3, bucket, "raw/pageviews-1", 3000)
    s3.put_object(Bucket=bucket, Key="raw/pageviews-2", Body=b"en Good 1 10\nen Bad notanumber 10\nde Short 2\n")
    result = run_job(
        "csv_to_parquet",
        "--input",
        f"s3a://{bucket}/raw/",
        *PAGEVIEWS,
        "--output",
        f"s3a://{bucket}/lake/pv",
        "--partition-by",
        "project",
        "--on-bad-rows",
        "quarantine",
        "--quarantine",
        f"s3a://{bucket}/bad/pv",
    )
    assert result.code == 0, result.stderr
    s = result.summary
    assert (s["rows_read"], s["rows_written"], s["rows_quarantined"]) == (3003, 3001, 2)

    written = spark.read.parquet(f"s3a://{bucket}/lake/pv")
    assert written.count() == 3001
    assert written.where("project = 'en' AND url = 'Good'").count() == 1
    projects = {line.split(" ")[0] for line in lines} | {"en"}
    partitions = {k.split("/")[2] for k in keys(s3, bucket, "lake/pv/") if "=" in k}
    assert partitions == {f"project={p}" for p in projects}

    bad = spark.read.schema("source_file STRING, record STRING").json(f"s3a://{bucket}/bad/pv").collect()
    assert sorted(row.record for row in bad) == ["de Short 2", "en Bad notanumber 10"]
    assert {row.source_file for row in bad} == {f"s3a://{bucket}/raw/pageviews-2"}

    # The magic committer did the job commit: its _SUCCESS is a JSON manifest naming it, no __magic
    # directory is left, and no multipart upload is left pending.
    manifest = json.loads(s3.get_object(Bucket=bucket, Key="lake/pv/_SUCCESS")["Body"].read())
    assert manifest["committer"] == "magic"
    assert len(manifest["filenames"]) == len([k for k in keys(s3, bucket, "lake/pv/") if k.endswith(".parquet")])
    assert not [k for k in keys(s3, bucket) if "__magic" in k]
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_large_part_files_are_uploaded_in_parts(spark, s3, bucket):
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set(f"fs.s3a.bucket.{bucket}.multipart.size", "5M")  # S3's minimum part size
    frame = spark.range(0, 250_000, numPartitions=1).selectExpr("id", "sha2(cast(id AS STRING), 256) AS digest")
    frame.write.option("compression", "none").parquet(f"s3a://{bucket}/big")
    part = next(k for k in keys(s3, bucket, "big/") if k.endswith(".parquet"))
    head = s3.head_object(Bucket=bucket, Key=part)
    assert head["ContentLength"] > 10 * 1024 * 1024
    assert head["ETag"].strip('"').split("-")[1] == str(-(-head["ContentLength"] // (5 * 1024 * 1024)))
    assert spark.read.parquet(f"s3a://{bucket}/big").count() == 250_000


def test_keys_with_spaces_and_non_ascii(spark, run_job, s3, bucket):
    s3.put_object(Bucket=bucket, Key="raw data/Zürich café #1.csv", Body=b"en Z%C3%BCrich 3 30\n")
    result = run_job(
        "csv_to_parquet",
        "--input",
        f"s3a://{bucket}/raw data/",
        *PAGEVIEWS,
        "--output",
        f"s3a://{bucket}/out put/ü ñ",
    )
    assert result.code == 0, result.stderr
    assert spark.read.parquet(f"s3a://{bucket}/out put/ü ñ").collect()[0].url == "Z%C3%BCrich"
    assert any(k.startswith("out put/ü ñ/part-") for k in keys(s3, bucket))


def test_prefix_with_hundreds_of_small_objects(spark, run_job, s3, bucket):
    def put(index: int) -> None:
        s3.put_object(Bucket=bucket, Key=f"many/obj-{index:04}.csv", Body=f"en P{index} {index} 1\n".encode())

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, range(300)))
    result = run_job(
        "csv_to_parquet", "--input", f"s3a://{bucket}/many/", *PAGEVIEWS, "--output", f"s3a://{bucket}/many-out"
    )
    assert result.code == 0, result.stderr
    assert result.summary["input_files"] == 300 and result.summary["rows_written"] == 300
    total = spark.read.parquet(f"s3a://{bucket}/many-out").selectExpr("sum(count)").first()[0]
    assert total == sum(range(300))


def test_one_large_object_is_read_in_parallel_splits(spark, s3, bucket):
    lines = put_pageviews(s3, bucket, "large/pageviews.csv", 120_000, seed=7)
    size = s3.head_object(Bucket=bucket, Key="large/pageviews.csv")["ContentLength"]
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(512 * 1024))
    try:
        frame = spark.read.schema(PV_SCHEMA).csv(f"s3a://{bucket}/large/pageviews.csv", sep=" ")
        assert frame.rdd.getNumPartitions() >= size // (512 * 1024)
        assert frame.count() == len(lines)
        assert frame.selectExpr("sum(count)").first()[0] == sum(int(line.split(" ")[2]) for line in lines)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


@pytest.fixture
def second_server(tmp_path, s3_server):
    """Another MinIO with the same credentials: a second store on another endpoint."""
    server = LocalS3.start(
        tmp_path / "second", bucket="lake2", access_key=s3_server.access_key, secret_key=s3_server.secret_key
    )
    yield server
    server.stop()


def test_per_bucket_endpoint_reads_one_store_and_writes_another(tmp_path, s3, bucket, second_server):
    put_pageviews(s3, bucket, "raw/pv", 500)
    layer = tmp_path / "two-stores.conf"
    layer.write_text(f"spark.hadoop.fs.s3a.bucket.lake2.endpoint {second_server.endpoint}\n")
    result = run_submit(
        "--profile",
        f"minio,{layer}",
        *NO_UI,
        "jobs/csv_to_parquet.py",
        "--input",
        f"s3a://{bucket}/raw/",
        *PAGEVIEWS,
        "--output",
        "s3a://lake2/pv",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["rows_written"] == 500
    assert any(k.endswith(".parquet") for k in keys(second_server.client(), "lake2", "pv/"))
    assert keys(s3, bucket, "pv/") == []


def test_https_onprem_profile_end_to_end(spark, tmp_path):
    with LocalS3.start(tmp_path / "tls", tls=True, bucket="secure") as server:
        client = server.client()
        client.put_object(Bucket="secure", Key="raw/pv", Body=b"en A 1 10\nde B 2 20\n")
        result = run_submit(
            "--profile",
            "onprem",
            *NO_UI,
            "jobs/csv_to_parquet.py",
            "--input",
            "s3a://secure/raw/",
            *PAGEVIEWS,
            "--output",
            "s3a://secure/lake/pv",
            env=server.env(),
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout.splitlines()[-1])["rows_written"] == 2
        assert (
            json.loads(client.get_object(Bucket="secure", Key="lake/pv/_SUCCESS")["Body"].read())["committer"]
            == "magic"
        )


def test_same_results_as_local_files(spark, run_job, s3, bucket, tmp_path):
    lines = put_pageviews(s3, bucket, "raw/pv", 2000, seed=3)
    local = tmp_path / "pv"
    local.write_text("\n".join(lines) + "\n")
    for source, target in ((f"s3a://{bucket}/raw/", f"s3a://{bucket}/o"), (str(local), str(tmp_path / "o"))):
        assert run_job("csv_to_parquet", "--input", source, *PAGEVIEWS, "--output", target).code == 0
    assert_df_equality(
        spark.read.parquet(f"s3a://{bucket}/o"), spark.read.parquet(str(tmp_path / "o")), ignore_row_order=True
    )
