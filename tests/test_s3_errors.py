"""Every common s3a failure ends as ONE line naming the cause and the fix, with exit code 2.

Each case is triggered for real against the local MinIO: mostly through ./spark-submit.sh as a user runs it,
some in this process on the shared session (per-bucket settings, or a fresh FileSystem) where a new JVM
would add nothing. Only failures that need AWS itself or a broken JVM are checked on realistic text.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager, suppress

import pytest
from py4j.protocol import Py4JJavaError

from conftest import TEST_SECRET, run_submit
from s3spark.errors import UserError, translate
from s3spark.jars import MAVEN_COPY_GOAL, ensure_jars
from s3spark.local_s3 import LocalS3
from s3spark.paths import REPO_ROOT

NO_UI = ("--conf", "spark.ui.enabled=false")
# The SDK retries a failed request (fs.s3a.attempts.maximum) and S3A retries the operation again with
# exponential backoff (fs.s3a.retry.limit, retry.interval): with base.conf's 5 and 7 a refused connection
# takes about two minutes to report. Tests of unreachable endpoints cut the budget to one retry.
FAIL_FAST = (
    "--conf",
    "spark.hadoop.fs.s3a.attempts.maximum=1",
    "--conf",
    "spark.hadoop.fs.s3a.retry.limit=1",
    "--conf",
    "spark.hadoop.fs.s3a.retry.interval=100ms",
)
JOB = "jobs/csv_filter_count.py"


def count_args(uri: str) -> tuple[str, ...]:
    return ("--input", uri, "--schema", "a INT")


def error_line(code: int, stdout: str, stderr: str) -> str:
    """The run's single `error:` line, after checking exit code 2, no stack trace and the failed summary."""
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert code == 2, stderr
    assert len(errors) == 1, stderr
    assert "\tat " not in stderr and "Traceback" not in stderr and "Caused by" not in stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["status"] == "failed" and "error: " + summary["error"] == errors[0]
    return errors[0]


def submit_error(*args: str, env: dict | None = None) -> str:
    result = run_submit(*NO_UI, *args, env=env)
    return error_line(result.returncode, result.stdout, result.stderr)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def csv_bucket(s3, bucket) -> str:
    s3.put_object(Bucket=bucket, Key="x.csv", Body=b"a\n1\n2\n")
    return bucket


# --------------------------------------------------------------------------- through ./spark-submit.sh


def test_wrong_port_is_connection_refused(csv_bucket):
    port = closed_port()
    line = submit_error(
        "--profile",
        "minio",
        *FAIL_FAST,
        JOB,
        *count_args(f"s3a://{csv_bucket}/x.csv"),
        env={"S3_ENDPOINT": f"http://127.0.0.1:{port}"},
    )
    assert line.startswith(f"error: connection refused by 127.0.0.1:{port}: ")
    assert "fs.s3a.endpoint" in line and "S3_ENDPOINT" in line and "server is running" in line


def test_unknown_host(csv_bucket):
    line = submit_error(
        "--profile",
        "minio",
        *FAIL_FAST,
        JOB,
        *count_args(f"s3a://{csv_bucket}/x.csv"),
        env={"S3_ENDPOINT": "http://no-such-host.invalid:9000"},
    )
    assert line.startswith("error: unknown host no-such-host.invalid: ")
    assert "S3_ENDPOINT" in line and "DNS" in line


def test_wrong_secret_is_denied_and_never_shown(csv_bucket):
    wrong = "WRONG-SECRET-" + uuid.uuid4().hex
    result = run_submit(
        *NO_UI,
        "--profile",
        "minio",
        JOB,
        *count_args(f"s3a://{csv_bucket}/"),  # a listing: its 403 carries the S3 error code
        env={"AWS_SECRET_ACCESS_KEY": wrong},
    )
    line = error_line(result.returncode, result.stdout, result.stderr)
    assert line.startswith(f"error: access denied to s3a://{csv_bucket}/ by the S3 endpoint http://127.0.0.1:")
    assert "SignatureDoesNotMatch" in line and "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY" in line
    for secret in (wrong, TEST_SECRET):
        assert secret not in result.stdout and secret not in result.stderr


