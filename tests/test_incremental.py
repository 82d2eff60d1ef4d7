"""Incremental conversion: each run converts exactly the files that are new, and says so."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from conftest import write

PAGEVIEWS = ("--schema", "@pageviews", "--delimiter", "space", "--no-header")


def incremental(run_job, source, out, checkpoint, *extra):
    return run_job(
        "csv_to_parquet",
        "--incremental",
        "--input",
        str(source),
        *PAGEVIEWS,
        "--output",
        str(out),
        "--checkpoint",
        str(checkpoint),
        *extra,
    )


def test_each_run_converts_only_new_files(spark, run_job, tmp_path):
    raw, out, checkpoint = tmp_path / "raw", tmp_path / "out", tmp_path / "checkpoint"
    write(raw / "h00", "en A 1 10\nde B 2 20\n")
    write(raw / "h01", "en C 3 30\n")
    first = incremental(run_job, raw, out, checkpoint)
    assert first.code == 0, first.stderr
    assert (first.summary["rows_read"], first.summary["rows_written"], first.summary["batches"]) == (3, 3, 1)

    again = incremental(run_job, raw, out, checkpoint)
    assert again.code == 0, again.stderr
    assert (again.summary["rows_read"], again.summary["batches"]) == (0, 0)
    assert again.summary["note"] == "no new input files since the last run"
    assert "no new input files since the last run" in again.stderr

    write(raw / "h02", "fr D 4 40\nfr E 5 50\n")
    third = incremental(run_job, raw, out, checkpoint)
    assert (third.summary["rows_read"], third.summary["rows_written"]) == (2, 2)
    urls = sorted(row.url for row in spark.read.parquet(str(out)).collect())
    assert urls == ["A", "B", "C", "D", "E"]
    assert not (checkpoint / "_s3spark.lock").exists()


def test_batches_and_bad_rows_on_s3(spark, run_job, s3, bucket):
    for index in range(3):
        s3.put_object(Bucket=bucket, Key=f"raw/h{index}", Body=f"en P{index} {index} 1\nen bad x 1\n".encode())
    result = run_job(
        "csv_to_parquet",
        "--incremental",
        "--input",
        f"s3a://{bucket}/raw/",
        *PAGEVIEWS,
        "--output",
        f"s3a://{bucket}/out",
        "--checkpoint",
        f"s3a://{bucket}/_checkpoints/out",
        "--max-files-per-batch",
        "1",
        "--on-bad-rows",
        "quarantine",
        "--quarantine",
        f"s3a://{bucket}/bad",
    )
    assert result.code == 0, result.stderr
    s = result.summary
    assert (s["batches"], s["rows_read"], s["rows_written"], s["rows_quarantined"]) == (3, 6, 3, 3)
    assert spark.read.parquet(f"s3a://{bucket}/out").count() == 3
    assert spark.read.schema("source_file STRING, record STRING").json(f"s3a://{bucket}/bad").count() == 3


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--mode", "overwrite"], "--incremental only appends new files' rows"),
        (["--schema", ""], "--incremental needs --schema"),
    ],
)
def test_incremental_usage_errors(run_job, tmp_path, extra, message):
    write(tmp_path / "raw" / "a", "en A 1 1\n")
    result = incremental(run_job, tmp_path / "raw", tmp_path / "out", tmp_path / "cp", *extra)
    assert result.code == 2 and message in result.stderr


def test_a_second_run_in_progress_is_refused(run_job, tmp_path):
    write(tmp_path / "raw" / "a", "en A 1 1\n")
    checkpoint = tmp_path / "cp"
    checkpoint.mkdir()
    # A run that is alive on this host: this very process holds the lock.
    holder = {"host": socket.gethostname(), "pid": os.getpid(), "started": "2026-01-01T00:00:00Z"}
    (checkpoint / "_s3spark.lock").write_text(json.dumps(holder))
    refused = incremental(run_job, tmp_path / "raw", tmp_path / "out", checkpoint)
    assert refused.code == 2
    assert f"another run of this incremental conversion is in progress (host {holder['host']} pid {os.getpid()}" in (
        refused.stderr
    )
    assert not (tmp_path / "out").exists()
    assert incremental(run_job, tmp_path / "raw", tmp_path / "out", checkpoint, "--break-lock").code == 0


def test_lock_of_a_dead_run_is_taken_over(run_job, tmp_path):
    write(tmp_path / "raw" / "a", "en A 1 1\n")
    checkpoint = tmp_path / "cp"
    checkpoint.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    holder = {"host": socket.gethostname(), "pid": dead.pid, "started": "2026-01-01T00:00:00Z"}
    (checkpoint / "_s3spark.lock").write_text(json.dumps(holder))
    result = incremental(run_job, tmp_path / "raw", tmp_path / "out", checkpoint)
    assert result.code == 0, result.stderr
    assert "taking over the lock of a run that is gone" in result.stderr
    assert result.summary["rows_written"] == 1
