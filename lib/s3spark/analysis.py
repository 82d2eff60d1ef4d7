"""Page-view analysis with pandas-on-Spark: the most-viewed pages and the share of single-view rows per project."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pandas as pd
from pyspark.sql import SparkSession

from s3spark import handoff, storage
from s3spark.errors import UserError
from s3spark.summary import RunSummary
from s3spark.writer import OutputSpec, check_can_write, write_table

REQUIRED_COLUMNS = ("project", "url", "count")
INPUT_FORMATS = ("auto", "parquet", "delta")
REPORT_FORMATS = ("csv", "parquet")
REPORT_COLUMNS = ["project", "rank", "url", "views", "project_views", "project_rows", "single_view_share"]


@dataclass(frozen=True)
class TopPagesRequest:
    """Which converted page-view table to read, and how many pages per project to keep."""

    input: str
    input_format: str = "auto"
    top: int = 10


def input_format(spark: SparkSession, request: TopPagesRequest) -> str:
    """The table's format: as given, or Delta when the directory holds a _delta_log, else Parquet."""
    if not storage.exists(spark, request.input):
        raise UserError(
            f"input not found: {request.input}; convert the page views first "
            "(./spark-submit.sh jobs/csv_to_parquet.py [--format delta]) or pass --input"
        )
    if request.input_format != "auto":
        return request.input_format
    return "delta" if handoff.is_delta_table(spark, request.input) else "parquet"


def top_pages_report(spark: SparkSession, request: TopPagesRequest, summary: RunSummary | None = None) -> pd.DataFrame:
    """The report as plain pandas: one row per (project, rank) with the project's totals alongside.

    Pages are ranked by their views summed over the table (a page appears once per hour file), ties broken
    by url; ``single_view_share`` is the project's rows with ``count == 1`` over all its rows. The work runs
    in Spark through pandas-on-Spark; only the small report is collected (through the to_pandas guard).
    """
    if request.top < 1:
        raise UserError(f"--top must be at least 1 (got {request.top})")
    fmt = input_format(spark, request)
    views = handoff.read_table(request.input, fmt, spark=spark)
    missing = [name for name in REQUIRED_COLUMNS if name not in views.columns]
    if missing:
        raise UserError(
            f"column {missing[0]!r} is not in {request.input}; a page-view table has project, url and count "
            f"(columns are: {', '.join(views.columns)})"
        )
    views = views[list(REQUIRED_COLUMNS)]
    if summary is not None:
        summary.inputs = [request.input]
        summary.input_files, summary.bytes_read = _table_size(spark, request.input, fmt, views)
        summary.rows_read = len(views)

    # agg({...}) rather than .sum(): pyspark 3.5's GroupBy.sum()/mean() print a FutureWarning on every call.
    pages = views.groupby(["project", "url"]).agg({"count": "sum"}).reset_index()
    pages = pages.rename(columns={"count": "views"})
    # groupby().head() after sort_values would follow pandas-on-Spark's natural order, not the sort, so the
    # rank comes from SQL over the pandas-on-Spark frame: deterministic, ties broken by url.
    # handoff.ps is pyspark.pandas, imported by handoff after it set PYARROW_IGNORE_TIMEZONE.
    ranked = handoff.ps.sql(
        "SELECT project, url, views, row_number() OVER (PARTITION BY project ORDER BY views DESC, url) AS rank "
        "FROM {pages}",
        pages=pages,
    )
    top = ranked[ranked["rank"] <= request.top]

    flagged = views.assign(single_view_rows=(views["count"] == 1).astype("int64"), project_rows=1)
    projects = flagged.groupby("project").agg({"count": "sum", "project_rows": "sum", "single_view_rows": "sum"})
    projects = projects.reset_index()
    projects = projects.rename(columns={"count": "project_views"})
    projects["single_view_share"] = projects["single_view_rows"] / projects["project_rows"]

    report = handoff.to_pandas(top.merge(projects, on="project"))
    report = report.sort_values(["project_views", "project", "rank"], ascending=[False, True, True])
    report = report[REPORT_COLUMNS].reset_index(drop=True)
    return report.astype({"rank": "int32", "views": "int64", "project_views": "int64", "project_rows": "int64"})


def format_report(report: pd.DataFrame) -> str:
    """The report as an aligned text table for people."""
    if report.empty:
        return "(no page views)"
    return report.to_string(index=False, formatters={"single_view_share": "{:.1%}".format})


def top_pages(spark: SparkSession, request: TopPagesRequest, output: OutputSpec, summary: RunSummary) -> pd.DataFrame:
    """Compute the report, write it (one CSV or Parquet file in the output directory) and print it on stderr."""
    if output.format not in REPORT_FORMATS:
        raise UserError(f"report format must be one of: {', '.join(REPORT_FORMATS)}")
    summary.output = output.uri
    check_can_write(spark, output)
    report = top_pages_report(spark, request, summary)
    frame = spark.createDataFrame(report) if not report.empty else spark.createDataFrame([], _empty_schema())
    write_table(spark, frame.coalesce(1), output)
    summary.rows_written = len(report)
    summary.bytes_written = storage.data_bytes(spark, output.uri)
    print(format_report(report), file=sys.stderr)
    return report


def _empty_schema() -> str:
    return (
        "project STRING, rank INT, url STRING, views BIGINT, project_views BIGINT, project_rows BIGINT, "
        "single_view_share DOUBLE"
    )


def _table_size(spark: SparkSession, uri: str, fmt: str, views) -> tuple[int, int]:
    """Data files and bytes of the table's current version (Delta: from its log; Parquet: a listing)."""
    if fmt == "delta":
        from delta.tables import DeltaTable

        detail = DeltaTable.forPath(spark, uri).detail().select("numFiles", "sizeInBytes").first()
        return int(detail["numFiles"]), int(detail["sizeInBytes"])
    return len(views.spark.frame().inputFiles()), storage.data_bytes(spark, uri)