def test_unknown_access_key(csv_bucket):
    line = submit_error(
        "--profile",
        "minio",
        JOB,
        *count_args(f"s3a://{csv_bucket}/x.csv"),  # a HEAD: its 403 has no body, so no error code
        env={"AWS_ACCESS_KEY_ID": "no-such-key-id"},
    )
    assert line.startswith(f"error: access denied (HTTP 403) to s3a://{csv_bucket}/x.csv by the S3 endpoint http")
    assert "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY" in line and f"bucket {csv_bucket}" in line


def test_missing_credentials(csv_bucket):
    # The default chain, as users have it. Its last member asks the EC2 instance metadata service, which
    # fails fast here but would answer on an EC2 CI machine: AWS_EC2_METADATA_DISABLED makes it say no.
    line = submit_error(
        "--profile",
        "minio",
        JOB,
        *count_args(f"s3a://{csv_bucket}/x.csv"),
        env={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_EC2_METADATA_DISABLED": "true"},
    )
    assert line.startswith("error: no AWS credentials found (tried TemporaryAWSCredentialsProvider ")
    assert "IAMInstanceCredentialsProvider" in line
    assert "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in line


def test_missing_bucket(s3_server):
    name = f"no-such-{uuid.uuid4().hex[:12]}"
    line = submit_error("--profile", "minio", JOB, *count_args(f"s3a://{name}/x.csv"))
    assert line.startswith(f"error: bucket {name} does not exist on the S3 endpoint {s3_server.endpoint}; ")
    assert "create the bucket" in line


@pytest.fixture(scope="module")
def tls_server(s3_server, tmp_path_factory):
    """A second MinIO, over HTTPS with its own CA, holding s3a://secure/x.csv."""
    base = tmp_path_factory.mktemp("minio-tls")
    server = LocalS3.start(
        base / "data", tls=True, bucket="secure", access_key=s3_server.access_key, secret_key=s3_server.secret_key
    )
    server.client().put_object(Bucket="secure", Key="x.csv", Body=b"a\n1\n2\n")
    yield server
    server.stop()


def test_https_endpoint_without_truststore_is_untrusted(tls_server):
    line = submit_error(
        "--profile",
        "minio",
        *FAIL_FAST,
        JOB,
        *count_args("s3a://secure/x.csv"),
        env={"S3_ENDPOINT": tls_server.endpoint},
    )
    assert line.startswith(f"error: the TLS certificate of the S3 endpoint {tls_server.endpoint} is not trusted ")
    assert "--profile onprem" in line and "S3_TRUSTSTORE" in line and "keytool -importcert" in line


def test_https_endpoint_with_truststore_works(tls_server):
    result = run_submit(*NO_UI, "--profile", "onprem", JOB, *count_args("s3a://secure/x.csv"), env=tls_server.env())
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["rows_matched"] == 2


def run_python_job(*args: str, spark_args: str = "") -> subprocess.CompletedProcess:
    """The job's Python started directly, as a notebook or plain `python` would: no profile, no jars."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_GATEWAY", "SPARK_"))}
    env = {
        **inherited,
        "S3SPARK_SUBMITTED_PROFILE": "none",  # the session takes the JVM's configuration as it is
        "PYSPARK_SUBMIT_ARGS": f"--master local[1] --conf spark.ui.enabled=false {spark_args} pyspark-shell",
    }
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / JOB), *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True
    )


def test_without_our_jars_s3a_is_missing(csv_bucket):
    result = run_python_job(*count_args(f"s3a://{csv_bucket}/x.csv"))
    line = error_line(result.returncode, result.stdout, result.stderr)
    assert line.startswith("error: the s3a connector jar (hadoop-aws) is not on the classpath; ")
    assert "./spark-submit.sh" in line


def test_hadoop_aws_without_the_sdk_bundle(csv_bucket):
    hadoop_aws = next(p for p in ensure_jars(fetch_missing=False) if p.name.startswith("hadoop-aws-"))
    result = run_python_job(*count_args(f"s3a://{csv_bucket}/x.csv"), spark_args=f"--jars {hadoop_aws}")
    line = error_line(result.returncode, result.stdout, result.stderr)
    assert line.startswith("error: the AWS SDK jar (aws-java-sdk-bundle) that hadoop-aws needs is not on the ")
    assert "(missing com.amazonaws." in line and "conf/jars/" in line


def test_hadoop_aws_newer_than_sparks_hadoop(csv_bucket, tmp_path):
    """hadoop-aws 3.3.6 on pyspark's Hadoop 3.3.4: a class 3.3.6 needs is not in hadoop-common 3.3.4."""
    if shutil.which("mvn") is None:
        pytest.skip("Maven (mvn) is needed to fetch hadoop-aws 3.3.6")
    fetched = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            MAVEN_COPY_GOAL,
            "-Dartifact=org.apache.hadoop:hadoop-aws:3.3.6",
            f"-DoutputDirectory={tmp_path}",
        ],
        capture_output=True,
        text=True,
    )
    if fetched.returncode != 0:
        pytest.skip(f"cannot fetch hadoop-aws 3.3.6 with Maven: {fetched.stdout[-300:]}")
    others = [str(p) for p in ensure_jars(fetch_missing=False) if not p.name.startswith("hadoop-aws-")]
    line = submit_error(
        "--profile",
        "minio",
        "--conf",
        # not the pinned 3.3.4 (local masters take the jars from the driver's class path)
        f"spark.driver.extraClassPath={':'.join([str(tmp_path / 'hadoop-aws-3.3.6.jar'), *others])}",
        JOB,
        *count_args(f"s3a://{csv_bucket}/x.csv"),
    )
    assert line.startswith("error: jar version mismatch (missing org.apache.hadoop.fs.impl.prefetch.")
    assert "hadoop-aws must equal the Hadoop version bundled with pyspark" in line


