"""Faults, for real: kill -9 during a write and rerun; the S3 server stopping mid-job.

After any of them the rerun's output equals the expected data exactly (row count and a content checksum),
with no duplicates and no pending multipart uploads left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable

import pytest

from conftest import REPO_ROOT
from s3spark.local_s3 import LocalS3
from s3spark.sample_data import pageview_lines

PAGEVIEWS = ("--schema", "@pageviews", "--delimiter", "space", "--no-header")
PV_SCHEMA = "project STRING, url STRING, count INT, bytes BIGINT"
FILES, ROWS_PER_FILE = 12, 25_000


def start_submit(*args: str, env: dict | None = None) -> subprocess.Popen:
    """./spark-submit.sh in its own process group, so the whole tree (bash, python, JVM) can be killed."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_GATEWAY", "SPARK_"))}
    return subprocess.Popen(
        [
            str(REPO_ROOT / "spark-submit.sh"),
            "--profile",
            "minio",
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            *args,
        ],
        env={**inherited, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def kill_when(process: subprocess.Popen, ready: Callable[[], bool], timeout: float = 120) -> bool:
    """kill -9 the process tree as soon as ready() holds; False if the run ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if ready():
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.05)
    process.communicate()
    return False


@pytest.fixture(scope="module")
def raw_pageviews(s3_server):
    """A bucket with FILES page-view files, and the expected (count, checksum) of their rows."""
    s3 = s3_server.client()
    s3_server.create_bucket("faults")
    lines = []
    for index in range(FILES):
        part = list(pageview_lines(ROWS_PER_FILE, seed=100 + index))
        s3.put_object(Bucket="faults", Key=f"raw/h{index:02}", Body=("\n".join(part) + "\n").encode())
        lines += part
    return lines


def fingerprint(spark, uri: str) -> tuple[int, int, int]:
    """(rows, distinct rows, checksum of all values) of a Parquet output."""
    frame = spark.read.parquet(uri)
    row = frame.selectExpr("count(*)", "sum(xxhash64(project, url, count, bytes))").first()
    return row[0], frame.distinct().count(), row[1]


def expected_fingerprint(spark, lines: list[str]) -> tuple[int, int, int]:
    rows = [(p, u, int(c), int(b)) for p, u, c, b in (line.split(" ") for line in lines)]
    frame = spark.createDataFrame(rows, PV_SCHEMA)
    row = frame.selectExpr("count(*)", "sum(xxhash64(project, url, count, bytes))").first()
    return row[0], frame.distinct().count(), row[1]


def keys(s3, prefix: str) -> list[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket="faults", Prefix=prefix)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def pending_uploads(s3) -> list[str]:
    return [upload["Key"] for upload in s3.list_multipart_uploads(Bucket="faults").get("Uploads", [])]


def test_killed_overwrite_runs_then_a_rerun_gives_exact_output(spark, s3_server, raw_pageviews):
    s3 = s3_server.client()
    job = (
        "jobs/csv_to_parquet.py",
        "--input",
        "s3a://faults/raw/",
        *PAGEVIEWS,
        "--output",
        "s3a://faults/pv",
        "--mode",
        "overwrite",
    )
    points = {
        "early": lambda: time.sleep(2) or True,
        "mid-upload": lambda: bool(pending_uploads(s3)),
        "during commit": lambda: any(k.endswith(".parquet") and "__magic" not in k for k in keys(s3, "pv/")),
    }
    # "during commit" races the commit itself: the kill may land just before or just after it completes.
    killed = [name for name, ready in points.items() if kill_when(start_submit(*job), ready)]
    assert "early" in killed and "mid-upload" in killed

    rerun = start_submit(*job)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["rows_written"] == len(raw_pageviews)
    assert fingerprint(spark, "s3a://faults/pv") == expected_fingerprint(spark, raw_pageviews)
    assert not [k for k in keys(s3, "pv/") if "__magic" in k]
    assert pending_uploads(s3) == []


def test_killed_incremental_runs_convert_every_file_exactly_once(spark, s3_server, raw_pageviews):
    s3 = s3_server.client()
    job = (
        "jobs/csv_to_parquet.py",
        "--incremental",
        "--input",
        "s3a://faults/raw/",
        *PAGEVIEWS,
        "--output",
        "s3a://faults/inc",
        "--checkpoint",
        "s3a://faults/_checkpoints/inc",
        "--max-files-per-batch",
        "3",
    )
    committed = lambda: any("/commits/" in k for k in keys(s3, "_checkpoints/inc/main/"))  # noqa: E731
    writing = lambda: any(k.endswith(".parquet") for k in keys(s3, "inc/"))  # noqa: E731
    assert kill_when(start_submit(*job), writing)
    kill_when(start_submit(*job), committed)

    rerun = start_submit(*job)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert "taking over the lock" in err
    assert fingerprint(spark, "s3a://faults/inc") == expected_fingerprint(spark, raw_pageviews)


def test_s3_server_stopping_mid_job_fails_cleanly_and_the_rerun_succeeds(spark, tmp_path, raw_pageviews, s3_server):
    """A server of its own, stopped while the job uploads: one error line, nothing published; then a rerun."""
    server = LocalS3.start(
        tmp_path / "data", bucket="victim", access_key=s3_server.access_key, secret_key=s3_server.secret_key
    )
    client = server.client()
    for index in range(4):
        client.put_object(
            Bucket="victim", Key=f"raw/h{index}", Body=("\n".join(raw_pageviews[:50_000]) + "\n").encode()
        )
    job = ("jobs/csv_to_parquet.py", "--input", "s3a://victim/raw/", *PAGEVIEWS, "--output", "s3a://victim/pv")
    env = server.env()
    process = start_submit(*job, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if client.list_multipart_uploads(Bucket="victim").get("Uploads"):
            break
        time.sleep(0.05)
    data_dir = server.data_dir
    server.stop()
    started = time.monotonic()
    out, err = process.communicate(timeout=600)
    failed_after = time.monotonic() - started
    assert process.returncode != 0
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert "\tat " not in err, [line[:150] for line in err.splitlines() if " WARN " in line or " ERROR " in line]

    server = LocalS3.start(data_dir, bucket=None, access_key=s3_server.access_key, secret_key=s3_server.secret_key)
    try:
        client = server.client()
        published = [k["Key"] for k in client.list_objects_v2(Bucket="victim", Prefix="pv/").get("Contents", [])]
        assert not [k for k in published if k.endswith(".parquet") or k.endswith("_SUCCESS")], published
        rerun = start_submit(*job, "--mode", "overwrite", env=server.env())
        out, err = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, err
        assert json.loads(out.splitlines()[-1])["rows_written"] == 200_000
    finally:
        server.stop()
    print(f"failed {failed_after:.1f}s after the server stopped: {errors[0]}")
