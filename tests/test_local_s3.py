"""The local MinIO server: Python API over HTTP and HTTPS, and the scripts/local-s3 command.

These start real MinIO servers; the first run builds MinIO with Go (~4 min), later runs reuse it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import SSLError

from s3spark import local_s3, processes
from s3spark.errors import UserError
from s3spark.local_s3 import LocalS3, ensure_minio
from s3spark.paths import REPO_ROOT

CLI = REPO_ROOT / "scripts" / "local-s3"
CRED_VARS = ("MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


@pytest.fixture(scope="session", autouse=True)
def minio_binary() -> Path:
    """Build MinIO once if it is not in the cache yet (no silent skip)."""
    return ensure_minio()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials from the environment: servers get random ones."""
    for var in CRED_VARS:
        monkeypatch.delenv(var, raising=False)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_http_server_roundtrip_and_stop(tmp_path: Path) -> None:
    """Start over HTTP, create a bucket, put/get an object; stop frees the port and ends the process."""
    s3 = LocalS3.start(tmp_path / "data", bucket="landing")
    try:
        assert s3.endpoint == f"http://127.0.0.1:{s3.port}" and s3.console_port != s3.port
        s3.create_bucket("extra")
        s3.create_bucket("extra")  # idempotent
        client = s3.client()
        assert {"landing", "extra"} <= {b["Name"] for b in client.list_buckets()["Buckets"]}
        client.put_object(Bucket="landing", Key="in/a.csv", Body=b"id,name\n1,x\n")
        assert client.get_object(Bucket="landing", Key="in/a.csv")["Body"].read() == b"id,name\n1,x\n"
        env = s3.env()
        assert env["S3_ENDPOINT"] == s3.endpoint and env["AWS_REGION"] == "us-east-1"
        assert "S3_TRUSTSTORE" not in env and s3.secret_key not in repr(s3)
        assert (tmp_path / "minio.log").is_file()
    finally:
        s3.stop()
    assert not _accepts(s3.port)
    assert _gone(s3.pid)
    s3.stop()  # a second stop is harmless


def test_tls_server_needs_our_ca(tmp_path: Path) -> None:
    """HTTPS: trusted with ca.crt, rejected with the default CA bundle; the JVM truststore holds the CA."""
    with LocalS3.start(tmp_path / "data", tls=True) as s3:
        assert s3.endpoint.startswith("https://127.0.0.1:") and s3.ca_cert and s3.truststore
        s3.client().put_object(Bucket="s3spark", Key="k", Body=b"v")
        own = boto3.client(
            "s3",
            endpoint_url=s3.endpoint,
            aws_access_key_id=s3.access_key,
            aws_secret_access_key=s3.secret_key,
            region_name="us-east-1",
            verify=str(s3.ca_cert),
            config=Config(s3={"addressing_style": "path"}),
        )
        assert own.get_object(Bucket="s3spark", Key="k")["Body"].read() == b"v"
        default = boto3.client(
            "s3",
            endpoint_url=s3.endpoint,
            aws_access_key_id=s3.access_key,
            aws_secret_access_key=s3.secret_key,
            region_name="us-east-1",
            verify=True,
            config=Config(retries={"max_attempts": 1}),
        )
        with pytest.raises(SSLError):
            default.list_buckets()
        env = s3.env()
        assert env["S3_TRUSTSTORE"] == str(s3.truststore) and env["S3_TRUSTSTORE_PASSWORD"] == "changeit"
        listing = subprocess.run(
            ["keytool", "-list", "-keystore", str(s3.truststore), "-storepass", "changeit"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "s3spark-local-ca" in listing and "trustedCertEntry" in listing
        assert stat.S_IMODE((s3.ca_cert.parent / "private.key").stat().st_mode) == 0o600
        assert not (s3.ca_cert.parent / "ca.key").exists()


def test_credentials_from_env_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """MINIO_ROOT_* wins over AWS_*; random keys otherwise; too-short secrets are a UserError."""
    assert local_s3.resolve_credentials() != local_s3.resolve_credentials()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "awskey")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "awssecret")
    assert local_s3.resolve_credentials() == ("awskey", "awssecret")
    monkeypatch.setenv("MINIO_ROOT_USER", "minio")
    monkeypatch.setenv("MINIO_ROOT_PASSWORD", "short")
    with pytest.raises(UserError, match="at least 8"):
        local_s3.resolve_credentials()


