"""The most-viewed pages per project, and the share of single-view rows, from converted page views.

Reads the Parquet or Delta table that csv_to_parquet wrote (local or s3a://), computes with pandas-on-Spark,
writes a small report (CSV or Parquet) and prints it on stderr:
    ./spark-submit.sh jobs/top_pages.py --help
"""

from __future__ import annotations

import argparse
import sys

from s3spark import cli
from s3spark.analysis import INPUT_FORMATS, REPORT_FORMATS, TopPagesRequest, top_pages
from s3spark.writer import MODES, OutputSpec

SAMPLE_INPUT = "output/pageviews.parquet"
SAMPLE_OUTPUT = "output/top_pages.csv"

EXAMPLES = f"""
With no --input, reads ./{SAMPLE_INPUT} (what jobs/csv_to_parquet.py writes by default) and writes
./{SAMPLE_OUTPUT}, replacing it.

examples:
  ./spark-submit.sh jobs/csv_to_parquet.py && ./spark-submit.sh jobs/top_pages.py
  ./spark-submit.sh --profile minio jobs/top_pages.py --input s3a://lake/pageviews --top 5 \\
      --output s3a://lake/reports/top_pages --format parquet --mode overwrite

Report columns: project, rank, url, views (summed over the table), project_views, project_rows,
single_view_share (rows with count == 1 / project_rows). Ties in views are broken by url.

exit codes: 0 success, 2 bad usage, input or configuration (one line says what and how to fix), 1 other failure.
The last line on stdout is the run summary as JSON (rows_read: page-view rows; rows_written: report rows).
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="top_pages",
        description="Most-viewed pages and single-view share per project, from converted page views.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = parser.add_argument_group("input")
    group.add_argument("--input", metavar="URI", help="the converted page-view table (Parquet or Delta directory)")
    group.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default="auto",
        help="table format (default auto: delta when the directory has a _delta_log, else parquet)",
    )
    group.add_argument("--top", type=int, default=10, metavar="N", help="pages per project (default: 10)")
    group = parser.add_argument_group("output")
    group.add_argument("--output", metavar="URI", help="report directory (one file), local or s3a://bucket/prefix")
    group.add_argument("--format", choices=REPORT_FORMATS, default="csv", help="report format (default: csv)")
    group.add_argument("--mode", choices=MODES, help="if the report exists: error (default), overwrite or append")
    cli.add_run_options(parser)
    args = parser.parse_args(argv)
    if not args.input:
        args.input = SAMPLE_INPUT
        args.output = args.output or SAMPLE_OUTPUT
        args.mode = args.mode or "overwrite"
    if not args.output:
        parser.error("--output is required with --input (where the report goes)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    request = TopPagesRequest(input=args.input, input_format=args.input_format, top=args.top)
    output = OutputSpec(uri=args.output, format=args.format, mode=args.mode or "error")
    return cli.run_job("top_pages", args, lambda spark, summary: top_pages(spark, request, output, summary))


if __name__ == "__main__":
    sys.exit(main())
