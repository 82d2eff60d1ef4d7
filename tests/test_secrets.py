"""The S3 secret never appears in output, logs, Spark event logs, summaries or error messages."""

from __future__ import annotations

import os

from conftest import TEST_SECRET, run_submit

PAGEVIEWS = ("--schema", "@pageviews", "--delimiter", "space", "--no-header")


def test_secret_appears_nowhere(tmp_path, s3, bucket):
    assert os.environ["AWS_SECRET_ACCESS_KEY"] == TEST_SECRET
    s3.put_object(Bucket=bucket, Key="raw/pv", Body=b"en A 1 10\nen B x 10\n")
    events = tmp_path / "events"
    events.mkdir()
    logging = (
        "--profile",
        "minio",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.eventLog.enabled=true",
        "--conf",
        f"spark.eventLog.dir=file://{events}",
    )
    runs = [
        run_submit(
            *logging,
            "jobs/csv_to_parquet.py",
            "--input",
            f"s3a://{bucket}/raw/",
            *PAGEVIEWS,
            "--output",
            f"s3a://{bucket}/out",
            "--on-bad-rows",
            "quarantine",
            "--quarantine",
            f"s3a://{bucket}/bad",
            "--summary-json",
            str(tmp_path / "summary.json"),
            "--verbose",
            cwd=tmp_path,
        ),
        # A failing run, verbose, so stack traces and error messages are searched too.
        run_submit(
            *logging,
            "jobs/csv_filter_count.py",
            "--input",
            f"s3a://{bucket}/raw/",
            *PAGEVIEWS,
            "--verbose",
            cwd=tmp_path,
        ),
        run_submit("--show-profile", "--profile", "minio"),
    ]
    assert [run.returncode for run in runs] == [0, 2, 0], [run.stderr for run in runs]
    for run in runs:
        assert TEST_SECRET not in run.stdout and TEST_SECRET not in run.stderr
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.parent == events for path in files), "event logs were written"
    for path in files:
        assert TEST_SECRET.encode() not in path.read_bytes(), path
    for key in ("out/_SUCCESS", "bad/_SUCCESS"):
        assert TEST_SECRET.encode() not in s3.get_object(Bucket=bucket, Key=key)["Body"].read()