def test_busy_port_is_a_user_error(tmp_path: Path) -> None:
    """An explicit --port that is taken fails with a clear message, before starting anything."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(UserError, match="already in use"):
            LocalS3.start(tmp_path / "data", port=busy.getsockname()[1])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterator[Path]:
    """A CLI state dir whose server is stopped whatever happens."""
    d = tmp_path / "state"
    yield d
    _cli("stop", "--dir", str(d))


def _exports(text: str) -> dict[str, str]:
    return dict(line.removeprefix("export ").split("=", 1) for line in text.splitlines())


def test_cli_start_status_env_stop(state_dir: Path) -> None:
    """`start` detaches and prints exports, is idempotent; `status` 0/1; `env`; `stop` by recorded PID."""
    started = _cli("start", "--dir", str(state_dir), "--bucket", "cli")
    assert started.returncode == 0, started.stderr
    exports = _exports(started.stdout)
    endpoint, port = exports["S3_ENDPOINT"], int(exports["S3_ENDPOINT"].rsplit(":", 1)[1])
    assert endpoint.startswith("http://127.0.0.1:") and exports["AWS_SECRET_ACCESS_KEY"]
    assert exports["AWS_SECRET_ACCESS_KEY"] not in started.stderr

    creds = state_dir / "credentials.json"
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600
    state = json.loads((state_dir / "state.json").read_text())
    assert state["endpoint"] == endpoint and "secret_key" not in state
    pid = int((state_dir / "minio.pid").read_text())

    status = _cli("status", "--dir", str(state_dir))
    assert status.returncode == 0 and endpoint in status.stdout
    assert exports["AWS_SECRET_ACCESS_KEY"] not in status.stdout + status.stderr
    env = _cli("env", "--dir", str(state_dir))
    assert env.returncode == 0 and f"export S3_ENDPOINT={endpoint}" in env.stdout
    again = _cli("start", "--dir", str(state_dir))
    assert again.returncode == 0 and "already running" in again.stderr and _exports(again.stdout) == exports

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=exports["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=exports["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )
    assert "cli" in {b["Name"] for b in client.list_buckets()["Buckets"]}

    stopped = _cli("stop", "--dir", str(state_dir))
    assert stopped.returncode == 0 and "stopped" in stopped.stderr
    assert not _accepts(port) and not (state_dir / "minio.pid").exists()
    assert _cli("status", "--dir", str(state_dir)).returncode == 1
    assert _cli("env", "--dir", str(state_dir)).returncode == 2
    assert not processes.alive(pid)  # detached: its parent is init, which may leave a zombie


def test_cli_stop_never_kills_a_foreign_pid(state_dir: Path) -> None:
    """A pid file pointing at some other process (PID reuse, stale state) is left alone."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        state_dir.mkdir()
        (state_dir / "minio.pid").write_text(f"{other.pid}\n")
        (state_dir / "credentials.json").write_text('{"access_key": "abc", "secret_key": "abcdefgh"}')
        (state_dir / "state.json").write_text(
            json.dumps(
                {
                    "endpoint": "http://127.0.0.1:9",
                    "port": 9,
                    "console_port": 10,
                    "data_dir": "/x",
                    "log_file": "/x.log",
                }
            )
        )
        assert _cli("status", "--dir", str(state_dir)).returncode == 1
        assert _cli("stop", "--dir", str(state_dir)).returncode == 0
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_build_errors_are_user_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Go: say how to get it. A failing `go install`: name go and the build log."""
    monkeypatch.setenv("S3SPARK_CACHE", str(tmp_path / "cache"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(UserError, match=r"`go` is not on PATH.*golang-go"):
        ensure_minio()
    fake_go = bin_dir / "go"
    fake_go.write_text("#!/bin/sh\necho 'go: module lookup disabled' >&2\nexit 1\n")
    fake_go.chmod(0o755)
    with pytest.raises(UserError, match=r"go install.*build\.log.*module lookup disabled"):
        ensure_minio()
    assert not local_s3.minio_path().exists()
