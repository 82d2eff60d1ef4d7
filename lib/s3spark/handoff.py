"""Hand-off to pandas-on-Spark, and from there to plain pandas with a size guard.

For notebooks and jobs that analyse converted tables::

    from s3spark.handoff import read_table, to_pandas
    from s3spark.session import session

    spark = session(profile="minio")                  # the same profiles as ./spark-submit.sh
    views = read_table("s3a://lake/pageviews", "delta")   # a pyspark.pandas DataFrame, computed by Spark
    top = views.groupby("project")["count"].sum().sort_values(ascending=False).head(10)
    small = to_pandas(top)                             # plain pandas through Arrow, refused when too large

Importing this module is quiet on purpose, without hiding warnings wholesale:

* ``PYARROW_IGNORE_TIMEZONE=1`` is set before ``pyspark.pandas`` is imported (pandas-on-Spark otherwise warns
  at import and sets it itself, too late for executors started earlier); ``conf/profiles/base.conf`` passes it
  to the executors with ``spark.executorEnv.PYARROW_IGNORE_TIMEZONE``.
* Frames come from Spark's own readers and ``DataFrame.pandas_api()``, with pandas-on-Spark's
  ``compute.default_index_type`` set to ``distributed``. The default, ``sequence``, numbers rows with a window
  over a single partition: it pulls the whole table through one task, the usual reason pandas-on-Spark is
  slow, and the reason ``ps.read_parquet`` and friends print their "default index ... overhead" advice. A
  distributed index is ``monotonically_increasing_id()``: no shuffle, no single task; its values are unique
  but not consecutive, which analysis code should not rely on anyway.
* ``to_pandas`` checks the size before collecting, so the advice "`to_pandas` loads all data into the
  driver's memory" is answered by the guard; that one message is ignored inside the guarded call only.
  Every other warning still shows.
"""

from __future__ import annotations

import os

os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

import re  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import pandas as pd  # noqa: E402
import pyspark.pandas as ps  # noqa: E402
from pyspark.pandas.utils import PandasAPIOnSparkAdviceWarning  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402

from s3spark import driver_collect, storage  # noqa: E402
from s3spark.bad_rows import BadRowPolicy, good_rows  # noqa: E402
from s3spark.errors import UserError  # noqa: E402
from s3spark.reader import CsvFormat, read_csv  # noqa: E402
from s3spark.schema import parse_schema  # noqa: E402
from s3spark.session import session  # noqa: E402

FORMATS = ("parquet", "delta", "csv")
INDEX_TYPE = "distributed"
MAX_ROWS_ENV = "S3SPARK_TO_PANDAS_MAX_ROWS"
MAX_BYTES_ENV = "S3SPARK_TO_PANDAS_MAX_BYTES"
DEFAULT_MAX_ROWS = 2_000_000
DEFAULT_MAX_BYTES = 512 * 1024**2
# Rows collected first: a frame smaller than this is returned from this one collection; a larger one's
# pandas memory is estimated from these rows.
SAMPLE_ROWS = 1000
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_TO_PANDAS_ADVICE = r"`to_pandas` loads all data into the driver's memory"

__all__ = [
    "configure",
    "pandas_on_spark",
    "read_table",
    "session",
    "to_pandas",
    "ToPandasLimits",
]


def configure(spark: SparkSession | None = None) -> SparkSession:
    """Prepare a session for pandas-on-Spark: a distributed default index and Arrow conversion.

    Without a session, the one that is running (or ``session()``: $S3SPARK_PROFILE or local) is used.
    """
    spark = spark or session()
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    if ps.get_option("compute.default_index_type") != INDEX_TYPE:
        ps.set_option("compute.default_index_type", INDEX_TYPE)
    return spark


def pandas_on_spark(frame: DataFrame) -> ps.DataFrame:
    """A Spark DataFrame as a pandas-on-Spark DataFrame (nothing is computed or collected)."""
    configure(frame.sparkSession)
    return frame.pandas_api()


