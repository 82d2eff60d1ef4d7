"""Hand-off to pandas-on-Spark and pandas: equal to what pyarrow reads, quiet, and guarded against big collects."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import warnings
from urllib.parse import urlparse

import pandas as pd
import pyarrow.parquet as pq
import pytest
from pandas.testing import assert_frame_equal, assert_series_equal

from conftest import write
from s3spark import handoff
from s3spark.errors import UserError
from s3spark.reader import CsvFormat

# pyspark.pandas as the hand-off module imports it (after setting PYARROW_IGNORE_TIMEZONE), as a notebook should.
ps = handoff.ps

# pyspark's own DeprecationWarnings (distutils LooseVersion, np.character), thousands per run, none ours:
# Python hides them outside __main__ anyway. Everything else still fails or shows.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark")

SCHEMA = "id BIGINT, project STRING, count INT, share DOUBLE, seen BOOLEAN, day DATE"
ROWS = [
    (1, "en", 5, 0.5, True, datetime.date(2024, 1, 1)),
    (2, "de", None, 1.25, False, datetime.date(2024, 1, 2)),
    (3, "fr", 7, None, None, None),
    (4, None, 1, 3.0, True, datetime.date(2024, 2, 29)),
]
# Python hides these categories unless they are raised by __main__ (a notebook's own code); a notebook
# shows every other warning. DeprecationWarnings inside pyspark (its distutils LooseVersion) are not ours.
HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def shown_in_a_notebook(records) -> list[str]:
    return [
        f"{r.category.__name__}: {r.message} ({r.filename}:{r.lineno})"
        for r in records
        if not (issubclass(r.category, HIDDEN_BY_DEFAULT) and r.filename != __file__)
    ]


@pytest.fixture(scope="module")
def parquet_table(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("handoff") / "table"
    spark.createDataFrame(ROWS, SCHEMA).repartition(2).write.parquet(str(path))
    return path


def pyarrow_frame(source) -> pd.DataFrame:
    """The same Parquet as pandas, read by pyarrow alone (no Spark)."""
    return pq.read_table(source).to_pandas()


def by_id(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("id").reset_index(drop=True)


def test_import_sets_pyarrow_timezone_and_is_silent():
    """A fresh interpreter, as a notebook kernel is: importing the hand-off module prints no warning at all."""
    env = {k: v for k, v in os.environ.items() if k != "PYARROW_IGNORE_TIMEZONE"}
    code = (
        "import os, warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    import s3spark.handoff\n"
        "print(os.environ['PYARROW_IGNORE_TIMEZONE'], len(seen), [str(w.message) for w in seen])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1 0 []"
    assert done.stderr == ""


def test_read_and_collect_show_no_warnings(spark, parquet_table, recwarn):
    frame = handoff.read_table(str(parquet_table))
    assert isinstance(frame, ps.DataFrame)
    total = handoff.to_pandas(frame.groupby("project").agg({"count": "sum"})["count"])
    # Spark semantics: a group whose values are all null sums to null (pandas would say 0).
    assert total.dropna().to_dict() == {"en": 5, "fr": 7}
    assert pd.isna(total["de"])
    assert handoff.to_pandas(frame).shape == (4, 6)
    assert ps.get_option("compute.default_index_type") == "distributed"
    assert shown_in_a_notebook(recwarn.list) == []


def test_the_avoided_advice_is_real(spark, parquet_table):
    """Control: pandas-on-Spark's own reader and to_pandas do print advice; the hand-off path avoids it."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ps.read_parquet(str(parquet_table)).to_pandas()
    assert any("default index" in m for m in shown_in_a_notebook(seen))
    assert any("`to_pandas` loads all data" in m for m in shown_in_a_notebook(seen))


def test_parquet_hand_off_equals_pyarrow(spark, parquet_table):
    ours = by_id(handoff.to_pandas(handoff.read_table(str(parquet_table))))
    assert_frame_equal(ours, by_id(pyarrow_frame(str(parquet_table))))


def test_s3a_parquet_hand_off_equals_pyarrow(spark, s3_server, bucket):
    from pyarrow import fs

    uri = f"s3a://{bucket}/tables/t"
    spark.createDataFrame(ROWS, SCHEMA).write.parquet(uri)
    store = fs.S3FileSystem(
        endpoint_override=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        region="us-east-1",
        scheme="http",
    )
    theirs = pq.read_table(f"{bucket}/tables/t", filesystem=store).to_pandas()
    ours = by_id(handoff.to_pandas(handoff.read_table(uri)))
    assert_frame_equal(ours, by_id(theirs))


def test_delta_hand_off_reads_the_current_version(spark, tmp_path):
    uri = str(tmp_path / "delta")
    spark.createDataFrame(ROWS, SCHEMA).write.format("delta").save(uri)
    spark.createDataFrame(ROWS[:2], SCHEMA).write.format("delta").mode("overwrite").save(uri)
    live = spark.read.format("delta").load(uri).inputFiles()
    assert len(live) < len(list((tmp_path / "delta").glob("*.parquet")))  # version 0's files are still there
    theirs = pq.ParquetDataset([urlparse(f).path for f in live]).read().to_pandas()
    ours = by_id(handoff.to_pandas(handoff.read_table(uri, "delta")))
    assert_frame_equal(ours, by_id(theirs))
    assert list(ours["id"]) == [1, 2]
    old = handoff.to_pandas(handoff.read_table(uri, "delta", version=0))
    assert sorted(old["id"]) == [1, 2, 3, 4]