# --------------------------------------------------------------------------- in this process


@contextmanager
def bucket_settings(spark, bucket: str, **settings: str):
    """Per-bucket s3a settings (fs.s3a.bucket.B.KEY) on the shared session, as a user layers them; removed
    afterwards with the bucket's cached FileSystem."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    keys = {f"fs.s3a.bucket.{bucket}.{key.replace('_', '.')}": value for key, value in settings.items()}
    for key, value in keys.items():
        conf.set(key, value)
    try:
        yield
    finally:
        for key in keys:
            conf.unset(key)
        jvm = spark.sparkContext._jvm
        with suppress(Py4JJavaError):  # a filesystem that failed to start was never cached
            jvm.org.apache.hadoop.fs.Path(f"s3a://{bucket}/").getFileSystem(conf).close()


IN_PROCESS_FAST = {"attempts_maximum": "1", "retry_limit": "0"}


def test_unknown_access_key_in_a_listing_names_the_code(spark, run_job, csv_bucket):
    with bucket_settings(spark, csv_bucket, access_key="no-such-key-id", secret_key="whatever-secret"):
        result = run_job("csv_filter_count", *count_args(f"s3a://{csv_bucket}/"))
    line = error_line(result.code, result.stdout, result.stderr)
    assert line.startswith(f"error: access denied to s3a://{csv_bucket}/ by the S3 endpoint http://127.0.0.1:")
    assert "(InvalidAccessKeyId)" in line and "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY" in line
    assert "whatever-secret" not in result.stdout + result.stderr


def test_https_to_a_plain_http_port(spark, run_job, s3_server, csv_bucket):
    https = s3_server.endpoint.replace("http://", "https://")
    with bucket_settings(spark, csv_bucket, endpoint=https, **IN_PROCESS_FAST):
        result = run_job("csv_filter_count", *count_args(f"s3a://{csv_bucket}/x.csv"))
    line = error_line(result.code, result.stdout, result.stderr)
    assert line.startswith(f"error: the S3 endpoint {https} does not speak TLS (HTTPS): use an http:// endpoint")


@pytest.fixture(scope="module")
def region_server(s3_server, tmp_path_factory):
    """A MinIO that serves region eu-west-1 only (the test server takes any region)."""
    base = tmp_path_factory.mktemp("minio-region")
    saved = os.environ.get("MINIO_SITE_REGION")
    os.environ["MINIO_SITE_REGION"] = "eu-west-1"  # LocalS3 passes its environment to MinIO
    try:
        server = LocalS3.start(
            base / "data", bucket=None, access_key=s3_server.access_key, secret_key=s3_server.secret_key
        )
    finally:
        if saved is None:
            del os.environ["MINIO_SITE_REGION"]
        else:
            os.environ["MINIO_SITE_REGION"] = saved
    yield server
    server.stop()


def test_wrong_region(spark, run_job, region_server):
    bucket = f"r-{uuid.uuid4().hex[:12]}"  # us-east-1 signing, from the minio profile
    # No multipart purge at filesystem start (Hadoop's default): its listing would answer the HEAD case with
    # the S3 error code too, and the bare 400 of a HEAD is the case to see here.
    settings = {"endpoint": region_server.endpoint, "multipart_purge": "false", **IN_PROCESS_FAST}
    with bucket_settings(spark, bucket, **settings):
        listing = run_job("csv_filter_count", *count_args(f"s3a://{bucket}/"))
        head = run_job("csv_filter_count", *count_args(f"s3a://{bucket}/x.csv"))
    line = error_line(listing.code, listing.stdout, listing.stderr)
    assert line == (
        f"error: wrong signing region for the S3 endpoint {region_server.endpoint}, which expects eu-west-1 "
        "(AuthorizationHeaderMalformed); set fs.s3a.endpoint.region (S3_REGION for minio/onprem, AWS_REGION for "
        "aws) to eu-west-1"
    )
    line = error_line(head.code, head.stdout, head.stderr)  # a HEAD's 400 has no body: no code, no region
    assert line.startswith(f"error: the S3 endpoint {region_server.endpoint} rejected the request for s3a://{bucket}")
    assert "wrong signing region" in line and "fs.s3a.endpoint.region" in line


def hadoop_fs(spark, uri: str, **settings: str):
    """A fresh s3a FileSystem (not the cached one) on a copy of the session's Hadoop configuration."""
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration(spark.sparkContext._jsc.hadoopConfiguration())
    for key, value in {"fs.s3a.impl.disable.cache": "true", **settings}.items():
        conf.set(key, value)
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return jvm.org.apache.hadoop.fs.FileSystem.newInstance(path.toUri(), conf), path


