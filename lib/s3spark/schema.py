"""Explicit schemas: Spark DDL given inline, as @file.ddl, or by name from conf/schemas/."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from s3spark.errors import UserError, java_message
from s3spark.paths import SCHEMA_DIR


def schema_text(spec: str) -> str:
    """The DDL text of a --schema value: inline DDL, @path/to/file.ddl, or @name for conf/schemas/name.ddl."""
    if not spec.startswith("@"):
        return spec
    name = spec[1:]
    for path in (Path(name), SCHEMA_DIR / name, SCHEMA_DIR / f"{name}.ddl"):
        if path.is_file():
            lines = [line.split("--", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
            return " ".join(line for line in lines if line)
    raise UserError(f"schema file not found: {name}; pass @path/to/file.ddl or a name from {SCHEMA_DIR}")


def parse_schema(spark: SparkSession, spec: str) -> StructType:
    """Parse a --schema value into a StructType, with a one-line error for bad DDL."""
    text = schema_text(spec)
    try:
        parsed = spark._jvm.org.apache.spark.sql.types.StructType.fromDDL(text)
    except Exception as error:  # py4j wraps Spark's ParseException
        raise UserError(
            f"bad --schema {spec!r}: {java_message(error)}; write it as Spark DDL, e.g. 'project STRING, count INT'"
        ) from None
    schema = StructType.fromJson(json.loads(parsed.json()))
    if not schema.fields:
        raise UserError(f"bad --schema {spec!r}: no columns; write it as Spark DDL, e.g. 'project STRING, count INT'")
    return schema


def to_ddl(spark: SparkSession, schema: StructType) -> str:
    """A schema as DDL text, ready to paste into --schema."""
    return spark._jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json()).toDDL()