def test_csv_hand_off_with_schema(spark, tmp_path):
    src = write(tmp_path / "in.csv", "en|Main_Page|5\nde|Start|1\n")
    frame = handoff.read_table(
        str(src), "csv", schema="project STRING, url STRING, count INT", csv=CsvFormat(delimiter="|", header=False)
    )
    got = by_url(handoff.to_pandas(frame))
    want = pd.DataFrame({"project": ["en", "de"], "url": ["Main_Page", "Start"], "count": [5, 1]})
    assert_frame_equal(got, want.astype({"count": "int32"}))


def by_url(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("url").reset_index(drop=True)


def test_csv_hand_off_bad_rows(spark, tmp_path):
    src = write(tmp_path / "in.csv", "en,A,5\nde,B,notanumber\n")
    schema, fmt = "project STRING, url STRING, count INT", CsvFormat(header=False)
    dropped = handoff.read_table(str(src), "csv", schema=schema, csv=fmt, on_bad_rows="drop")
    assert list(handoff.to_pandas(dropped)["url"]) == ["A"]
    failing = handoff.read_table(str(src), "csv", schema=schema, csv=fmt)
    with pytest.raises(Exception, match="de,B,notanumber"):  # the default: a malformed row fails, named
        handoff.to_pandas(failing)
    with pytest.raises(UserError, match="needs schema="):
        handoff.read_table(str(src), "csv")


def test_read_errors_are_one_line(spark, tmp_path, parquet_table):
    with pytest.raises(UserError, match=r"^table not found: .*nope; check the path"):
        handoff.read_table(str(tmp_path / "nope"))
    with pytest.raises(UserError, match=r"^not a Delta table \(no _delta_log\)"):
        handoff.read_table(str(parquet_table), "delta")
    with pytest.raises(UserError, match="unknown format 'orc'"):
        handoff.read_table(str(parquet_table), "orc")


# --- the to_pandas guard --------------------------------------------------------------------------------


def test_guard_refuses_too_many_rows(spark):
    frame = spark.range(5000).pandas_api()
    with pytest.raises(UserError) as refused:
        handoff.to_pandas(frame, max_rows=4000)
    assert str(refused.value).startswith(
        "to_pandas refused: more than 4,000 rows would be collected into the driver's memory (the limit, set by "
        "max_rows= or $S3SPARK_TO_PANDAS_MAX_ROWS; 0 for none)"
    )
    got = handoff.to_pandas(frame, max_rows=5000)
    assert sorted(got["id"]) == list(range(5000))


def test_guard_refuses_too_many_bytes(spark):
    frame = spark.range(5000).selectExpr("id", "repeat('x', 200) AS text")
    with pytest.raises(UserError, match=r"to_pandas refused: 5,000 rows need about .* MiB as pandas .* over the limit"):
        handoff.to_pandas(frame, max_bytes="256k")
    assert len(handoff.to_pandas(frame, max_bytes="64m")) == 5000


def test_guard_small_results_pass_under_limits(spark):
    frame = spark.range(10).pandas_api()
    assert_series_equal(
        handoff.to_pandas(frame["id"], max_rows=10).sort_values().reset_index(drop=True),
        pd.Series(range(10), name="id"),
    )
    with pytest.raises(UserError, match="more than 9 rows"):
        handoff.to_pandas(frame, max_rows=9)


def test_guard_limits_from_the_environment(spark, monkeypatch):
    frame = spark.range(20).pandas_api()
    monkeypatch.setenv("S3SPARK_TO_PANDAS_MAX_ROWS", "5")
    with pytest.raises(UserError, match="more than 5 rows"):
        handoff.to_pandas(frame)
    assert len(handoff.to_pandas(frame, max_rows=0)) == 20  # an argument wins; 0 turns the limit off
    monkeypatch.setenv("S3SPARK_TO_PANDAS_MAX_ROWS", "0")
    monkeypatch.setenv("S3SPARK_TO_PANDAS_MAX_BYTES", "10")
    with pytest.raises(UserError, match=r"over the limit of 10 B \(set by max_bytes= or \$S3SPARK_TO_PANDAS_MAX_BYTES"):
        handoff.to_pandas(frame)
    monkeypatch.setenv("S3SPARK_TO_PANDAS_MAX_BYTES", "lots")
    with pytest.raises(UserError, match="S3SPARK_TO_PANDAS_MAX_BYTES: expected a size such as 512m or 2g, got 'lots'"):
        handoff.to_pandas(frame)


def jobs_run_by(spark, action) -> int:
    """How many Spark jobs ``action`` starts."""
    group = f"count-jobs-{id(action)}"
    spark.sparkContext.setJobGroup(group, "counting jobs")
    try:
        action()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def test_guard_costs_jobs_only_when_a_limit_is_on(spark):
    frame = spark.range(0, 5000, numPartitions=2).selectExpr("id", "CAST(id AS STRING) AS text").pandas_api()
    results = {}
    counts = {
        "limits off": jobs_run_by(
            spark, lambda: results.setdefault("off", handoff.to_pandas(frame, max_rows=0, max_bytes=0))
        ),
        "limits on": jobs_run_by(spark, lambda: results.setdefault("on", handoff.to_pandas(frame, max_rows=10**6))),
    }
    assert counts["limits off"] == 1 and counts["limits on"] >= 3  # sample (a limit may take two), count, collect
    assert_frame_equal(results["off"], results["on"])
    assert sorted(results["off"]["id"]) == list(range(5000))