def test_connection_pool_timeout(spark, s3, bucket):
    s3.put_object(Bucket=bucket, Key="big.bin", Body=os.urandom(4 << 20))
    fs, path = hadoop_fs(
        spark,
        f"s3a://{bucket}/big.bin",
        **{
            "fs.s3a.connection.maximum": "1",
            "fs.s3a.connection.establish.timeout": "500",  # also how long a request waits for the pool
            "fs.s3a.attempts.maximum": "1",
            "fs.s3a.retry.limit": "0",
        },
    )
    started = time.monotonic()
    first = fs.open(path)
    try:
        assert first.read() >= 0  # the GET's connection stays leased until the stream is drained or closed
        with pytest.raises(Py4JJavaError) as raised:
            second = fs.open(path)
            second.read()
            second.close()
    finally:
        first.close()
        fs.close()
    assert time.monotonic() - started < 10
    error = translate(raised.value)
    assert isinstance(error, UserError) and error.exit_code == 2
    assert str(error).startswith("timed out waiting for a free HTTP connection in s3a's pool; raise ")
    assert "fs.s3a.connection.maximum (keep it above fs.s3a.threads.max)" in str(error)


def test_object_not_found_while_reading(spark, bucket):
    fs, path = hadoop_fs(spark, f"s3a://{bucket}/gone.csv")
    try:
        with pytest.raises(Py4JJavaError) as raised:
            fs.open(path)
    finally:
        fs.close()
    assert str(translate(raised.value)) == (
        f"not found: s3a://{bucket}/gone.csv; check the path, and that nothing deleted or replaced it during the run"
    )


# --------------------------------------------------------------------------- realistic text only
# These need AWS itself (redirects, session tokens) or an unreachable network, or (NoSuchMethodError) an old
# SDK bundle of ~100 MB; the texts are the ones Hadoop 3.3.4 and AWS SDK 1.12 produce.

