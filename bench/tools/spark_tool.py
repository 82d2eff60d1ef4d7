"""spark-classic: the original experiment's plain PySpark script, with only the minimal s3a settings.

No profile, no tuning: master local[2], hadoop-aws and the AWS SDK bundle on spark.jars ($BENCH_JARS, passed
by the harness), the endpoint, path-style access and SSL off. The keys come from the environment through s3a's
default credential chain (its EnvironmentVariableCredentialsProvider).
"""

from __future__ import annotations

import os

from bench.common import SCHEMA_DDL
from bench.tools import Source


def minimal_s3a(src: Source) -> dict[str, str]:
    """The minimal s3a settings for the store (also used for ours-minimal / ours-classic)."""
    store = src.store
    return {
        "spark.hadoop.fs.s3a.endpoint": store.endpoint,
        "spark.hadoop.fs.s3a.path.style.access": str(store.path_style).lower(),
        "spark.hadoop.fs.s3a.connection.ssl.enabled": str(store.secure).lower(),
    }


def w1(src: Source) -> int:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("pandas-vs-spark")
    builder = builder.config("spark.jars", os.environ["BENCH_JARS"])
    for key, value in minimal_s3a(src).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        return spark.read.schema(SCHEMA_DDL).option("sep", " ").csv(src.s3a).filter("count = 1").count()
    finally:
        spark.stop()
