"""Writing tables: Parquet (and JSON for quarantine) with a mode, partitions and compression."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from s3spark import storage
from s3spark.errors import UserError

MODES = ("error", "overwrite", "append")
COMPRESSIONS = ("snappy", "zstd", "gzip", "none")


@dataclass(frozen=True)
class OutputSpec:
    """Where and how a table is written."""

    uri: str
    format: str = "parquet"
    mode: str = "error"
    partition_by: list[str] = field(default_factory=list)
    compression: str | None = None


def check_can_write(spark: SparkSession, output: OutputSpec) -> None:
    """Refuse before any work when --mode error would hit an existing output."""
    if output.mode == "error" and storage.exists(spark, output.uri):
        raise UserError(
            f"output exists: {output.uri}; pass --mode overwrite to replace it or --mode append to add to it"
        )


def write_table(spark: SparkSession, frame: DataFrame, output: OutputSpec) -> None:
    """Write a frame; when the write fails, a target that did not exist before is removed again."""
    writer = frame.write.format(output.format).mode(output.mode)
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    if output.compression:
        writer = writer.option("compression", output.compression)
    existed = storage.exists(spark, output.uri)
    try:
        writer.save(output.uri)
    except BaseException:
        if not existed and storage.exists(spark, output.uri):
            storage.delete(spark, output.uri)
        raise
