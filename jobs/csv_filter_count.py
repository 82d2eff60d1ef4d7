"""Load CSV, filter, count: the classic pandas-vs-Spark experiment as a job.

./spark-submit.sh jobs/csv_filter_count.py --filter "count = 1"
"""

from __future__ import annotations

import argparse
import sys

from s3spark import cli
from s3spark.pipeline import filter_count

EXAMPLES = f"""
With no --input, counts rows of the bundled page-view sample ({cli.SAMPLE_INPUT}).

examples:
  ./spark-submit.sh jobs/csv_filter_count.py --filter "count = 1"
  ./spark-submit.sh --profile minio jobs/csv_filter_count.py --input s3a://raw/pageviews/ \\
      --schema @pageviews --delimiter space --no-header --filter "count = 1"

exit codes: 0 success, 2 bad usage, input or configuration, 1 other failure.
The last line on stdout is the run summary as JSON (rows_matched is the count).
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="csv_filter_count",
        description="Count the CSV rows (local or s3a://) that match a filter.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli.add_input_options(parser)
    cli.add_run_options(parser)
    args = parser.parse_args(argv)
    cli.use_sample_when_no_input(args)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    request = cli.read_request(args)
    return cli.run_job("csv_filter_count", args, lambda spark, summary: filter_count(spark, request, summary))


if __name__ == "__main__":
    sys.exit(main())
