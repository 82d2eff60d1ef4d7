"""This project's hand-off: pandas-on-Spark over our session (profile, jars), and to_pandas."""

from __future__ import annotations

import os

from bench.tools import Source

ARROW_KEY = "spark.sql.execution.arrow.pyspark.enabled"


def _collecting_session(src: Source) -> None:
    """W4 collects the whole table into the driver: start our session with room for it ($BENCH_DRIVER_MEMORY,
    no spark.driver.maxResultSize limit), as a user collecting a large table must. read_table then uses it."""
    from s3spark.session import session

    memory = os.environ.get("BENCH_DRIVER_MEMORY")
    conf = {"spark.driver.maxResultSize": "0"}
    if memory:
        conf["spark.driver.memory"] = memory
    session(src.profile, conf=conf)


def w1(src: Source) -> int:
    """pandas-on-Spark read_csv through read_table, then a pandas-style filtered sum."""
    from s3spark.handoff import read_table
    from s3spark.reader import CsvFormat

    psdf = read_table(
        src.s3a, "csv", schema="@pageviews", csv=CsvFormat(delimiter=" ", header=False), profile=src.profile
    )
    return int((psdf["count"] == 1).sum())


def w4_arrow(src: Source) -> int:
    """Parquet → pandas-on-Spark → pandas with our guarded to_pandas (Arrow on)."""
    from s3spark.handoff import read_table, to_pandas

    _collecting_session(src)
    psdf = read_table(src.s3a, "parquet", profile=src.profile)
    return len(to_pandas(psdf))


def w4_noarrow(src: Source) -> int:
    """The same with Arrow off. Our to_pandas turns Arrow back on, so this collects with pandas-on-Spark's own
    to_pandas after switching Arrow off (checked before collecting)."""
    from s3spark.handoff import read_table

    _collecting_session(src)
    psdf = read_table(src.s3a, "parquet", profile=src.profile)
    spark = psdf.spark.frame().sparkSession
    spark.conf.set(ARROW_KEY, "false")
    if spark.conf.get(ARROW_KEY) != "false":
        raise RuntimeError("could not switch Arrow off")
    return len(psdf.to_pandas())
