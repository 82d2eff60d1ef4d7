"""The jobs' shared command-line vocabulary, and the run wrapper that gives every job the same exit codes,
error lines and run summary."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable

from pyspark.sql import SparkSession

from s3spark.bad_rows import BadRowPolicy
from s3spark.errors import UserError, java_message, scrub, translate
from s3spark.paths import REPO_ROOT
from s3spark.pipeline import ReadRequest
from s3spark.reader import CsvFormat
from s3spark.session import PROFILE_KEY, session, set_verbose
from s3spark.summary import RunSummary
from s3spark.writer import COMPRESSIONS, FORMATS, MODES

SAMPLE_INPUT = str(REPO_ROOT / "data" / "pageviews" / "*.gz")
PARSERS = ("auto", "csv", "split")
DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "space": " ", "comma": ",", "pipe": "|", "semicolon": ";"}


def comma_list(values: list[str] | None) -> list[str]:
    """Flatten repeated and comma-separated option values."""
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def split_top_level(text: str) -> list[str]:
    """Split a --select list on commas that are not inside parentheses or quotes."""
    items, depth, quote, current = [], 0, "", []
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]


def delimiter(value: str) -> str:
    value = DELIMITER_NAMES.get(value, value)
    if len(value) != 1:
        raise argparse.ArgumentTypeError(f"expected one character or one of {', '.join(DELIMITER_NAMES)}")
    return value


def quote_char(value: str) -> str:
    if value.lower() == "none":
        return ""
    if len(value) != 1:
        raise argparse.ArgumentTypeError("expected one character, or none")
    return value


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """--input, --schema, the CSV format, --filter, --select and the bad-row options."""
    group = parser.add_argument_group("input")
    group.add_argument(
        "--input",
        action="append",
        metavar="URI[,URI...]",
        help="CSV files, directories or globs; local paths or s3a://bucket/prefix; repeatable; .gz is read as gzip",
    )
    group.add_argument(
        "--schema",
        metavar="DDL|@FILE",
        help="explicit schema as Spark DDL ('project STRING, count INT') or @file.ddl or @name from conf/schemas/; "
        "without it types are inferred with an extra full pass",
    )
    group.add_argument("--delimiter", type=delimiter, help="field separator: one character, or tab, space, pipe, ...")
    group.add_argument("--header", action=argparse.BooleanOptionalAction, help="first line is a header (default: yes)")
    group.add_argument("--multiline", action="store_true", help="quoted fields may contain line breaks")
    group.add_argument("--encoding", default="UTF-8", help="input character set (default: UTF-8)")
    group.add_argument(
        "--quote",
        type=quote_char,
        default='"',
        metavar="CHAR|none",
        help='quote character (default: "); none: quotes are ordinary characters',
    )
    group.add_argument(
        "--parser",
        choices=PARSERS,
        default="auto",
        help="auto (default): lines without quotes are split() on the delimiter, cheaper than the CSV "
        "parser, with identical results, when the input has no header, no --multiline, is UTF-8 and has only "
        "string, integer, floating point and boolean columns (a line with a quote, a wrong field count or "
        "an odd number makes the job read the input a second time, with the CSV parser for such lines); "
        "csv: always Spark's CSV parser; "
        "split: require the fast path (error if the input does not qualify)",
    )
    group.add_argument("--filter", metavar="SQL", help='keep rows matching a SQL condition, e.g. "count > 1"')
    group.add_argument("--select", metavar="EXPRS", help="output columns: names or SQL expressions, comma separated")
    group.add_argument(
        "--on-bad-rows",
        choices=[policy.value for policy in BadRowPolicy],
        default="fail",
        help="malformed rows (wrong field count, values that do not cast): fail the run naming the row "
        "(default), drop and count them, or quarantine them",
    )
    group.add_argument(
        "--quarantine", metavar="URI", help="where quarantined rows go (JSON lines: source_file, record)"
    )


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """--output, --format, --mode, --partition-by, --compression."""
    group = parser.add_argument_group("output")
    group.add_argument("--output", metavar="URI", help="output directory, local or s3a://bucket/prefix")
    group.add_argument(
        "--format", choices=FORMATS, default="parquet", help="output format: parquet (default) or delta (a Delta table)"
    )
    group.add_argument(
        "--mode",
        choices=MODES,
        help="if the output exists: error (default), overwrite it, or append to it",
    )
    group.add_argument("--partition-by", action="append", metavar="COLS", help="partition columns, comma separated")
    group.add_argument("--compression", choices=COMPRESSIONS, default="snappy", help="Parquet codec (default: snappy)")
    group.add_argument(
        "--replace-where",
        metavar="PREDICATE",
        help="delta only: atomically replace just the rows matching this SQL predicate (e.g. \"project = 'en'\"); "
        "refused if the run would write rows outside it",
    )


def add_incremental_options(parser: argparse.ArgumentParser) -> None:
    """--incremental and its checkpoint: convert only files not converted before."""
    group = parser.add_argument_group("incremental (scheduled runs)")
    group.add_argument(
        "--incremental",
        action="store_true",
        help="convert only the files that arrived since the last run, exactly once (needs --schema, --checkpoint)",
    )
    group.add_argument("--checkpoint", metavar="URI", help="where progress is kept (local or s3a://); one per output")
    group.add_argument("--max-files-per-batch", type=int, metavar="N", help="files per micro-batch (default: all)")
    group.add_argument(
        "--break-lock", action="store_true", help="take over the lock of a run that died on another machine"
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("run")
    group.add_argument("--summary-json", metavar="PATH", help="also write the run summary JSON to this file")
    group.add_argument("--verbose", action="store_true", help="show Java stack traces and task failures")


def use_sample_when_no_input(args: argparse.Namespace) -> bool:
    """Point a run without --input at the bundled page-view sample (space separated, no header)."""
    if args.input:
        return False
    args.input = [SAMPLE_INPUT]
    args.schema = args.schema or "@pageviews"
    args.delimiter = args.delimiter or " "
    args.header = False if args.header is None else args.header
    return True


def read_request(args: argparse.Namespace) -> ReadRequest:
    """The input options as a ReadRequest."""
    return ReadRequest(
        inputs=comma_list(args.input),
        schema=args.schema,
        csv=CsvFormat(
            delimiter=args.delimiter or ",",
            header=True if args.header is None else args.header,
            multiline=args.multiline,
            encoding=args.encoding,
            quote=args.quote,
            # Both quoting off and the quote doubled are spelled with the quote character.
            escape=args.quote or '"',
            parser=args.parser,
        ),
        filter=args.filter,
        select=split_top_level(args.select or ""),
        on_bad_rows=BadRowPolicy(args.on_bad_rows),
        quarantine=args.quarantine,
    )


def run_job(name: str, args: argparse.Namespace, body: Callable[[SparkSession, RunSummary], None]) -> int:
    """Run a job body with a session, and turn its outcome into a summary, one error line and an exit code.

    Exit codes: 0 success, 2 bad usage, input or configuration, 1 anything else.
    """
    summary = RunSummary(job=name)
    code, message = 0, None
    spark, started_here = None, SparkSession.getActiveSession() is None
    try:
        spark = session(app_name=name)
        summary.profile = spark.conf.get(PROFILE_KEY, None)
        set_verbose(spark, args.verbose)
        body(spark, summary)
    except UserError as error:
        code, message = error.exit_code, str(error)
    except KeyboardInterrupt:
        code, message = 130, "interrupted"
    except Exception as error:  # a Spark or JVM failure
        known = translate(error)
        if known is not None:
            code, message = known.exit_code, str(known)
        else:
            code, message = 1, java_message(error) + ("" if args.verbose else " (rerun with --verbose for details)")
        if args.verbose:
            traceback.print_exc()
    summary.finish("ok" if code == 0 else "failed", scrub(message) if message else None)
    summary.emit(args.summary_json)
    if message:
        print(f"error: {summary.error}", file=sys.stderr)
    else:
        print(summary.human(), file=sys.stderr)
    if started_here and spark is not None:
        shut_down_gateway(spark)
    return code


def shut_down_gateway(spark: SparkSession) -> None:
    """Close the JVM's Python gateway at the end of a job, so the JVM exits at once when this process does.

    The JVM exits when this process ends (Spark stops in its shutdown hook), but with the gateway still
    listening, HotSpot's exit first waits 0.3 s for that thread, blocked in native code, and holds the job's
    stdout and stderr meanwhile: whoever reads them (a scheduler, the benchmark) waits too. Measured here:
    the JVM's exit 0.36 s → 0.05 s; a run on 50 MB read to the end of its output 0.35-0.45 s sooner.
    """
    try:
        spark.sparkContext._gateway.shutdown()
    except Exception as error:  # the run is over and reported: a failure here only costs that wait
        print(f"note: could not close the JVM gateway ({error})", file=sys.stderr)
