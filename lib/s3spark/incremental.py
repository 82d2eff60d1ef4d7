"""Incremental conversion: each run converts exactly the files that arrived since the last run.

Built on Structured Streaming's file source with ``trigger(availableNow=True)``: the checkpoint records
which files were converted, the Parquet file sink's ``_spark_metadata`` log (or Delta's log) records which
output files were committed, so a run that is killed and rerun converts every file exactly once. Readers
must read the output through Spark (or Delta), which honour those logs.

A lock in the checkpoint refuses a second run of the same conversion while one is in progress.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from s3spark import processes, storage
from s3spark.bad_rows import BadRowPolicy, good_rows, malformed_rows
from s3spark.errors import UserError
from s3spark.pipeline import ReadRequest, require_quarantine, transform
from s3spark.reader import observe_read, parser_for, read_csv
from s3spark.schema import parse_schema
from s3spark.summary import RunSummary
from s3spark.writer import OutputSpec

LOCK_NAME = "_s3spark.lock"


@dataclass(frozen=True)
class IncrementalSpec:
    """Where progress is kept and how much one batch takes."""

    checkpoint: str
    max_files_per_batch: int | None = None
    break_lock: bool = False


class CheckpointLock:
    """A marker object in the checkpoint that says a run is in progress (host, pid, start time).

    A lock left by a killed run on this host (its pid is gone) is taken over with a warning; one from
    another host needs --break-lock. Object stores offer no atomic create here, so two runs started in
    the same instant could both pass: the scheduler should not start overlapping runs, and this guard
    catches the common case of a run still going when the next one starts.
    """

    def __init__(self, spark: SparkSession, checkpoint: str, break_lock: bool):
        self.spark = spark
        self.uri = f"{checkpoint.rstrip('/')}/{LOCK_NAME}"
        self.break_lock = break_lock

    def _holder(self) -> dict | None:
        data = storage.read_text(self.spark, self.uri)
        if data is None:
            return None
        try:
            return json.loads(data)
        except json.JSONDecodeError:
            return {"host": "?", "pid": -1, "started": "?"}

    def __enter__(self) -> CheckpointLock:
        holder = self._holder()
        if holder is not None:
            here = holder.get("host") == socket.gethostname()
            if here and not processes.alive(int(holder.get("pid", -1))):
                print(
                    f"warning: taking over the lock of a run that is gone ({self._describe(holder)})", file=sys.stderr
                )
            elif self.break_lock:
                print(f"warning: breaking the lock of {self._describe(holder)}", file=sys.stderr)
            else:
                raise UserError(
                    f"another run of this incremental conversion is in progress ({self._describe(holder)}); "
                    f"wait for it, or if it died on another machine, rerun with --break-lock"
                )
        owner = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
        storage.write_text(self.spark, self.uri, json.dumps(owner))
        return self

    def __exit__(self, *exc: object) -> None:
        storage.delete(self.spark, self.uri)

    @staticmethod
    def _describe(holder: dict) -> str:
        return f"host {holder.get('host')} pid {holder.get('pid')} since {holder.get('started')}"


def _run_until_caught_up(frame: DataFrame, fmt: str, target: str, checkpoint: str, partition_by: list[str]):
    """Process every file not yet in the checkpoint, then stop; returns the query's progress reports."""
    writer = frame.writeStream.format(fmt).outputMode("append").option("checkpointLocation", checkpoint)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    query = writer.trigger(availableNow=True).start(target)
    query.awaitTermination()
    return query.recentProgress


def _metric(progresses, name: str, field: str) -> int:
    total = 0
    for progress in progresses:
        row = (progress.get("observedMetrics") or {}).get(name)
        if row:
            total += int(row.get(field) or 0)
    return total


def convert_incremental(
    spark: SparkSession, request: ReadRequest, output: OutputSpec, spec: IncrementalSpec, summary: RunSummary
) -> None:
    """Convert the files that arrived since the last run into output (append), exactly once."""
    if not request.schema:
        raise UserError("--incremental needs --schema: every batch must parse with the same column types")
    if len(request.inputs) != 1:
        raise UserError("--incremental reads one directory or glob: pass a single --input")
    if output.mode != "append":
        raise UserError("--incremental only appends new files' rows: leave out --mode (or use --mode append)")
    require_quarantine(request)
    summary.output = output.uri
    found = storage.expand_inputs(spark, request.inputs)
    summary.inputs, summary.input_files = found.uris, None  # which files are new is the stream's business
    schema = parse_schema(spark, request.schema)
    summary.parser = parser_for(schema, request.csv)
    # Observed metrics of every batch must stay in recentProgress until the run ends.
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "100000")
    checkpoint = spec.checkpoint.rstrip("/")
    with CheckpointLock(spark, checkpoint, spec.break_lock):
        stream = read_csv(
            spark, request.inputs, schema, request.csv, stream=True, max_files_per_batch=spec.max_files_per_batch
        )
        if request.on_bad_rows is BadRowPolicy.QUARANTINE:
            bad = malformed_rows(observe_read(stream, "quarantine"))
            progress = _run_until_caught_up(bad, "json", request.quarantine, f"{checkpoint}/quarantine", [])
            summary.quarantine = request.quarantine
            summary.rows_quarantined = _metric(progress, "quarantine", "malformed")
        kept = good_rows(observe_read(stream, "read"), request.on_bad_rows).observe(
            "kept", F.count(F.lit(1)).alias("rows")
        )
        rows = transform(kept, request.filter, request.select).observe("written", F.count(F.lit(1)).alias("rows"))
        progress = _run_until_caught_up(rows, output.format, output.uri, f"{checkpoint}/main", output.partition_by)
    summary.batches = sum(1 for p in progress if p.get("numInputRows", 0) > 0)
    summary.rows_read = _metric(progress, "read", "rows")
    summary.rows_written = _metric(progress, "written", "rows")
    summary.rows_filtered_out = _metric(progress, "kept", "rows") - summary.rows_written
    if request.on_bad_rows is BadRowPolicy.DROP:
        summary.rows_dropped = _metric(progress, "read", "malformed")
    summary.bytes_written = storage.data_bytes(spark, output.uri)
    if summary.batches == 0:
        summary.note = "no new input files since the last run"
