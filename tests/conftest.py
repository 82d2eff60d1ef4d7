"""Shared fixtures: one local[2] SparkSession for the whole run, and helpers to run jobs as users do."""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from s3spark.local_s3 import LocalS3
from s3spark.paths import REPO_ROOT
from s3spark.session import session

# A distinctive secret, so tests can prove it never shows up in output, logs or files.
TEST_SECRET = "S3SPARK-TEST-SECRET-" + secrets.token_hex(8)

TEST_CONF = {
    "spark.ui.enabled": "false",  # no web UI: faster start, no port clashes
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.databricks.delta.snapshotPartitions": "2",  # Delta state of tiny test tables: 2 tasks, not 50
}


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A real MinIO on 127.0.0.1 (free ports) for the whole run; its credentials and endpoint go into the
    environment, where s3a's default credential chain and the minio profile find them."""
    base = tmp_path_factory.mktemp("minio")
    server = LocalS3.start(base / "data", bucket=None, access_key="s3spark-test", secret_key=TEST_SECRET)
    os.environ.update(server.env())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(s3_server):
    """The one SparkSession of the run: the minio profile pointed at the test server, local[2]."""
    spark = session(profile="minio", master="local[2]", app_name="s3spark-tests", conf=TEST_CONF)
    yield spark
    spark.stop()


@pytest.fixture
def s3(s3_server):
    """A boto3 client for the test server."""
    return s3_server.client()


@pytest.fixture
def bucket(s3_server) -> str:
    """A fresh, empty bucket for one test."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    s3_server.create_bucket(name)
    return name


@dataclass
class JobResult:
    code: int
    summary: dict
    stdout: str
    stderr: str


def _load_job(name: str):
    spec = importlib.util.spec_from_file_location(f"job_{name}", REPO_ROOT / "jobs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def run_job(spark, capsys):
    """Run a job's main() in this process (sharing the test session); returns code, summary and output."""

    def run(name: str, *argv: str) -> JobResult:
        code = _load_job(name).main(list(argv))
        out, err = capsys.readouterr()
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return JobResult(code, json.loads(lines[-1]) if lines else {}, out, err)

    return run


def run_submit(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 300):
    """Run ./spark-submit.sh as a user does, in a subprocess."""
    # Not the test process's own gateway: a child pyspark would otherwise attach to this session's JVM.
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_GATEWAY", "SPARK_"))}
    full_env = {**inherited, **(env or {})}
    full_env.setdefault("S3SPARK_MASTER", "local[2]")
    return subprocess.run(
        [str(REPO_ROOT / "spark-submit.sh"), *args],
        cwd=cwd or REPO_ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path
