"""csv_to_parquet options and outcomes: filter, select, partitions, modes, compression, summary, errors."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality

from conftest import write
from s3spark.bad_rows import BadRowPolicy
from s3spark.pipeline import ReadRequest, rows_countable_in_output
from s3spark.writer import OutputSpec

SCHEMA = "project STRING, url STRING, count INT, bytes BIGINT"
ROWS = [("en", "A", 1, 10), ("en", "B", 5, 50), ("de", "C", 1, 20), ("fr", "D", 3, 30)]


@pytest.fixture
def pageviews(tmp_path):
    return write(tmp_path / "in" / "pv", "".join(f"{p} {u} {c} {b}\n" for p, u, c, b in ROWS))


def convert(run_job, src, out, *extra):
    return run_job(
        "csv_to_parquet",
        "--input",
        str(src),
        "--schema",
        SCHEMA,
        "--delimiter",
        " ",
        "--no-header",
        "--output",
        str(out),
        *extra,
    )


def test_filter_and_select(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "out"
    result = convert(run_job, pageviews, out, "--filter", "count > 1", "--select", "project, upper(url) AS page")
    assert result.code == 0, result.stderr
    expected = spark.createDataFrame([("en", "B"), ("fr", "D")], "project STRING, page STRING")
    assert_df_equality(spark.read.parquet(str(out)), expected, ignore_row_order=True, ignore_nullable=True)
    s = result.summary
    assert (s["rows_read"], s["rows_filtered_out"], s["rows_written"]) == (4, 2, 2)


def test_partitioned_output(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "out"
    result = convert(run_job, pageviews, out, "--partition-by", "project")
    assert result.code == 0, result.stderr
    assert (result.summary["rows_read"], result.summary["rows_written"]) == (4, 4)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["project=de", "project=en", "project=fr"]
    assert spark.read.parquet(str(out / "project=en")).count() == 2
    assert result.summary["bytes_written"] == sum(f.stat().st_size for f in out.rglob("*.parquet"))


@pytest.mark.parametrize("codec,parquet_name", [("zstd", "ZSTD"), ("gzip", "GZIP"), ("none", "UNCOMPRESSED")])
def test_compression(run_job, pageviews, tmp_path, codec, parquet_name):
    out = tmp_path / "out"
    assert convert(run_job, pageviews, out, "--compression", codec).code == 0
    part = next(out.glob("part-*.parquet"))
    assert pq.ParquetFile(part).metadata.row_group(0).column(0).compression == parquet_name


def test_mode_error_refuses_existing_output_before_work(run_job, pageviews, tmp_path):
    out = tmp_path / "out"
    assert convert(run_job, pageviews, out).code == 0
    before = sorted(p.name for p in out.iterdir())
    again = convert(run_job, pageviews, out)
    assert again.code == 2
    assert f"error: output exists: {out}; pass --mode overwrite" in again.stderr
    assert sorted(p.name for p in out.iterdir()) == before


def test_mode_overwrite_and_append(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "out"
    assert convert(run_job, pageviews, out).code == 0
    appended = convert(run_job, pageviews, out, "--mode", "append")
    assert appended.code == 0
    assert spark.read.parquet(str(out)).count() == 8
    assert (appended.summary["rows_read"], appended.summary["rows_written"]) == (4, 4)  # this run's rows only
    smaller = write(tmp_path / "in2" / "pv", "en A 1 10\nde C 1 20\n\n")
    replaced = convert(run_job, smaller, out, "--mode", "overwrite")
    assert replaced.code == 0
    assert spark.read.parquet(str(out)).count() == 2
    assert (replaced.summary["rows_read"], replaced.summary["rows_written"]) == (2, 2)


def test_an_input_of_blank_lines_writes_an_empty_table(spark, run_job, tmp_path):
    out = tmp_path / "out"
    result = convert(run_job, write(tmp_path / "in" / "pv", "\n  \n\n"), out)
    assert result.code == 0, result.stderr
    assert (result.summary["rows_read"], result.summary["rows_written"]) == (0, 0)
    assert spark.read.parquet(str(out)).count() == 0


@pytest.mark.parametrize(
    "change,countable",
    [
        ({}, True),
        ({"mode": "overwrite"}, True),
        ({"mode": "error", "partition_by": ["project"]}, True),
        ({"mode": "overwrite", "partition_by": ["project"]}, False),  # other partitions stay
        ({"mode": "append"}, False),  # earlier rows stay
        ({"format": "delta"}, False),
        ({"filter": "count = 1"}, False),
        ({"select": ["project"]}, False),
        ({"on_bad_rows": BadRowPolicy.QUARANTINE, "quarantine": "q"}, False),
        ({"fallback": True}, False),  # the CSV parser's attempt may have malformed rows
    ],
)
def test_rows_are_counted_in_the_output_only_when_it_holds_just_this_runs_rows(change, countable):
    request = ReadRequest(inputs=["in"], **{k: v for k, v in change.items() if k in ReadRequest.__dataclass_fields__})
    output = OutputSpec(uri="out", **{k: v for k, v in change.items() if k in OutputSpec.__dataclass_fields__})
    assert rows_countable_in_output(request, output, fallback=change.get("fallback", False)) is countable


def test_summary_json_file_and_stdout_line(run_job, pageviews, tmp_path):
    summary_file = tmp_path / "reports" / "run.json"
    result = convert(run_job, pageviews, tmp_path / "out", "--summary-json", str(summary_file))
    assert result.code == 0
    written = json.loads(summary_file.read_text())
    assert written == result.summary
    assert result.stdout.strip().splitlines()[-1] == json.dumps(written)
    assert written["job"] == "csv_to_parquet" and written["status"] == "ok" and written["profile"] == "minio"
    assert written["inputs"] == [str(pageviews)] and written["output"] == str(tmp_path / "out")
    assert written["input_files"] == 1 and written["bytes_read"] == pageviews.stat().st_size
    assert written["rows_read"] == written["rows_written"] == 4
    assert written["seconds"] > 0 and written["rows_per_s"] > 0
    assert "4 rows read from 1 files" in result.stderr


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--filter", "nosuch > 1"], "bad --filter 'nosuch > 1'"),
        (["--filter", "count > ("], "bad --filter 'count > ('"),
        (["--select", "url, (("], "bad --select"),
        (["--partition-by", "nosuch"], "--partition-by column 'nosuch' is not in the output"),
        (["--schema", "project STRINGG"], "bad --schema 'project STRINGG'"),
        (["--schema", "@nosuch"], "schema file not found: nosuch"),
    ],
)
def test_bad_usage_exits_2_with_one_line(run_job, pageviews, tmp_path, extra, message):
    result = convert(run_job, pageviews, tmp_path / "out", *extra)
    assert result.code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert not (tmp_path / "out").exists()
    assert result.summary["status"] == "failed" and message in result.summary["error"]


def test_missing_input_names_the_path(run_job, tmp_path):
    missing = tmp_path / "nope" / "*.csv"
    result = run_job("csv_to_parquet", "--input", str(missing), "--schema", SCHEMA, "--output", str(tmp_path / "o"))
    assert result.code == 2
    assert f"error: input not found: {missing}" in result.stderr


def test_output_required_with_input(run_job, pageviews):
    with pytest.raises(SystemExit) as exit_info:
        run_job("csv_to_parquet", "--input", str(pageviews))
    assert exit_info.value.code == 2


@pytest.mark.parametrize("where", ["local", "s3a"])
def test_partitioned_overwrite_replaces_only_the_partitions_written(spark, run_job, tmp_path, s3, bucket, where):
    out = str(tmp_path / "out") if where == "local" else f"s3a://{bucket}/out"
    first = write(tmp_path / "day1" / "pv", "".join(f"{p} {u} {c} {b}\n" for p, u, c, b in ROWS))
    assert convert(run_job, first, out, "--partition-by", "project").code == 0
    rerun = write(tmp_path / "day2" / "pv", "en A 7 70\nen Z 9 90\n")
    result = convert(run_job, rerun, out, "--partition-by", "project", "--mode", "overwrite")
    assert result.code == 0, result.stderr
    assert result.summary["rows_written"] == 2  # this run's rows, not the partitions left in place
    expected = spark.createDataFrame(
        [("en", "A", 7, 70), ("en", "Z", 9, 90), ("de", "C", 1, 20), ("fr", "D", 3, 30)], SCHEMA
    )
    actual = spark.read.parquet(out).select("project", "url", "count", "bytes")
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)
    assert spark.conf.get("spark.sql.sources.commitProtocolClass").endswith("PathOutputCommitProtocol")
