"""jobs/top_pages.py: exact top pages and single-view shares for a dataset built here, from Parquet and Delta."""

from __future__ import annotations

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

# pyspark's own DeprecationWarnings (distutils LooseVersion, np.character), thousands per run, none ours:
# Python hides them outside __main__ anyway. Everything else still fails or shows.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark")

SCHEMA = "project STRING, url STRING, count INT, bytes BIGINT"
# Two hours of page views. en: B has 3+4=7 over two hours, A 5, C and D tie at 2 (C wins on url), E 1.
# de: X 9, Y 1, Z 1 (Y before Z). fr: one page.
ROWS = [
    ("en", "A", 5, 1),
    ("en", "B", 3, 1),
    ("en", "C", 2, 1),
    ("en", "D", 1, 1),
    ("en", "E", 1, 1),
    ("de", "X", 9, 1),
    ("de", "Y", 1, 1),
    ("fr", "Solo", 1, 1),
    # the second hour
    ("en", "B", 4, 1),
    ("en", "D", 1, 1),
    ("de", "Z", 1, 1),
]
EXPECTED_TOP2 = pd.DataFrame(
    {
        "project": ["en", "en", "de", "de", "fr"],
        "rank": [1, 2, 1, 2, 1],
        "url": ["B", "A", "X", "Y", "Solo"],
        "views": [7, 5, 9, 1, 1],
        "project_views": [17, 17, 11, 11, 1],
        "project_rows": [7, 7, 3, 3, 1],
        # en: D, E, D have count 1 → 3 of 7 rows; de: Y, Z → 2 of 3; fr: 1 of 1.
        "single_view_share": [3 / 7, 3 / 7, 2 / 3, 2 / 3, 1.0],
    }
).astype({"rank": "int32"})


@pytest.fixture
def parquet_table(spark, tmp_path):
    path = str(tmp_path / "pageviews.parquet")
    spark.createDataFrame(ROWS, SCHEMA).repartition(3).write.parquet(path)
    return path


def read_report(spark, path: str, fmt: str = "csv") -> pd.DataFrame:
    if fmt == "csv":
        frame = (
            spark.read.option("header", "true")
            .schema(
                "project STRING, rank INT, url STRING, views BIGINT, project_views BIGINT, project_rows BIGINT, "
                "single_view_share DOUBLE"
            )
            .csv(path)
        )
    else:
        frame = spark.read.parquet(path)
    return frame.toPandas()


def test_top_pages_from_parquet_to_csv(spark, run_job, parquet_table, tmp_path):
    out = tmp_path / "report"
    result = run_job("top_pages", "--input", parquet_table, "--top", "2", "--output", str(out))
    assert result.code == 0, result.stderr
    assert len(list(out.glob("part-*.csv"))) == 1
    assert_frame_equal(read_report(spark, str(out)), EXPECTED_TOP2, check_dtype=False)
    s = result.summary
    assert (s["job"], s["status"], s["rows_read"], s["rows_written"]) == ("top_pages", "ok", 11, 5)
    assert s["input_files"] >= 1 and s["bytes_read"] > 0 and s["output"] == str(out)
    assert "table_version" not in s
    # stdout carries only the summary; the report is a table on stderr, then the one-line account.
    assert [line for line in result.stdout.splitlines() if line.strip()] == [result.stdout.strip()]
    table = result.stderr.splitlines()
    assert table[0].split() == ["project", "rank", "url", "views", "project_views", "project_rows", "single_view_share"]
    assert table[1].split() == ["en", "1", "B", "7", "17", "7", "42.9%"]
    assert table[5].split() == ["fr", "1", "Solo", "1", "1", "1", "100.0%"]
    assert table[-1].startswith("top_pages: 11 rows read from ")


def test_top_pages_from_delta_on_s3a_to_parquet(spark, run_job, bucket):
    table = f"s3a://{bucket}/lake/pageviews"
    spark.createDataFrame(ROWS[:5], SCHEMA).write.format("delta").partitionBy("project").save(table)
    spark.createDataFrame(ROWS, SCHEMA).write.format("delta").mode("overwrite").save(table)  # the live version
    report = f"s3a://{bucket}/reports/top"
    result = run_job("top_pages", "--input", table, "--top", "1", "--output", report, "--format", "parquet")
    assert result.code == 0, result.stderr
    want = EXPECTED_TOP2[EXPECTED_TOP2["rank"] == 1].reset_index(drop=True)
    assert_frame_equal(read_report(spark, report, "parquet"), want, check_dtype=False)
    assert result.summary["rows_read"] == 11  # the current version only, not version 0's files


def test_top_larger_than_pages_keeps_all(spark, run_job, parquet_table, tmp_path):
    out = tmp_path / "report"
    assert run_job("top_pages", "--input", parquet_table, "--top", "50", "--output", str(out)).code == 0
    got = read_report(spark, str(out))
    assert len(got) == 9  # every distinct (project, url)
    assert list(got[got["project"] == "en"]["url"]) == ["B", "A", "C", "D", "E"]


@pytest.mark.parametrize(
    "args,message",
    [
        (("--top", "0"), "error: --top must be at least 1 (got 0)"),
        (("--input-format", "delta"), "error: not a Delta table (no _delta_log): "),
    ],
)
def test_bad_usage_exits_2(run_job, parquet_table, tmp_path, args, message):
    result = run_job("top_pages", "--input", parquet_table, "--output", str(tmp_path / "r"), *args)
    assert result.code == 2
    assert message in result.stderr
    assert result.summary["status"] == "failed"
    assert not (tmp_path / "r").exists()


def test_missing_input_and_existing_output(run_job, parquet_table, tmp_path):
    missing = run_job("top_pages", "--input", str(tmp_path / "nope"), "--output", str(tmp_path / "r"))
    assert missing.code == 2
    assert f"error: input not found: {tmp_path / 'nope'}; convert the page views first" in missing.stderr
    out = tmp_path / "r"
    assert run_job("top_pages", "--input", parquet_table, "--output", str(out)).code == 0
    again = run_job("top_pages", "--input", parquet_table, "--output", str(out))
    assert again.code == 2
    assert f"error: output exists: {out}; pass --mode overwrite" in again.stderr
    assert run_job("top_pages", "--input", parquet_table, "--output", str(out), "--mode", "overwrite").code == 0


def test_wrong_columns(spark, run_job, tmp_path):
    path = str(tmp_path / "other")
    spark.createDataFrame([(1, "x")], "id INT, name STRING").write.parquet(path)
    result = run_job("top_pages", "--input", path, "--output", str(tmp_path / "r"))
    assert result.code == 2
    assert "error: column 'project' is not in " in result.stderr
    assert "(columns are: id, name)" in result.stderr
