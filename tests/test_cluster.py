"""The same job and profile on a Spark standalone cluster (a master and two one-core workers on 127.0.0.1),
s3a:// to s3a:// on the local S3 server; and what ./spark-submit.sh hands to Kubernetes and YARN.

The cluster starts once for the module. Its workers get no AWS keys: the executors authenticate with the
keys that Spark copies from the driver's environment into the job's Hadoop configuration.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import subprocess
import zipfile
from datetime import date
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import Row

from conftest import TEST_SECRET, run_submit
from s3spark import cluster as cluster_mod
from s3spark import expressions
from s3spark.errors import UserError
from s3spark.jars import jars_cache
from s3spark.local_cluster import LocalCluster, master_json, save
from s3spark.paths import REPO_ROOT
from s3spark.processes import alive

NO_UI = ("--conf", "spark.ui.enabled=false")
LOCAL_CLUSTER = [str(REPO_ROOT / "scripts" / "local-cluster")]
SMALL_EXECUTORS = ("--executor-memory", "512m")
SCHEMA = "id INT, name STRING, amount DOUBLE, day DATE, country STRING"
VENV_PYTHON = Path(os.environ.get("S3SPARK_VENV") or REPO_ROOT / ".venv") / "bin" / "python"


@pytest.fixture(scope="module")
def cluster(s3_server, tmp_path_factory):
    """Two workers with one core and 1 GB each, started with the Python API; no AWS keys in their environment.

    It is recorded as `scripts/local-cluster start` records a cluster, and stopped with `scripts/local-cluster
    stop`, which ends the recorded processes by PID.
    """
    state_dir = tmp_path_factory.mktemp("cluster")
    with LocalCluster.start(state_dir, workers=2, cores=1, memory="1g", inherit_env=False) as running:
        save(running)
        yield running
        stopped = subprocess.run([*LOCAL_CLUSTER, "--dir", str(state_dir), "stop"], capture_output=True, text=True)
        assert stopped.returncode == 0 and "stopped" in stopped.stderr, stopped.stderr
        assert not [d.role for d in running.daemons if alive(d.pid)]


def on_cluster(cluster: LocalCluster, *args: str, env: dict | None = None, one_executor: bool = False):
    """./spark-submit.sh --master spark://... --profile minio; one_executor: use one of the two workers (faster)."""
    limit = ("--conf", "spark.cores.max=1") if one_executor else ()
    return run_submit(
        "--master", cluster.master_url, "--profile", "minio", *NO_UI, *SMALL_EXECUTORS, *limit, *args, env=env
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def summary_of(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def keys(s3, bucket: str, prefix: str = "") -> list[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def put_csv_files(s3, bucket: str, files: int = 3, rows: int = 700) -> list[Row]:
    """CSV files with a header, quoted commas and quotes, non-ASCII text and empty (null) fields."""
    expected = []
    countries = ["de", "fr", "us", "jp"]
    for f in range(files):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["id", "name", "amount", "day", "country"])
        for i in range(rows):
            n = f * rows + i
            name = None if n % 97 == 0 else f'Ümlaut "{n}", né' if n % 5 == 0 else f"name-{n}"
            amount = None if n % 89 == 0 else round(n * 1.25 - 300, 2)
            day = date(2024, 1 + n % 12, 1 + n % 28)
            country = countries[n % len(countries)]
            writer.writerow([n, "" if name is None else name, "" if amount is None else amount, day, country])
            expected.append(Row(id=n, name=name, amount=amount, day=day, country=country))
        s3.put_object(Bucket=bucket, Key=f"in/part-{f}.csv", Body=out.getvalue().encode())
    return expected


def test_conversion_on_the_cluster_writes_the_same_data_as_local(spark, run_job, s3, bucket, cluster):
    expected = put_csv_files(s3, bucket)
    job_args = ("--input", f"s3a://{bucket}/in/", "--schema", SCHEMA, "--partition-by", "country")

    local = run_job("csv_to_parquet", *job_args, "--output", f"s3a://{bucket}/local")
    assert local.code == 0, local.stderr
    assert spark.sparkContext.master == "local[2]"

    result = on_cluster(cluster, "jobs/csv_to_parquet.py", *job_args, "--output", f"s3a://{bucket}/cluster")
    assert result.returncode == 0, result.stderr
    summary = summary_of(result.stdout)
    assert summary["status"] == "ok" and summary["profile"] == "minio"
    for key in ("input_files", "rows_read", "rows_written", "rows_dropped", "rows_quarantined"):
        assert summary[key] == local.summary[key], key
    assert summary["rows_read"] == summary["rows_written"] == len(expected) == 2100

    # It ran on the cluster: the master lists the finished application.
    apps = master_json(cluster.webui_url)["completedapps"]
    assert any(app["name"] == "csv_to_parquet" and app["state"] == "FINISHED" for app in apps), apps

    from_cluster = spark.read.parquet(f"s3a://{bucket}/cluster")
    from_local = spark.read.parquet(f"s3a://{bucket}/local")
    assert_df_equality(from_cluster, from_local, ignore_row_order=True)
    wanted = spark.createDataFrame(expected, SCHEMA)
    assert_df_equality(from_cluster, wanted, ignore_row_order=True, ignore_nullable=True)
    partitions = {k.split("/")[1] for k in keys(s3, bucket, "cluster/") if "=" in k}
    assert partitions == {"country=de", "country=fr", "country=us", "country=jp"}
    assert json.loads(s3.get_object(Bucket=bucket, Key="cluster/_SUCCESS")["Body"].read())["committer"] == "magic"


def test_a_failure_on_the_cluster_is_the_same_one_line_error(run_job, s3, bucket, cluster):
    s3.put_object(Bucket=bucket, Key="bad/in.csv", Body=b"id,n\n1,2\nx,3\n")
    args = ("--input", f"s3a://{bucket}/bad/in.csv", "--schema", "id INT, n INT")

    local = run_job("csv_to_parquet", *args, "--output", f"s3a://{bucket}/out-local")
    assert local.code == 2
    assert len(error_lines(local.stderr)) == 1

    # The pinned jars already sit on these workers: the executors take them from there (no 290 MB copy).
    result = on_cluster(
        cluster,
        "jobs/csv_to_parquet.py",
        *args,
        "--output",
        f"s3a://{bucket}/out-cluster",
        env={"S3SPARK_NODE_JARS": str(jars_cache())},
        one_executor=True,
    )
    assert result.returncode == 2
    assert error_lines(result.stderr) == error_lines(local.stderr)
    assert error_lines(result.stderr)[0].startswith(f"error: malformed row in s3a://{bucket}/bad/in.csv: 'x,3';")
    assert "\tat " not in result.stderr and "Traceback" not in result.stderr
    assert summary_of(result.stdout)["status"] == "failed"
    assert keys(s3, bucket, "out-cluster") == []


PROBE = """
import json, sys
from s3spark.session import session

spark = session(app_name="probe")

def where(_):
    import sys, s3spark
    return [(sys.executable, s3spark.__file__)]

seen = spark.sparkContext.parallelize(range(4), 4).mapPartitions(where).distinct().collect()
print(json.dumps({"app": spark.sparkContext.applicationId, "executors": sorted(seen)}))
spark.stop()
"""


def test_executors_run_the_shipped_library_with_the_virtualenvs_python(tmp_path, cluster):
    job = tmp_path / "probe.py"
    job.write_text(PROBE)
    result = on_cluster(cluster, str(job), env={"S3SPARK_NODE_JARS": str(jars_cache())}, one_executor=True)
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    zipped = cluster_mod.library_zip()
    assert probe["executors"] == [[str(VENV_PYTHON), f"./{zipped.name}/s3spark/__init__.py"]]
    # The executor got the zip and no copy of the pinned jars (they came from S3SPARK_NODE_JARS); the jar of our
    # own expressions (a few KB, built on this machine where there is a javac) is shipped.
    own = expressions.ensure_jar(build=False)
    fetched = sorted(p.name for p in (cluster.state_dir / "work").glob(f"worker-*/{probe['app']}/*/*"))
    assert fetched == sorted([zipped.name, *([own.name] if own else []), "stderr", "stdout"])


# --- what is handed to other clusters (no cluster needed) -------------------------------------------


def test_library_zip_is_keyed_by_content(tmp_path):
    package = tmp_path / "src" / "s3spark"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("X = 1\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"junk")
    first = cluster_mod.library_zip(package, tmp_path / "out")
    again = cluster_mod.library_zip(package, tmp_path / "out2")
    assert first.name == again.name and first.read_bytes() == again.read_bytes()
    assert zipfile.ZipFile(first).namelist() == ["s3spark/__init__.py", "s3spark/mod.py"]
    (package / "mod.py").write_text("X = 2\n")
    changed = cluster_mod.library_zip(package, tmp_path / "out")
    assert changed != first and changed.name.startswith("s3spark-")
    assert zipfile.ZipFile(changed).read("s3spark/mod.py") == b"X = 2\n"


OWN_JAR = "s3spark-expressions-0123456789abcdef.jar"


def plan_for(master: str, *spark_args: str, env: dict | None = None, job: str | None = None):
    pinned = [str(jars_cache() / n) for n in ("hadoop-aws-3.3.4.jar", "aws-java-sdk-bundle-1.12.262.jar")]
    props = {
        "spark.jars": ",".join([*pinned, str(expressions.expressions_dir() / OWN_JAR)]),
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{REPO_ROOT}/conf/log4j2.properties",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{REPO_ROOT}/conf/log4j2.properties",
        "spark.s3spark.profile": "minio",
    }
    job = job or str(REPO_ROOT / "jobs" / "csv_to_parquet.py")
    return cluster_mod.prepare(master, props, job, str(VENV_PYTHON), list(spark_args), env=env or {})


def test_local_masters_need_no_shipping():
    for master in ("local", "local[2]", "local-cluster[2,1,1024]"):
        plan = plan_for(master, "--conf", "spark.ui.enabled=false")
        assert plan.kind == "local" and plan.spark_args == ["--conf", "spark.ui.enabled=false"]
        assert "spark.pyspark.python" not in plan.properties


def test_standalone_and_yarn_ship_the_zip_and_the_jars(tmp_path):
    for master, env in (("spark://h:7077", {}), ("yarn", {"HADOOP_CONF_DIR": str(tmp_path)})):
        plan = plan_for(master, "--py-files", "extra.py", "--conf", "spark.ui.enabled=false", env=env)
        assert plan.executor_python == str(VENV_PYTHON) == plan.properties["spark.pyspark.python"]
        assert plan.spark_args == [
            "--conf",
            "spark.ui.enabled=false",
            "--py-files",
            f"{cluster_mod.library_zip()},extra.py",
        ]
        own = expressions.expressions_dir() / OWN_JAR
        assert plan.properties["spark.jars"].endswith(f"aws-java-sdk-bundle-1.12.262.jar,{own}")
        assert "spark.executor.extraClassPath" not in plan.properties
    chosen = plan_for("spark://h:7077", env={"S3SPARK_EXECUTOR_PYTHON": "/opt/py/bin/python"})
    assert chosen.executor_python == "/opt/py/bin/python"


def test_jars_already_on_the_nodes_go_on_the_class_path():
    plan = plan_for("spark://h:7077", env={"S3SPARK_NODE_JARS": "/opt/jars"})
    # Only the pinned jars are on the nodes; the driver serves ours (built here, a few KB).
    assert plan.properties["spark.jars"] == str(expressions.expressions_dir() / OWN_JAR)
    assert plan.properties["spark.executor.extraClassPath"] == (
        "/opt/jars/hadoop-aws-3.3.4.jar:/opt/jars/aws-java-sdk-bundle-1.12.262.jar"
    )
    assert plan.properties["spark.driver.extraClassPath"].startswith(f"{jars_cache()}/hadoop-aws-3.3.4.jar:")


def test_kubernetes_takes_python_jars_and_library_from_the_image():
    image = ("--conf", "spark.kubernetes.container.image=registry.example/s3spark:1")
    client = plan_for("k8s://https://kube:6443", *image)
    assert client.executor_python == "/opt/s3spark/.venv/bin/python"
    assert client.properties["spark.executor.extraClassPath"].startswith("/opt/s3spark/cache/jars/hadoop-aws-3.3.4.jar")
    assert client.properties["spark.driver.extraClassPath"].startswith(str(jars_cache()))
    assert client.properties["spark.executor.extraJavaOptions"] == (
        "-Dlog4j2.configurationFile=file:/opt/s3spark/conf/log4j2.properties"
    )
    assert client.properties["spark.driver.extraJavaOptions"].endswith(f"{REPO_ROOT}/conf/log4j2.properties")
    assert "--py-files" in client.spark_args
    assert client.properties["spark.jars"] == str(expressions.expressions_dir() / OWN_JAR)  # the driver serves it

    cluster_mode = plan_for("k8s://https://kube:6443", "--deploy-mode", "cluster", *image)
    assert cluster_mode.job == "local:///opt/s3spark/jobs/csv_to_parquet.py"
    assert cluster_mode.properties["spark.pyspark.driver.python"] == "/opt/s3spark/.venv/bin/python"
    # The driver in the pod knows the profile is applied already (no second session setup with local[*]).
    assert cluster_mode.properties["spark.kubernetes.driverEnv.S3SPARK_SUBMITTED_PROFILE"] == "minio"
    assert cluster_mode.properties["spark.driver.extraClassPath"].startswith("/opt/s3spark/cache/jars/")
    assert cluster_mode.properties["spark.driver.extraJavaOptions"].endswith("/opt/s3spark/conf/log4j2.properties")
    assert "--py-files" not in cluster_mode.spark_args
    # A driver in a pod cannot fetch a file from this machine: the image built the same jar.
    assert cluster_mode.properties["spark.jars"] == f"local:///opt/s3spark/cache/expressions/{OWN_JAR}"


@pytest.mark.parametrize(
    ("master", "args", "env", "message"),
    [
        ("spark://h:7077", ["--deploy-mode", "cluster"], {}, "client mode only"),
        ("yarn", [], {}, "HADOOP_CONF_DIR"),
        ("k8s://https://kube:6443", [], {}, "spark.kubernetes.container.image"),
        ("mesos://h:5050", [], {}, "unknown --master"),
    ],
)
def test_cluster_setups_that_cannot_work_are_refused(master, args, env, message):
    with pytest.raises(UserError, match=message):
        plan_for(master, *args, env=env)


def test_dry_run_shows_the_kubernetes_submission_without_secrets(tmp_path):
    store = tmp_path / "truststore.p12"
    store.write_bytes(b"x")
    env = {"S3_ENDPOINT": "https://s3.internal", "S3_TRUSTSTORE": str(store), "S3_TRUSTSTORE_PASSWORD": TEST_SECRET}
    result = run_submit(
        "--dry-run",
        "--master",
        "k8s://https://kube.example:6443",
        "--deploy-mode",
        "cluster",
        "--conf",
        "spark.kubernetes.container.image=registry.example/s3spark:1",
        "--profile",
        "onprem",
        "jobs/csv_to_parquet.py",
        "--input",
        "s3a://raw/x/",
        "--output",
        "s3a://lake/x",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert TEST_SECRET not in result.stdout + result.stderr
    command = shlex.split(result.stdout.split("# command:\n", 1)[1])
    assert command[:2] == ["env", "PYSPARK_PYTHON=/opt/s3spark/.venv/bin/python"]
    assert Path(command[2]).name == "spark-submit"
    assert command[-5:] == [
        "local:///opt/s3spark/jobs/csv_to_parquet.py",
        "--input",
        "s3a://raw/x/",
        "--output",
        "s3a://lake/x",
    ]
    assert "spark.pyspark.python /opt/s3spark/.venv/bin/python" in result.stdout
    assert "kubernetes (cluster mode): the library is the image's copy" in result.stderr


def test_local_cluster_command_reports_checks_and_does_not_start_twice(cluster):
    cli = [*LOCAL_CLUSTER, "--dir", str(cluster.state_dir)]
    status = subprocess.run([*cli, "status"], capture_output=True, text=True)
    assert status.returncode == 0 and "2 of 2 worker(s) alive, each with 1 core(s) and 1024 MB" in status.stdout
    exports = f"export S3SPARK_MASTER={cluster.master_url}\n"
    assert subprocess.run([*cli, "env"], capture_output=True, text=True).stdout == exports
    again = subprocess.run([*cli, "start"], capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == exports and "already running" in again.stderr
    # The health checks of docker/docker-compose.yml: a master with its workers, and a worker.
    check = subprocess.run([*cli, "check", "--url", cluster.webui_url, "--workers", "2"], capture_output=True)
    assert check.returncode == 0
    too_many = subprocess.run([*cli, "check", "--url", cluster.webui_url, "--workers", "3"], capture_output=True)
    assert too_many.returncode == 1
    worker_ui = master_json(cluster.webui_url)["workers"][0]["webuiaddress"]
    worker = subprocess.run([*cli, "check", "--url", worker_ui], capture_output=True, text=True)
    assert worker.returncode == 0 and f"registered with {cluster.master_url}" in worker.stdout


def test_stop_leaves_alone_a_process_it_did_not_start(tmp_path):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        state = {"master_url": "spark://127.0.0.1:1", "webui_url": "http://127.0.0.1:1", "workers": 1}
        state |= {"cores": 1, "memory": "1g", "daemons": [{"role": "master", "pid": sleeper.pid, "log_file": "x"}]}
        (tmp_path / "cluster.json").write_text(json.dumps(state))
        stopped = subprocess.run([*LOCAL_CLUSTER, "--dir", str(tmp_path), "stop"], capture_output=True, text=True)
        assert stopped.returncode == 0 and "not running" in stopped.stderr
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()
