"""End to end through ./spark-submit.sh, exactly as a user runs it."""

from __future__ import annotations

import gzip
import json

import pyarrow.parquet as pq

from conftest import run_submit, write
from s3spark.paths import REPO_ROOT

NO_UI = ("--conf", "spark.ui.enabled=false")


def summary_of(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def sample_lines() -> list[list[str]]:
    lines = []
    for path in sorted((REPO_ROOT / "data" / "pageviews").glob("*.gz")):
        lines += [line.split(" ") for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    return lines


def test_quick_start_converts_the_sample_from_any_directory(tmp_path):
    result = run_submit(*NO_UI, "jobs/csv_to_parquet.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    table = pq.read_table(tmp_path / "output" / "pageviews.parquet")
    expected = sample_lines()
    assert table.num_rows == len(expected) == 20_000
    assert table.schema.names == ["project", "url", "count", "bytes"]
    assert sum(table.column("count").to_pylist()) == sum(int(fields[2]) for fields in expected)
    summary = summary_of(result.stdout)
    assert summary["status"] == "ok" and summary["profile"] == "local"
    assert summary["rows_read"] == summary["rows_written"] == 20_000
    assert "NativeCodeLoader" not in result.stderr


def test_filter_count_job_matches_python(tmp_path):
    result = run_submit(*NO_UI, "jobs/csv_filter_count.py", "--filter", "count = 1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = summary_of(result.stdout)
    assert summary["rows_matched"] == sum(1 for fields in sample_lines() if fields[2] == "1")
    assert summary["rows_read"] == summary["rows_matched"] + summary["rows_filtered_out"]


def test_malformed_row_is_one_line_and_exit_2(tmp_path):
    src = write(tmp_path / "in.csv", "id,n\n1,2\nx,3\n")
    args = ("--input", str(src), "--schema", "id INT, n INT", "--output", str(tmp_path / "out"))
    result = run_submit(*NO_UI, "jobs/csv_to_parquet.py", *args, cwd=tmp_path)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: malformed row in file://{src}: 'x,3'; fix the input, or rerun with --on-bad-rows drop "
        "or --on-bad-rows quarantine --quarantine URI"
    ]
    assert "\tat " not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_profile_is_refused_before_spark_starts(tmp_path):
    result = run_submit("--profile", "nosuch", "jobs/csv_to_parquet.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "error: unknown profile 'nosuch'" in result.stderr


def test_help_and_show_profile():
    helped = run_submit("--help")
    assert helped.returncode == 0 and "--profile NAME|PATH" in helped.stdout
    shown = run_submit("--show-profile", "--profile", "minio")
    assert shown.returncode == 0
    assert "spark.hadoop.fs.s3a.path.style.access true" in shown.stdout


def test_job_help_lists_the_shared_flags():
    result = run_submit("jobs/csv_to_parquet.py", "--help")
    assert result.returncode == 0
    for flag in ("--input", "--schema", "--on-bad-rows", "--partition-by", "--summary-json", "--compression"):
        assert flag in result.stdout


def test_verbose_shows_the_java_trace(tmp_path):
    src = write(tmp_path / "in.csv", "id,n\nx,3\n")
    args = ("--input", str(src), "--schema", "id INT, n INT", "--output", str(tmp_path / "out"), "--verbose")
    result = run_submit(*NO_UI, "jobs/csv_to_parquet.py", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert "\tat org.apache.spark" in result.stderr
    assert sum(line.startswith("error: malformed row") for line in result.stderr.splitlines()) == 1
