"""csv_to_parquet --format delta: round trips (local and s3a), history versions, --replace-where, refusals, and
the multi-cluster LogStore snippet that is not loaded by default."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from delta.tables import DeltaTable

from conftest import write
from s3spark import profiles
from s3spark.errors import UserError
from s3spark.paths import PROFILE_DIR

SCHEMA = "project STRING, url STRING, count INT, bytes BIGINT"
ROWS = [("en", "A", 1, 10), ("en", "B", 5, 50), ("de", "C", 1, 20), ("fr", "D", 3, 30)]
SNIPPET = PROFILE_DIR / "snippets" / "delta-multicluster.conf"


def lines(rows) -> str:
    return "".join(f"{p} {u} {c} {b}\n" for p, u, c, b in rows)


@pytest.fixture
def pageviews(tmp_path):
    return write(tmp_path / "in" / "pv", lines(ROWS))


def convert(run_job, src, out, *extra):
    return run_job(
        "csv_to_parquet",
        *("--input", str(src), "--schema", SCHEMA, "--delimiter", " ", "--no-header"),
        *("--output", str(out), "--format", "delta"),
        *extra,
    )


def expected(spark, rows=ROWS):
    return spark.createDataFrame(rows, SCHEMA)


def history(spark, uri):
    return DeltaTable.forPath(spark, str(uri)).history().orderBy("version").collect()


def active_files(spark, uri, where="true"):
    return sorted(spark.read.format("delta").load(str(uri)).where(where).inputFiles())


def test_local_round_trip_with_version_and_codec(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "table"
    result = convert(run_job, pageviews, out, "--partition-by", "project", "--compression", "zstd")
    assert result.code == 0, result.stderr
    assert (out / "_delta_log" / "00000000000000000000.json").is_file()
    assert_df_equality(
        spark.read.format("delta").load(str(out)), expected(spark), ignore_row_order=True, ignore_column_order=True
    )
    s = result.summary
    assert s["table_version"] == 0
    assert (s["rows_read"], s["rows_written"]) == (4, 4)
    commit = history(spark, out)[-1]
    assert s["bytes_written"] == int(commit["operationMetrics"]["numOutputBytes"]) > 0
    assert "Delta table version 0" in result.stderr
    part = next((out / "project=en").glob("*.parquet"))
    assert pq.ParquetFile(part).metadata.row_group(0).column(0).compression == "ZSTD"


def test_parquet_summary_has_no_table_version(run_job, pageviews, tmp_path):
    result = convert(run_job, pageviews, tmp_path / "pq", "--format", "parquet")
    assert result.code == 0, result.stderr
    assert "table_version" not in result.summary


def test_s3a_round_trip_history_and_no_committer_leftovers(spark, run_job, s3, bucket, pageviews):
    """A real Delta write through s3a with base.conf's magic committer settings in force."""
    table = f"s3a://{bucket}/lake/pageviews"
    assert spark.conf.get("spark.hadoop.fs.s3a.committer.name") == "magic"
    first = convert(run_job, pageviews, table, "--partition-by", "project")
    assert first.code == 0, first.stderr
    second = convert(run_job, pageviews, table, "--mode", "append")
    assert second.code == 0, second.stderr
    assert (first.summary["table_version"], second.summary["table_version"]) == (0, 1)
    assert_df_equality(
        spark.read.format("delta").load(table),
        expected(spark, ROWS + ROWS),
        ignore_row_order=True,
        ignore_column_order=True,
    )
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert "lake/pageviews/_delta_log/00000000000000000001.json" in keys
    assert not [k for k in keys if "__magic" in k or k.endswith(".pending") or "_temporary" in k]
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads")
    shown = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").orderBy("version").collect()
    assert [(r["version"], r["operation"], r["operationParameters"]["mode"]) for r in shown] == [
        (0, "WRITE", "ErrorIfExists"),
        (1, "WRITE", "Append"),
    ]