AWS_TEXTS = {
    "NoSuchMethodError": (
        "java.lang.NoSuchMethodError: 'void org.apache.hadoop.util.SemaphoredDelegatingExecutor.<init>("
        "com.google.common.util.concurrent.ListeningExecutorService, int, boolean)'\n"
        "\tat org.apache.hadoop.fs.s3a.S3AFileSystem.create(S3AFileSystem.java:772)",
        "jar version mismatch (missing org.apache.hadoop.util.SemaphoredDelegatingExecutor.<init>): ",
    ),
    "redirect": (
        "org.apache.hadoop.fs.s3a.AWSS3IOException: getFileStatus on s3a://lake/x.csv: "
        "com.amazonaws.services.s3.model.AmazonS3Exception: Received permanent redirect response to endpoint "
        "lake.s3.eu-west-1.amazonaws.com.  This likely indicates that the S3 endpoint configured in "
        "fs.s3a.endpoint does not match the AWS region containing the bucket. (Service: Amazon S3; "
        "Status Code: 301; Error Code: PermanentRedirect; Request ID: 1)",
        "bucket lake is not served by ",
    ),
    "expired token": (
        "java.nio.file.AccessDeniedException: s3a://lake/x.csv: getFileStatus on s3a://lake/x.csv: "
        "com.amazonaws.services.s3.model.AmazonS3Exception: The provided token has expired. (Service: Amazon S3; "
        "Status Code: 400; Error Code: ExpiredToken; Request ID: 1)",
        "access denied to s3a://lake/x.csv by ",
    ),
    "provider class": (  # captured with hadoop-aws 3.2.4, whose s3a lacks a default provider of Hadoop 3.3.4
        "java.io.IOException: From option fs.s3a.aws.credentials.provider java.lang.ClassNotFoundException: "
        "Class org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider not found",
        "fs.s3a.aws.credentials.provider names org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider, a class ",
    ),
    "connect timeout": (
        "org.apache.hadoop.fs.s3a.AWSClientIOException: getFileStatus on s3a://lake/x.csv: "
        "com.amazonaws.SdkClientException: Unable to execute HTTP request: Connect to 10.1.2.3:9000 "
        "[/10.1.2.3] failed: connect timed out",
        "no answer from 10.1.2.3:9000 within fs.s3a.connection.establish.timeout; ",
    ),
}


@pytest.mark.parametrize("case", AWS_TEXTS)
def test_realistic_texts(case):
    text, start = AWS_TEXTS[case]
    error = translate(RuntimeError(text))
    assert error is not None and str(error).startswith(start), error
    assert "\n" not in str(error)


def test_redirect_names_the_regional_endpoint():
    message = str(translate(RuntimeError(AWS_TEXTS["redirect"][0])))
    assert "(HTTP 301 redirect to lake.s3.eu-west-1.amazonaws.com)" in message
    assert "fs.s3a.bucket.lake.endpoint" in message


def test_secrets_in_the_failure_text_stay_out_of_the_message():
    text = (
        f"java.nio.file.AccessDeniedException: s3a://lake/: listStatus: StringToSign with {TEST_SECRET}\n"
        "(Service: Amazon S3; Status Code: 403; Error Code: SignatureDoesNotMatch)"
    )
    assert TEST_SECRET not in str(translate(RuntimeError(text)))


@pytest.mark.parametrize(
    "text",
    [
        # Ivy resolving spark.jars.packages behind a proxy that re-signs TLS
        "java.lang.RuntimeException: problem during retrieve of org.apache.spark#spark-submit-parent: "
        "javax.net.ssl.SSLHandshakeException: PKIX path building failed: unable to find valid certification path",
        # the py4j gateway of a JVM that died
        "py4j.protocol.Py4JNetworkError: An error occurred while trying to connect to the Java server "
        "(127.0.0.1:39911)\nConnectionRefusedError: [Errno 111] Connection refused",
    ],
)
def test_network_failures_elsewhere_are_not_blamed_on_the_s3_endpoint(text):
    assert translate(RuntimeError(text)) is None
