"""Writing tables: Parquet or Delta (and JSON for quarantine) with a mode, partitions and compression."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import DataFrame, SparkSession

from s3spark import storage
from s3spark.errors import UserError, java_message
from s3spark.session import session_conf

MODES = ("error", "overwrite", "append")
FORMATS = ("parquet", "delta")
COMPRESSIONS = ("snappy", "zstd", "gzip", "none")


@dataclass(frozen=True)
class OutputSpec:
    """Where and how a table is written."""

    uri: str
    format: str = "parquet"
    mode: str = "error"
    partition_by: list[str] = field(default_factory=list)
    compression: str | None = None
    # Delta only: overwrite just the rows matching this SQL predicate, atomically (Delta's replaceWhere).
    replace_where: str | None = None


def check_can_write(spark: SparkSession, output: OutputSpec) -> None:
    """Refuse before any work when --mode error would hit an existing output, or the options do not fit."""
    if output.replace_where is not None:
        _check_replace_where(output)
    exists = storage.exists(spark, output.uri)
    if output.mode == "error" and exists:
        raise UserError(
            f"output exists: {output.uri}; pass --mode overwrite to replace it or --mode append to add to it"
        )
    if exists and output.format in FORMATS:
        _check_table_kind(spark, output)


def _check_replace_where(output: OutputSpec) -> None:
    if output.format != "delta":
        raise UserError(
            f"--replace-where needs --format delta (Delta's replaceWhere); {output.format} has no atomic range rewrite"
        )
    if not output.replace_where.strip():
        raise UserError("--replace-where needs a SQL predicate, e.g. \"day = '2024-01-01'\"")
    if output.mode != "overwrite":
        raise UserError(f"--replace-where overwrites the matching rows: leave out --mode {output.mode}")


def _check_table_kind(spark: SparkSession, output: OutputSpec) -> None:
    """A Delta table is written only as Delta, and Delta never lands on top of plain files."""
    is_delta = storage.exists(spark, output.uri.rstrip("/") + "/_delta_log")
    if is_delta and output.format != "delta":
        raise UserError(
            f"output is a Delta table: {output.uri}; pass --format delta (a {output.format} write would bypass "
            "its transaction log)"
        )
    if output.format == "delta" and not is_delta:
        raise UserError(
            f"output exists and is not a Delta table: {output.uri}; write to a new --output, or convert it in "
            f"place first with CONVERT TO DELTA parquet.`{output.uri}`"
        )


@dataclass(frozen=True)
class DeltaCommit:
    """The table version a Delta write created, and what its history says it wrote."""

    version: int
    rows: int | None
    bytes: int | None


def last_delta_commit(spark: SparkSession, uri: str) -> DeltaCommit:
    """The newest entry of a Delta table's history (DESCRIBE HISTORY): right after our write, our commit."""
    from delta.tables import DeltaTable

    row = DeltaTable.forPath(spark, uri).history(1).select("version", "operationMetrics").first()
    metrics = row["operationMetrics"] or {}

    def metric(name: str) -> int | None:
        return int(metrics[name]) if name in metrics else None

    return DeltaCommit(version=row["version"], rows=metric("numOutputRows"), bytes=metric("numOutputBytes"))


# How long a failed write waits for its job's other tasks to stop before removing the output.
TASKS_STOP_TIMEOUT_S = 30

# A partitioned Parquet overwrite replaces only the partitions the run writes (dynamic partition
# overwrite), so an hourly rerun of one day's input leaves the other days alone. PathOutputCommitProtocol
# (the S3A committers) refuses dynamic overwrite, so these writes use Spark's classic protocol, which
# stages the new partitions and swaps them in at job commit (on S3 the swap is a copy: slower, but no
# partition is touched before the job has succeeded).
DYNAMIC_OVERWRITE_CONF = {
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.sources.commitProtocolClass": (
        "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"
    ),
    "spark.sql.parquet.output.committer.class": "org.apache.parquet.hadoop.ParquetOutputCommitter",
}


def write_table(spark: SparkSession, frame: DataFrame, output: OutputSpec) -> None:
    """Write a frame; when the write fails, a target that did not exist before is removed again."""
    writer = frame.write.format(output.format).mode(output.mode)
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    if output.compression:
        writer = writer.option("compression", output.compression)
    if output.format == "csv":
        writer = writer.option("header", "true")
    if output.replace_where is not None:
        writer = writer.option("replaceWhere", output.replace_where)
    existed = storage.exists(spark, output.uri)
    dynamic = output.format == "parquet" and output.mode == "overwrite" and bool(output.partition_by)
    try:
        with session_conf(spark, DYNAMIC_OVERWRITE_CONF) if dynamic else contextlib.nullcontext():
            writer.save(output.uri)
    except BaseException as error:
        if not existed:
            _remove_failed_output(spark, output.uri)
        if output.replace_where is not None:
            _replace_where_error(error, output.replace_where)
        raise


def _remove_failed_output(spark: SparkSession, uri: str) -> None:
    """Remove what a failed write left of an output that did not exist before it, pending uploads included.

    A failed job returns while its other tasks are still being killed, and such a task can go on writing
    (the magic committer's files, a multipart upload) after a delete: wait for running tasks to stop first.
    """
    deadline = time.monotonic() + TASKS_STOP_TIMEOUT_S
    while _running_tasks(spark) and time.monotonic() < deadline:
        time.sleep(0.2)
    if storage.exists(spark, uri):  # nothing there (a missing bucket, say): nothing to clean, no upload listing
        storage.delete(spark, uri)
        storage.abort_stale_uploads(spark, uri, int(time.time() * 1000))


def _running_tasks(spark: SparkSession) -> int:
    infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    return sum(info.numRunningTasks() for info in infos)


def _replace_where_error(error: BaseException, predicate: str) -> None:
    """Turn Delta's replaceWhere failures into one line that says what to do."""
    text = str(error)
    if "DELTA_REPLACE_WHERE_MISMATCH" in text or "DELTA_VIOLATE_CONSTRAINT" in text:
        raise UserError(
            f"--replace-where {predicate!r}: the run would write rows outside that predicate, and Delta refuses "
            "them (nothing was committed); add --filter with the same condition, or widen the predicate"
        ) from None
    if isinstance(error, AnalysisException | ParseException):
        raise UserError(f"bad --replace-where {predicate!r}: {java_message(error)}") from None
