"""The library's session() applies the same profile, jars and logging as spark-submit.sh."""

from __future__ import annotations

import os

from s3spark import expressions
from s3spark.session import PROFILE_KEY, spark_properties


def test_profile_reaches_spark_and_hadoop(spark):
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    assert spark.conf.get(PROFILE_KEY) == "minio"
    assert hadoop.get("fs.s3a.committer.name") == "magic"
    assert hadoop.get("fs.s3a.connection.maximum") == "64"
    assert spark.conf.get("spark.sql.sources.commitProtocolClass").endswith("PathOutputCommitProtocol")
    # local[2]: the pinned jars are on the driver's class path (no per-executor copy through spark.jars)
    assert "hadoop-aws-3.3.4.jar" in spark.sparkContext.getConf().get("spark.driver.extraClassPath")


def test_s3a_scheme_resolves_to_the_s3a_filesystem(spark):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path("s3a://any-bucket/")
    filesystem = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    assert filesystem.getClass().getName() == "org.apache.hadoop.fs.s3a.S3AFileSystem"


def test_properties_add_logging_and_jars_to_profile():
    props = spark_properties("minio")
    assert props[PROFILE_KEY] == "minio"
    assert props["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert "-Dlog4j2.configurationFile=file:" in props["spark.driver.extraJavaOptions"]
    assert "-Duser.timezone=UTC" in props["spark.driver.extraJavaOptions"]
    # The five pinned jars and our own expressions' jar (where there is a javac to build it), on the class path
    # for local masters.
    own = expressions.ensure_jar()
    assert (own is not None) == (expressions.find_javac() is not None)
    jars = 5 + (own is not None)
    assert props["spark.jars"].count(".jar") == jars and (own is None or props["spark.jars"].endswith(f",{own}"))
    local = spark_properties("minio", master="local[2]")
    assert "spark.jars" not in local and local["spark.driver.extraClassPath"].count(".jar") == jars
    assert own is None or str(own) in local["spark.driver.extraClassPath"].split(os.pathsep)


def test_local_masters_get_direct_task_results(tmp_path):
    local = spark_properties("minio", master="local[2]")
    assert local["spark.task.maxDirectResultSize"] == "1g" and local["spark.rpc.message.maxSize"] == "1024"
    for master in (None, "spark://host:7077", "yarn"):
        assert "spark.task.maxDirectResultSize" not in spark_properties("minio", master=master)
    override = tmp_path / "mine.conf"
    override.write_text("spark.task.maxDirectResultSize 64m\n")
    assert spark_properties(f"minio,{override}", master="local[*]")["spark.task.maxDirectResultSize"] == "64m"


def test_running_session_has_the_local_master_settings(spark):
    assert spark.sparkContext.getConf().get("spark.task.maxDirectResultSize") == "1g"


def test_a_job_closes_the_gateway_of_the_session_it_started_and_only_that(monkeypatch):
    """The JVM then exits at once after the job (README, Tuning); a session already running is left alone."""
    import argparse
    from types import SimpleNamespace

    from s3spark import cli

    closed = []
    gateway = SimpleNamespace(shutdown=lambda: closed.append(True))
    started = SimpleNamespace(sparkContext=SimpleNamespace(_gateway=gateway), conf=SimpleNamespace(get=lambda *a: "x"))
    monkeypatch.setattr(cli, "session", lambda app_name: started)
    args = argparse.Namespace(verbose=False, summary_json=None)
    for running, expected in ((None, [True]), (object(), [])):
        closed.clear()
        monkeypatch.setattr(cli.SparkSession, "getActiveSession", staticmethod(lambda running=running: running))
        assert cli.run_job("job", args, lambda spark, summary: None) == 0
        assert closed == expected


def test_writing_the_properties_for_spark_submit_does_not_import_pyspark(tmp_path):
    """spark-submit.sh runs this before every job: without pyspark's import it takes 0.06 s instead of 0.2 s."""
    import subprocess
    import sys

    out = tmp_path / "job.properties"
    check = (
        "import sys; from s3spark.session import main; status = main(['--profile', 'minio', '--write', sys.argv[1]]); "
        "print(status, 'pyspark' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", check, str(out)], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["0", "False"]
    assert f"{PROFILE_KEY}=minio" in out.read_text()