def read_table(
    uri: str | list[str],
    format: str = "parquet",
    *,
    schema: str | None = None,
    csv: CsvFormat | None = None,
    on_bad_rows: str = "fail",
    version: int | None = None,
    columns: list[str] | None = None,
    spark: SparkSession | None = None,
    profile: str | None = None,
) -> ps.DataFrame:
    """Read a table into a pandas-on-Spark DataFrame, through a profile's session.

    ``format``: ``parquet``, ``delta`` (``version`` reads an older version: time travel) or ``csv``, which
    needs ``schema`` (Spark DDL, ``@file.ddl`` or ``@name`` from conf/schemas) and takes a ``CsvFormat``;
    malformed CSV rows fail the read (``on_bad_rows="fail"``) or are left out (``"drop"``).
    ``uri`` is a local path or ``s3a://`` URI (a list for CSV files). ``spark`` defaults to the running
    session, else ``session(profile)``.
    """
    spark = configure(spark or session(profile))
    uris = [uri] if isinstance(uri, str) else list(uri)
    if format not in FORMATS:
        raise UserError(f"unknown format {format!r}; use one of: {', '.join(FORMATS)}")
    if format != "csv" and len(uris) != 1:
        raise UserError(f"read one {format} table at a time; got {len(uris)} locations")
    if version is not None and format != "delta":
        raise UserError("version= (time travel) needs format='delta'")
    if format == "csv":
        frame = _read_csv(spark, uris, schema, csv or CsvFormat(), on_bad_rows)
    else:
        if not storage.exists(spark, uris[0]):
            raise UserError(f"table not found: {uris[0]}; check the path (convert the CSV first?)")
        if format == "delta" and not is_delta_table(spark, uris[0]):
            raise UserError(f"not a Delta table (no _delta_log): {uris[0]}; read it with format='parquet'")
        reader = spark.read.format(format)
        if version is not None:
            reader = reader.option("versionAsOf", version)
        frame = reader.load(uris[0])
    if columns:
        missing = [name for name in columns if name not in frame.columns]
        if missing:
            raise UserError(f"column {missing[0]!r} is not in {uris[0]}; columns are: {', '.join(frame.columns)}")
        frame = frame.select(*columns)
    return pandas_on_spark(frame)


def _read_csv(spark: SparkSession, uris: list[str], schema: str | None, fmt: CsvFormat, on_bad_rows: str) -> DataFrame:
    """The jobs' reader: the split() fast path where it applies, and the same malformed-row handling."""
    if not schema:
        raise UserError("reading CSV needs schema= (Spark DDL such as 'project STRING, count INT', or @name)")
    policies = {"fail": BadRowPolicy.FAIL, "drop": BadRowPolicy.DROP}
    if on_bad_rows not in policies:
        raise UserError(f"on_bad_rows must be one of: {', '.join(policies)} (got {on_bad_rows!r})")
    storage.expand_inputs(spark, uris)  # a missing input is one clear line, not a Java trace
    return good_rows(read_csv(spark, uris, parse_schema(spark, schema), fmt), policies[on_bad_rows])


def is_delta_table(spark: SparkSession, uri: str) -> bool:
    """True when ``uri`` holds a Delta transaction log."""
    return storage.exists(spark, uri.rstrip("/") + "/_delta_log")


# --- to_pandas with a guard ----------------------------------------------------------------------------


