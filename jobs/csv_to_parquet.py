"""CSV → Parquet on local disk or S3 (s3a://), with an explicit schema and every row accounted for.

Run it through ./spark-submit.sh, which applies the profile and the pinned jars:
    ./spark-submit.sh jobs/csv_to_parquet.py --help
"""

from __future__ import annotations

import argparse
import sys

from s3spark import cli
from s3spark.incremental import IncrementalSpec, convert_incremental
from s3spark.pipeline import convert
from s3spark.writer import OutputSpec

SAMPLE_OUTPUT = "output/pageviews.parquet"

EXAMPLES = f"""
With no --input, converts the bundled page-view sample ({cli.SAMPLE_INPUT}, space separated, no header)
to ./{SAMPLE_OUTPUT}, replacing it.

examples:
  ./spark-submit.sh jobs/csv_to_parquet.py
  ./spark-submit.sh --profile minio jobs/csv_to_parquet.py --input s3a://raw/pageviews/ \\
      --schema @pageviews --delimiter space --no-header --output s3a://lake/pageviews --partition-by project
  ./spark-submit.sh jobs/csv_to_parquet.py --input 'data/*.csv' --schema 'id INT, name STRING' \\
      --output out/people --on-bad-rows quarantine --quarantine out/people_bad --mode overwrite
  # a Delta table, then rewrite one project's rows atomically (DESCRIBE HISTORY shows both versions)
  ./spark-submit.sh jobs/csv_to_parquet.py --format delta --output out/pv_delta --partition-by project
  ./spark-submit.sh jobs/csv_to_parquet.py --format delta --output out/pv_delta --filter "project = 'en'" \\
      --replace-where "project = 'en'"
  # every hour from a scheduler: only new files, exactly once
  ./spark-submit.sh --profile minio jobs/csv_to_parquet.py --incremental --input s3a://raw/pageviews/ \\
      --schema @pageviews --delimiter space --no-header --output s3a://lake/pageviews \\
      --checkpoint s3a://lake/_checkpoints/pageviews

exit codes: 0 success, 2 bad usage, input or configuration (one line says what and how to fix), 1 other failure.
The last line on stdout is the run summary as JSON.
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="csv_to_parquet",
        description="Convert CSV files (local or s3a://) to Parquet or a Delta table.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli.add_input_options(parser)
    cli.add_output_options(parser)
    cli.add_incremental_options(parser)
    cli.add_run_options(parser)
    args = parser.parse_args(argv)
    if cli.use_sample_when_no_input(args):
        args.output = args.output or SAMPLE_OUTPUT
        args.mode = args.mode or "overwrite"
    if not args.output:
        parser.error("--output is required with --input (where the Parquet files go)")
    if args.incremental and not args.checkpoint:
        parser.error("--incremental needs --checkpoint URI (where progress between runs is kept)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    request = cli.read_request(args)
    default_mode = "append" if args.incremental else "error"
    if args.replace_where is not None:
        default_mode = "overwrite"  # replacing a range is an overwrite, limited to the predicate
    output = OutputSpec(
        uri=args.output,
        format=args.format,
        mode=args.mode or default_mode,
        partition_by=cli.comma_list(args.partition_by),
        compression=args.compression,
        replace_where=args.replace_where,
    )
    if args.incremental:
        spec = IncrementalSpec(args.checkpoint, args.max_files_per_batch, args.break_lock)
        return cli.run_job(
            "csv_to_parquet", args, lambda spark, summary: convert_incremental(spark, request, output, spec, summary)
        )
    return cli.run_job("csv_to_parquet", args, lambda spark, summary: convert(spark, request, output, summary))


if __name__ == "__main__":
    sys.exit(main())
