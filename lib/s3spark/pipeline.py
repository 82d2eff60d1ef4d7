"""The jobs' logic: read CSV, handle malformed rows, filter and select, then write or count."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from s3spark import line_split, storage
from s3spark.bad_rows import BadRowPolicy, good_rows, malformed_rows
from s3spark.errors import UserError, java_message
from s3spark.reader import (
    HELPER_COLUMNS,
    SPLIT_PARSER,
    CsvFormat,
    infer_schema,
    is_malformed,
    observe_read,
    parser_for,
    read_csv,
    read_metrics,
)
from s3spark.schema import parse_schema
from s3spark.summary import RunSummary
from s3spark.writer import OutputSpec, check_can_write, last_delta_commit, write_table


@dataclass
class ReadRequest:
    """Which CSV to read, how, and what to keep."""

    inputs: list[str]
    schema: str | None = None
    csv: CsvFormat = field(default_factory=CsvFormat)
    filter: str | None = None
    select: list[str] = field(default_factory=list)
    on_bad_rows: BadRowPolicy = BadRowPolicy.FAIL
    quarantine: str | None = None


def _apply(frame: DataFrame, flag: str, text: str, step) -> DataFrame:
    try:
        return step()
    except (AnalysisException, ParseException) as error:
        columns = ", ".join(frame.columns)
        raise UserError(f"bad {flag} {text!r}: {java_message(error)}; columns are: {columns}") from None


def filter_condition(frame: DataFrame, filter_expr: str | None) -> F.Column:
    """--filter as a column (true without one), checked against the frame: a bad one is one clear line."""
    if not filter_expr:
        return F.lit(True)
    condition = _apply(frame, "--filter", filter_expr, lambda: F.expr(filter_expr))  # a syntax error shows here
    _apply(frame, "--filter", filter_expr, lambda: frame.where(condition))
    return condition


def transform(frame: DataFrame, filter_expr: str | None, select: list[str]) -> DataFrame:
    """Apply --filter (a SQL condition) then --select (column names or SQL expressions)."""
    if filter_expr:
        frame = _apply(frame, "--filter", filter_expr, lambda: frame.where(F.expr(filter_expr)))
    if select:
        frame = _apply(frame, "--select", ", ".join(select), lambda: frame.selectExpr(*select))
    return frame


class PreparedInput:
    """A read request turned into a lazy frame of output rows, with observations filled in by its action."""

    def __init__(
        self,
        spark: SparkSession,
        request: ReadRequest,
        summary: RunSummary,
        *,
        fallback: bool = True,
        observe: bool = True,
    ):
        """observe=False (see rows_countable_in_output): no observation, when the parser allows (self.observed)."""
        self.request = request
        self.summary = summary
        found = storage.expand_inputs(spark, request.inputs)
        summary.inputs, summary.input_files, summary.bytes_read = found.uris, found.files, found.bytes
        schema = (
            parse_schema(spark, request.schema) if request.schema else infer_schema(spark, request.inputs, request.csv)
        )
        self.parser = summary.parser = parser_for(schema, request.csv)
        self.parsed = read_csv(spark, request.inputs, schema, request.csv, fallback=fallback)
        self.read_stats = Observation("read")
        self.passes = filter_condition(self.parsed.drop(*HELPER_COLUMNS), request.filter)
        # Only the split() parser's first attempt can have no malformed row (a line that is not plain stops it):
        # the CSV parser flags malformed rows instead, and they must be counted on the way.
        self.observed = observe or fallback or self.parser != SPLIT_PARSER
        if not self.observed:
            self.rows = self.parsed.drop(*HELPER_COLUMNS)
            return
        # Rows kept = rows read - malformed rows: good_rows removes exactly the malformed ones.
        metrics = read_metrics(self.parsed, self.parser)
        if not request.select:
            # Without --select (which may change the number of rows) the rows out are the good rows that pass
            # --filter, counted in this same observation: a second one after the filter cost about 2 s of
            # 35 s converting 1 GiB.
            metrics.append(F.count_if(~is_malformed() & self.passes).alias("out"))
        kept = good_rows(self.parsed.observe(self.read_stats, *metrics), request.on_bad_rows)
        self.rows = transform(kept.where(self.passes), None, request.select)

    def observed_rows(self) -> tuple[DataFrame, Callable[[], int]]:
        """The output rows, and how to get their number once an action has run over them."""
        if not self.request.select:
            return self.rows, lambda: self.read_stats.get["out"]
        written = Observation("written")
        return self.rows.observe(written, F.count(F.lit(1)).alias("rows")), lambda: written.get["rows"]

    def quarantine_malformed(self, mode: str) -> None:
        """Write malformed rows (source file, raw text) as JSON lines to the quarantine location."""
        target = self.request.quarantine
        stats = Observation("quarantine")
        rows = malformed_rows(observe_read(self.parsed, stats, self.parser))
        write_table(rows.sparkSession, rows, OutputSpec(uri=target, format="json", mode=mode))
        self.summary.quarantine = target
        self.summary.rows_quarantined = stats.get["malformed"]

    def count_matching(self) -> int:
        """Rows that pass --filter, with rows read and malformed counted in the same single aggregation.

        One aggregation instead of an observed count: measured on 1 GiB of page views, 2 cores, it saves
        about a quarter of csv_filter_count's time. Under --on-bad-rows fail a malformed row then fails the
        run through good_rows, as in every other job. (With --select the observed path is used: a select
        may change the number of rows.)
        """
        if self.request.select:
            matched = self.rows.count()
            self.account(self.read_stats.get, matched)
            return matched
        condition = ~is_malformed() & self.passes
        metrics = [*read_metrics(self.parsed, self.parser), F.count_if(condition).alias("matched")]
        stats = self.parsed.agg(*metrics).first().asDict()
        if stats["malformed"] and self.request.on_bad_rows is BadRowPolicy.FAIL:
            good_rows(self.parsed, BadRowPolicy.FAIL).count()  # raises, naming the first malformed row
        self.account(stats, stats["matched"])
        return stats["matched"]

    def account(self, read: dict, rows_out: int) -> None:
        """Fill the summary's counts from the read metrics of the action that just ran."""
        kept = read["rows"] - read["malformed"]
        self.summary.rows_read = read["rows"]
        self.summary.rows_filtered_out = kept - rows_out
        malformed = read["malformed"]
        if self.request.on_bad_rows is BadRowPolicy.DROP:
            self.summary.rows_dropped = malformed
        elif self.request.on_bad_rows is BadRowPolicy.QUARANTINE and malformed != self.summary.rows_quarantined:
            raise UserError(
                f"the input changed during the run: {malformed} malformed rows seen, "
                f"{self.summary.rows_quarantined} quarantined; rerun when the input is stable"
            )


