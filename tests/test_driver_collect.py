"""Collecting whole frames into the driver: the same pandas as pandas-on-Spark's own to_pandas, with less copying."""

from __future__ import annotations

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal, assert_series_equal

from s3spark import driver_collect, handoff
from s3spark.session import session_conf

ps = handoff.ps
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark")

SCHEMA = "id BIGINT, project STRING, count INT, share DOUBLE, small SMALLINT, ratio FLOAT, seen BOOLEAN"
ROWS = [
    (1, "en", 5, 0.5, 1, 0.25, True),
    (2, "de", None, 1.25, None, None, False),
    (3, "fr", 7, None, 3, 1.5, None),
    (4, None, 1, 3.0, 4, 2.0, True),
    (5, 'en ü "q"', 1, 2.0, 5, 0.0, False),
]
PLAIN = ["id", "project", "count", "share", "small", "ratio"]


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory) -> ps.DataFrame:
    path = tmp_path_factory.mktemp("collect") / "table"
    spark.createDataFrame(ROWS, SCHEMA).repartition(2).write.parquet(str(path))
    return handoff.read_table(str(path), "parquet")


def frames(table: ps.DataFrame) -> dict[str, ps.DataFrame]:
    plain = table[PLAIN]
    labelled = plain.copy()
    labelled.columns.name = "field"
    return {
        "plain, nulls in ints, strings and floats": plain,
        "filtered": plain[plain["share"] > 1],
        "empty": plain[plain["id"] > 100],
        "string index": plain.set_index("project"),
        "two-level index": plain.set_index(["id", "project"]),
        "column labels with a name": labelled,
    }


def not_plain(table: ps.DataFrame) -> dict[str, ps.DataFrame]:
    two_level = table[["id", "count"]].copy()
    two_level.columns = pd.MultiIndex.from_tuples([("a", "id"), ("a", "count")])
    return {
        "boolean column": table,
        "categorical": table[PLAIN].astype({"project": "category"}),
        "extension dtype": table[PLAIN].astype({"count": "Int32"}),
        "two-level column labels": two_level,
        "index also a column": table[PLAIN].set_index("id", drop=False),
    }


def test_plain_frames_take_the_arrow_path_and_equal_to_pandas(table):
    for name, frame in frames(table).items():
        assert driver_collect.is_plain(frame), name
        got = driver_collect.collect(frame)
        assert_frame_equal(got, frame.to_pandas(), obj=name)
    got = driver_collect.plain_frame(table[PLAIN])
    assert got is not None and sorted(got["id"]) == [1, 2, 3, 4, 5]
    assert got["count"].isna().sum() == 1 and got["count"].dtype == "float64"  # as pandas-on-Spark gives it


def test_other_frames_keep_pandas_on_spark_path(table):
    for name, frame in not_plain(table).items():
        assert not driver_collect.is_plain(frame), name
        assert_frame_equal(driver_collect.collect(frame), frame.to_pandas(), obj=name)
    assert_series_equal(driver_collect.collect(table["project"]), table["project"].to_pandas())


def test_spark_frames_collect_with_topandas(spark, table):
    frame = table.spark.frame()
    assert_frame_equal(driver_collect.collect(frame), frame.toPandas())


def test_collect_splits_scans_finer_and_restores_the_setting(spark, table):
    key = driver_collect.PARTITION_BYTES_KEY
    before = spark.conf.get(key)
    with session_conf(spark, {key: "1m"}):
        assert spark.conf.get(key) == "1m"
    assert spark.conf.get(key) == before
    with pytest.raises(RuntimeError), session_conf(spark, {key: "1m"}):
        raise RuntimeError("the collect failed")
    assert spark.conf.get(key) == before
    spark.conf.unset(key)
    default = spark.conf.get(key)
    try:
        with session_conf(spark, {key: "1m"}):
            pass
        assert spark.conf.get(key) == default  # unset before, unset after
    finally:
        spark.conf.set(key, before)