def test_modes_make_versions(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "table"
    assert convert(run_job, pageviews, out).summary["table_version"] == 0
    again = convert(run_job, pageviews, out)
    assert again.code == 2
    assert f"error: output exists: {out}; pass --mode overwrite" in again.stderr
    assert convert(run_job, pageviews, out, "--mode", "append").summary["table_version"] == 1
    assert spark.read.format("delta").load(str(out)).count() == 8
    overwrite = convert(run_job, pageviews, out, "--mode", "overwrite", "--filter", "count > 1")
    assert overwrite.summary["table_version"] == 2
    assert_df_equality(
        spark.read.format("delta").load(str(out)), expected(spark, [r for r in ROWS if r[2] > 1]), ignore_row_order=True
    )
    assert [(h["version"], h["operationParameters"]["mode"]) for h in history(spark, out)] == [
        (0, "ErrorIfExists"),
        (1, "Append"),
        (2, "Overwrite"),
    ]
    # Time travel still sees version 1.
    assert spark.read.format("delta").option("versionAsOf", 1).load(str(out)).count() == 8


def test_replace_where_rewrites_only_its_range(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "table"
    assert convert(run_job, pageviews, out, "--partition-by", "project").code == 0
    others_before = active_files(spark, out, "project != 'en'")
    other_bytes = {f: (tmp_path / f.split(str(tmp_path) + "/", 1)[1]).read_bytes() for f in others_before}
    new_en = [("en", "X", 7, 70), ("en", "Y", 8, 80), ("en", "Z", 9, 90)]
    # The new batch also holds a de row: --filter keeps the run inside the replaced range.
    batch = write(tmp_path / "in2" / "pv", lines([*new_en, ("de", "NEW", 1, 1)]))
    result = convert(
        run_job,
        batch,
        out,
        "--filter",
        "project = 'en'",
        "--replace-where",
        "project = 'en'",
        "--partition-by",
        "project",
    )
    assert result.code == 0, result.stderr
    assert result.summary["table_version"] == 1
    assert (result.summary["rows_written"], result.summary["rows_filtered_out"]) == (3, 1)
    table = spark.read.format("delta").load(str(out))
    assert_df_equality(table, expected(spark, [r for r in ROWS if r[0] != "en"] + new_en), ignore_row_order=True)
    assert active_files(spark, out, "project != 'en'") == others_before
    assert {f: (tmp_path / f.split(str(tmp_path) + "/", 1)[1]).read_bytes() for f in others_before} == other_bytes
    last = history(spark, out)[-1]
    assert last["operation"] == "WRITE"
    assert last["operationParameters"]["mode"] == "Overwrite"
    assert last["operationParameters"]["predicate"] == "project = 'en'"
    assert int(last["operationMetrics"]["numRemovedFiles"]) >= 1


def test_replace_where_refuses_rows_outside_the_predicate(spark, run_job, pageviews, tmp_path):
    out = tmp_path / "table"
    assert convert(run_job, pageviews, out, "--partition-by", "project").code == 0
    batch = write(tmp_path / "in2" / "pv", lines([("en", "X", 7, 70), ("de", "NEW", 1, 1)]))
    result = convert(run_job, batch, out, "--replace-where", "project = 'en'")
    assert result.code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: --replace-where \"project = 'en'\": the run would write rows outside that predicate, and Delta "
        "refuses them (nothing was committed); add --filter with the same condition, or widen the predicate"
    ]
    assert result.summary["status"] == "failed"
    assert [h["version"] for h in history(spark, out)] == [0]
    assert_df_equality(spark.read.format("delta").load(str(out)), expected(spark), ignore_row_order=True)


@pytest.mark.parametrize(
    "extra,message",
    [
        (
            ("--format", "parquet"),
            "error: --replace-where needs --format delta (Delta's replaceWhere); parquet has no atomic range rewrite",
        ),
        (("--mode", "append"), "error: --replace-where overwrites the matching rows: leave out --mode append"),
    ],
)
def test_replace_where_refusals_before_any_work(run_job, pageviews, tmp_path, extra, message):
    out = tmp_path / "out"
    result = convert(run_job, pageviews, out, "--replace-where", "project = 'en'", *extra)
    assert result.code == 2
    assert message in result.stderr
    assert not out.exists()


def test_replace_where_bad_predicate(run_job, pageviews, tmp_path):
    out = tmp_path / "table"
    assert convert(run_job, pageviews, out).code == 0
    result = convert(run_job, pageviews, out, "--replace-where", "nosuch = 1")
    assert result.code == 2
    assert "error: bad --replace-where 'nosuch = 1': " in result.stderr
    assert "nosuch" in result.stderr.split("error: ", 1)[1]


def test_delta_and_parquet_do_not_overwrite_each_other(run_job, pageviews, tmp_path):
    parquet_dir, delta_dir = tmp_path / "pq", tmp_path / "delta"
    assert convert(run_job, pageviews, parquet_dir, "--format", "parquet").code == 0
    assert convert(run_job, pageviews, delta_dir).code == 0
    onto_parquet = convert(run_job, pageviews, parquet_dir, "--mode", "overwrite")
    assert onto_parquet.code == 2
    assert f"error: output exists and is not a Delta table: {parquet_dir}; " in onto_parquet.stderr
    onto_delta = convert(run_job, pageviews, delta_dir, "--format", "parquet", "--mode", "append")
    assert onto_delta.code == 2
    assert f"error: output is a Delta table: {delta_dir}; pass --format delta" in onto_delta.stderr
    assert (delta_dir / "_delta_log").is_dir()


# --- the multi-cluster snippet ------------------------------------------------------------------------


def test_snippet_is_not_a_profile_and_not_loaded_by_default(capsys):
    assert SNIPPET.is_file()
    assert "snippets" not in profiles.available_profiles()
    assert "delta-multicluster" not in profiles.available_profiles()
    assert profiles.main(["list"]) == 0
    listed = capsys.readouterr().out
    assert "minio" in listed and "snippets" not in listed
    for name in ["local", "minio", "aws"]:
        loaded = profiles.load_profile(name, environ={"DELTA_S3_DYNAMODB_JAR": "/x.jar"})
        assert not [k for k in loaded.properties if "logStore" in k or "S3DynamoDBLogStore" in k]
    base = profiles.load_profile("local", environ={}).properties
    assert base["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    assert base["spark.sql.catalog.spark_catalog"] == "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def test_snippet_loads_as_a_layer(tmp_path):
    jar = tmp_path / "delta-storage-s3-dynamodb-3.3.2.jar"
    env = {"DELTA_S3_DYNAMODB_JAR": str(jar), "DELTA_DYNAMODB_TABLE": "delta_log_prod", "AWS_REGION": "eu-west-1"}
    spec = f"aws,{SNIPPET}"
    loaded = profiles.load_profile(spec, environ=env).properties
    assert loaded["spark.delta.logStore.s3a.impl"] == "io.delta.storage.S3DynamoDBLogStore"
    assert loaded["spark.io.delta.storage.S3DynamoDBLogStore.ddb.tableName"] == "delta_log_prod"
    assert loaded["spark.io.delta.storage.S3DynamoDBLogStore.ddb.region"] == "eu-west-1"
    assert loaded["spark.jars"] == str(jar)
    with pytest.raises(UserError, match="DELTA_S3_DYNAMODB_JAR is not set"):
        profiles.load_profile(spec, environ={})