def require_quarantine(request: ReadRequest) -> None:
    if request.on_bad_rows is BadRowPolicy.QUARANTINE and not request.quarantine:
        raise UserError("--on-bad-rows quarantine needs --quarantine URI (where malformed rows go)")


def convert(spark: SparkSession, request: ReadRequest, output: OutputSpec, summary: RunSummary) -> None:
    """CSV → a table format (Parquet or Delta), counting every row read as written, filtered, dropped or quarantined."""
    _with_csv_parser_fallback(summary, lambda fallback: _convert(spark, request, output, summary, fallback))


def _convert(
    spark: SparkSession, request: ReadRequest, output: OutputSpec, summary: RunSummary, fallback: bool
) -> None:
    require_quarantine(request)
    summary.output = output.uri
    check_can_write(spark, output)
    if request.on_bad_rows is BadRowPolicy.QUARANTINE:
        check_can_write(spark, OutputSpec(uri=request.quarantine, format="json", mode=output.mode))
    observe = not rows_countable_in_output(request, output, fallback)
    prepared = PreparedInput(spark, request, summary, fallback=fallback, observe=observe)
    counted_in_output = not prepared.observed
    columns = prepared.rows.columns
    missing = [name for name in output.partition_by if name not in columns]
    if missing:
        raise UserError(f"--partition-by column {missing[0]!r} is not in the output; columns are: {', '.join(columns)}")
    if request.on_bad_rows is BadRowPolicy.QUARANTINE:
        prepared.quarantine_malformed(output.mode)
    rows, rows_out = (prepared.rows, None) if counted_in_output else prepared.observed_rows()
    started_ms = int(time.time() * 1000)
    write_table(spark, rows, output)
    if output.mode in ("error", "overwrite"):
        aborted = storage.abort_stale_uploads(spark, output.uri, started_ms)
        if aborted:
            print(
                f"aborted {aborted} pending multipart uploads left under {output.uri} by earlier runs", file=sys.stderr
            )
    written = None
    if rows_out is None:
        # The files' footers hold their row counts (counting reads nothing else); the same listing sizes the output.
        written = storage.parquet_output(spark, output.uri)
        if written.rows is not None:
            summary.rows_written = written.rows
        else:
            summary.rows_written = spark.read.schema(rows.schema).parquet(output.uri).count()
    else:
        summary.rows_written = rows_out()
    read = {"rows": summary.rows_written, "malformed": 0} if counted_in_output else prepared.read_stats.get
    prepared.account(read, summary.rows_written)
    if output.format == "delta":
        # A Delta directory keeps replaced files until VACUUM: count what this commit wrote, from its history.
        commit = last_delta_commit(spark, output.uri)
        summary.table_version = commit.version
        summary.bytes_written = commit.bytes if commit.bytes is not None else 0
    else:
        summary.bytes_written = written.bytes if written else storage.data_bytes(spark, output.uri)


