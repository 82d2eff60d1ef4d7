"""./spark-submit.sh --doctor, run as users run it, against the real local MinIO (HTTP and HTTPS)."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from conftest import TEST_SECRET, run_submit
from s3spark import doctor, expressions
from s3spark.local_s3 import LocalS3

CHECKS = [
    "java",
    "pyspark",
    "jars",
    "profile",
    "endpoint DNS",
    "endpoint TCP",
    "TLS",
    "credentials",
    "bucket",
    "write test",
]


def run_doctor(*args: str, env: dict | None = None):
    """Run the doctor through spark-submit.sh; returns (exit code, {check: line}, stdout, stderr)."""
    result = run_submit("--doctor", *args, env=env, timeout=120)
    output = result.stdout + result.stderr
    assert TEST_SECRET not in output and os.environ.get("AWS_SECRET_ACCESS_KEY", TEST_SECRET) not in output
    lines = result.stdout.splitlines()
    checks = {}
    for line in lines[:-1]:
        mark, rest = line.split(" ", 1)
        name = rest.split(":", 1)[0]
        assert mark in ("✓", "✗", "-"), line
        checks[name] = line
    assert list(checks) == CHECKS, result.stdout + result.stderr
    return result.returncode, checks, result.stdout, result.stderr


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound once, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tls_server(s3_server, tmp_path_factory):
    """A second MinIO, over HTTPS with a self-signed CA, with the same credentials as the test server."""
    base = tmp_path_factory.mktemp("minio-tls")
    server = LocalS3.start(
        base / "data", tls=True, bucket=None, access_key=s3_server.access_key, secret_key=s3_server.secret_key
    )
    yield server
    server.stop()


def test_all_checks_pass_and_the_write_test_cleans_up(s3_server, bucket, s3):
    code, checks, out, err = run_doctor("--profile", "minio", f"s3a://{bucket}/x", "--write-test")
    assert code == 0, out + err
    for name in CHECKS:
        if name == "TLS":  # the test server speaks plain HTTP: nothing to verify
            assert checks[name] == "- TLS: skipped (plain HTTP endpoint: no certificate to verify)"
        else:
            assert checks[name].startswith(f"✓ {name}: "), checks[name]
    assert out.splitlines()[-1] == "all 9 checks passed (1 skipped)"
    built = "own expressions built in" if expressions.find_javac() else "own expressions not built: no javac"
    assert built in checks["jars"]
    assert f"endpoint for bucket '{bucket}' {s3_server.endpoint} (S3_ENDPOINT" in checks["profile"]
    assert f"127.0.0.1:{s3_server.port} accepted a connection" in checks["endpoint TCP"]
    key_id = os.environ["AWS_ACCESS_KEY_ID"]
    assert f"AWS_ACCESS_KEY_ID={key_id[:4]}***" in checks["credentials"] and key_id not in out + err
    assert f"bucket '{bucket}' exists, s3a://{bucket}/x listed through s3a" in checks["bucket"]
    assert f"to s3a://{bucket}/x/_s3spark_doctor_" in checks["write test"]
    assert "gone" in checks["write test"] and "note" not in checks["write test"]
    # The object is gone, and so is the directory marker s3a leaves when the last file of x/ is deleted.
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


def test_wrong_port_fails_the_tcp_check_and_skips_the_bucket(s3_server, bucket):
    port = closed_port()
    code, checks, out, _ = run_doctor(
        "--profile", "minio", f"s3a://{bucket}/x", env={"S3_ENDPOINT": f"http://127.0.0.1:{port}"}
    )
    assert code == 1
    assert checks["endpoint DNS"] == "✓ endpoint DNS: 127.0.0.1 → 127.0.0.1"
    assert checks["endpoint TCP"] == (
        f"✗ endpoint TCP: connection refused by 127.0.0.1:{port}: nothing listens there — start the S3 server, "
        "or fix the port of the endpoint (S3_ENDPOINT, via fs.s3a.endpoint in conf/profiles/minio.conf:5)"
    )
    assert checks["bucket"] == "- bucket: skipped (fix endpoint TCP first)"
    assert checks["credentials"].startswith("✓ credentials")  # checks after a failure still run
    assert out.splitlines()[-1] == "1 of 7 checks failed (3 skipped)"


def test_per_bucket_endpoint_is_the_one_checked(s3_server, bucket, tmp_path):
    port = closed_port()
    layer = tmp_path / "other-store.conf"
    layer.write_text(f"spark.hadoop.fs.s3a.bucket.{bucket}.endpoint http://127.0.0.1:{port}\n")
    code, checks, _, _ = run_doctor("--profile", f"minio,{layer}", f"s3a://{bucket}/x")
    assert code == 1
    profile = checks["profile"]
    assert f"endpoint for bucket '{bucket}' http://127.0.0.1:{port} (fs.s3a.bucket.{bucket}.endpoint in" in profile
    assert checks["endpoint TCP"].startswith(f"✗ endpoint TCP: connection refused by 127.0.0.1:{port}")


def test_missing_bucket_is_named(s3_server):
    missing = f"t-missing-{uuid.uuid4().hex[:8]}"
    code, checks, out, _ = run_doctor("--profile", "minio", f"s3a://{missing}/x", "--write-test")
    assert code == 1
    assert checks["bucket"].startswith(f"✗ bucket: cannot list s3a://{missing}/x: "), checks["bucket"]
    # errors.translate() words it when it knows the failure, else the Java message plus the doctor's hint
    assert "does not exist" in checks["bucket"] and "create the bucket" in checks["bucket"]
    assert checks["write test"] == "- write test: skipped (the bucket check did not pass)"
    assert out.splitlines()[-1] == "1 of 8 checks failed (2 skipped)"


def test_wrong_secret_fails_the_bucket_check_without_printing_it(s3_server, bucket):
    wrong = "WRONG-SECRET-" + uuid.uuid4().hex
    code, checks, out, err = run_doctor("--profile", "minio", f"s3a://{bucket}", env={"AWS_SECRET_ACCESS_KEY": wrong})
    assert code == 1
    assert checks["credentials"].startswith("✓ credentials")  # present; only the store can tell they are wrong
    line = checks["bucket"]
    assert line.startswith(f"✗ bucket: cannot list s3a://{bucket}/: "), line
    assert "SignatureDoesNotMatch" in line and "AWS_SECRET_ACCESS_KEY" in line.split("SignatureDoesNotMatch")[1]
    assert wrong not in out + err


def test_missing_credentials(s3_server, bucket, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    code, checks, _, _ = run_doctor("--profile", "minio", f"s3a://{bucket}/x")
    assert code == 1
    assert checks["credentials"].startswith(
        "✗ credentials: no AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment — export AWS_ACCESS_KEY_ID "
        "and AWS_SECRET_ACCESS_KEY"
    )
    assert checks["bucket"] == "- bucket: skipped (fix credentials first)"


def test_https_trusted_through_the_profile_truststore(tls_server):
    code, checks, out, _ = run_doctor("--profile", "onprem", env=tls_server.env())
    assert code == 0, out
    assert checks["TLS"].startswith(
        f"✓ TLS: 127.0.0.1:{tls_server.port} certificate 'CN=localhost' (issuer 'CN=s3spark local S3 CA', "
    ), checks["TLS"]
    assert f"trusted by truststore {tls_server.truststore}, TLSv1." in checks["TLS"]


def test_https_without_truststore_is_untrusted(tls_server, tmp_path, monkeypatch):
    monkeypatch.delenv("S3_TRUSTSTORE", raising=False)
    layer = tmp_path / "ssl.conf"
    layer.write_text("spark.hadoop.fs.s3a.connection.ssl.enabled true\n")
    code, checks, out, _ = run_doctor("--profile", f"minio,{layer}", env={"S3_ENDPOINT": tls_server.endpoint})
    assert code == 1
    tls = checks["TLS"]
    assert tls.startswith(
        f"✗ TLS: 127.0.0.1:{tls_server.port}: the server certificate is not trusted by the JVM's default "
        "truststore (cacerts): PKIX path building failed"
    ), tls
    assert " — put the CA in a truststore (keytool -importcert" in tls and "S3_TRUSTSTORE" in tls
    assert "spark.driver.extraJavaOptions" in tls
    assert out.splitlines()[-1] == "1 of 8 checks failed (2 skipped)"


def test_unknown_profile_fails_the_profile_check(s3_server):
    code, checks, _, _ = run_doctor("--profile", "minoi")
    assert code == 1
    assert checks["profile"].startswith("✗ profile: 'minoi': unknown profile 'minoi'")
    assert "— fix it and check with ./spark-submit.sh --show-profile --profile minoi" in checks["profile"]
    assert checks["endpoint DNS"] == "- endpoint DNS: skipped (no profile)"


def test_help_and_bad_usage(capsys):
    with pytest.raises(SystemExit) as exit_info:
        doctor.main(["--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    for name in CHECKS:
        assert f"\n  {name} " in help_text, name
    assert "exit codes: 0" in help_text
    assert doctor.main(["s3://bucket/x"]) == 2
    assert "'s3://bucket/x' is not an s3a://BUCKET[/PREFIX] URI (s3a://bucket/x for s3a)" in capsys.readouterr().err
    assert doctor.main(["--write-test"]) == 2
    with pytest.raises(SystemExit) as exit_info:
        doctor.main(["--no-such-option"])
    assert exit_info.value.code == 2


def test_mask_never_shows_a_short_key():
    assert doctor.mask("AKIAIOSFODNN7EXAMPLE") == "AKIA***"
    assert doctor.mask("short") == "***"