def parse_bytes(value: str | int, where: str) -> int:
    """``536870912``, ``512m``, ``2g`` or ``2GiB`` → bytes (binary units)."""
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(value), re.IGNORECASE)
    if not match:
        raise UserError(f"{where}: expected a size such as 512m or 2g, got {value!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def _human_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TiB"


@dataclass(frozen=True)
class ToPandasLimits:
    """How much ``to_pandas`` may collect into the driver; 0 means no limit."""

    max_rows: int = DEFAULT_MAX_ROWS
    max_bytes: int = DEFAULT_MAX_BYTES

    @classmethod
    def resolve(cls, max_rows: int | None = None, max_bytes: int | str | None = None) -> ToPandasLimits:
        """The arguments, else $S3SPARK_TO_PANDAS_MAX_ROWS / $S3SPARK_TO_PANDAS_MAX_BYTES, else the defaults."""
        if max_rows is None:
            text = os.environ.get(MAX_ROWS_ENV, "").replace("_", "").replace(",", "")
            if text and not text.isdigit():
                raise UserError(f"{MAX_ROWS_ENV}: expected a whole number of rows (0 for no limit), got {text!r}")
            max_rows = int(text) if text else DEFAULT_MAX_ROWS
        if max_bytes is None:
            text = os.environ.get(MAX_BYTES_ENV, "")
            max_bytes = parse_bytes(text, MAX_BYTES_ENV) if text else DEFAULT_MAX_BYTES
        else:
            max_bytes = parse_bytes(max_bytes, "max_bytes")
        if max_rows < 0 or max_bytes < 0:
            raise UserError("to_pandas limits must be 0 (no limit) or positive")
        return cls(max_rows=max_rows, max_bytes=max_bytes)


Collectable = ps.DataFrame | ps.Series | DataFrame


def _collect(obj: Collectable, rows: int | None) -> pd.DataFrame | pd.Series:
    """Up to ``rows`` rows (all when None: ``driver_collect``) as pandas, through Arrow."""
    with warnings.catch_warnings():
        # The guard has checked the size: this is the one advice it answers.
        warnings.filterwarnings("ignore", message=_TO_PANDAS_ADVICE, category=PandasAPIOnSparkAdviceWarning)
        if rows is None:
            return driver_collect.collect(obj)
        if isinstance(obj, DataFrame):
            return obj.limit(rows).toPandas()
        return obj.head(rows).to_pandas()


def _count(obj: Collectable, at_most: int | None) -> int:
    """The number of rows, counting no further than ``at_most`` when given."""
    if isinstance(obj, DataFrame):
        return (obj if at_most is None else obj.limit(at_most)).count()
    return len(obj if at_most is None else obj.head(at_most))


def _pandas_bytes(frame: pd.DataFrame | pd.Series) -> int:
    usage = frame.memory_usage(deep=True, index=True)
    return int(usage.sum()) if hasattr(usage, "sum") else int(usage)


def to_pandas(
    obj: Collectable,
    *,
    max_rows: int | None = None,
    max_bytes: int | str | None = None,
) -> pd.DataFrame | pd.Series:
    """Collect a pandas-on-Spark DataFrame or Series (or a Spark DataFrame) into plain pandas, via Arrow.

    Refused with a ``UserError`` (before anything large reaches the driver) when the result would have more
    than ``max_rows`` rows or take more than ``max_bytes`` of pandas memory (estimated from the first
    ``SAMPLE_ROWS`` rows). Limits: the arguments, else $S3SPARK_TO_PANDAS_MAX_ROWS and
    $S3SPARK_TO_PANDAS_MAX_BYTES (``512m``, ``2g``, ...), else 2,000,000 rows and 512 MiB; 0 turns a limit
    off. Small results cost one sample; larger ones a sample, a bounded count and the collect; with both
    limits off, only the collect.
    """
    if isinstance(obj, DataFrame):
        configure(obj.sparkSession)
    else:
        configure()
    limits = ToPandasLimits.resolve(max_rows, max_bytes)
    if not limits.max_rows and not limits.max_bytes:
        return _collect(obj, None)  # both limits off: nothing to check, one Spark job
    sample = _collect(obj, SAMPLE_ROWS)
    complete = len(sample) < SAMPLE_ROWS
    if complete:
        rows = len(sample)
    else:
        rows = _count(obj, limits.max_rows + 1 if limits.max_rows else None)
    how = "max_rows= or $" + MAX_ROWS_ENV
    if limits.max_rows and rows > limits.max_rows:
        raise UserError(
            f"to_pandas refused: more than {limits.max_rows:,} rows would be collected into the driver's memory "
            f"(the limit, set by {how}; 0 for none); aggregate or filter with pandas-on-Spark first, take "
            ".head(n), or raise the limit"
        )
    per_row = _pandas_bytes(sample) / len(sample) if len(sample) else 0
    estimate = per_row * rows
    if limits.max_bytes and estimate > limits.max_bytes:
        raise UserError(
            f"to_pandas refused: {rows:,} rows need about {_human_bytes(estimate)} as pandas (estimated from "
            f"{len(sample):,} rows), over the limit of {_human_bytes(limits.max_bytes)} (set by max_bytes= or "
            f"${MAX_BYTES_ENV}; 0 for none); select fewer columns, aggregate first, or raise the limit"
        )
    return sample if complete else _collect(obj, None)