def rows_countable_in_output(request: ReadRequest, output: OutputSpec, fallback: bool) -> bool:
    """True when the rows a conversion writes can be counted in its output afterwards, instead of on the way.

    The split()-only first attempt has no malformed rows (a line that is not plain stops it; PreparedInput
    keeps observing for the CSV parser), and without --filter and --select it writes every row it reads; a
    Parquet directory that is new or wholly replaced then holds exactly those rows, no more. Counting them
    there instead of observing every row: converting 1 GiB of page views (2 cores) took 20.6-21.8 s against
    22.1-23.9 s.
    """
    return (
        not fallback
        and not request.filter
        and not request.select
        and request.on_bad_rows is not BadRowPolicy.QUARANTINE
        and output.format == "parquet"
        and (output.mode == "error" or (output.mode == "overwrite" and not output.partition_by))
    )


def filter_count(spark: SparkSession, request: ReadRequest, summary: RunSummary) -> None:
    """Load CSV, apply the filter, count the matching rows: the classic pandas-vs-Spark experiment."""
    _with_csv_parser_fallback(summary, lambda fallback: _filter_count(spark, request, summary, fallback))


def _filter_count(spark: SparkSession, request: ReadRequest, summary: RunSummary, fallback: bool) -> None:
    require_quarantine(request)
    if request.on_bad_rows is BadRowPolicy.QUARANTINE:
        check_can_write(spark, OutputSpec(uri=request.quarantine, format="json", mode="error"))
    prepared = PreparedInput(spark, request, summary, fallback=fallback)
    if request.on_bad_rows is BadRowPolicy.QUARANTINE:
        prepared.quarantine_malformed("error")
    summary.rows_matched = prepared.count_matching()


def _with_csv_parser_fallback(summary: RunSummary, run: Callable[[bool], None]) -> None:
    """Run a job with the split() fast path alone; when a line needs the CSV parser, run it again with its help.

    Most inputs of the fast path have no such line, and then the run is one pass with Spark's generated code
    throughout (line_split.parse_lines). A failed first attempt has written nothing: the write fails as a
    whole, and an output that did not exist before is removed (writer.write_table).
    """
    try:
        run(False)
    except Exception as error:
        if not line_split.needs_csv_parser(error):
            raise
        summary.note = "some lines needed the CSV parser, so the input was read a second time"
        print(
            "note: some lines need the CSV parser (a quote, a wrong number of fields, a number in an unusual form); "
            "reading the input again with it",
            file=sys.stderr,
        )
        run(True)
