"""Profiles: layering, env expansion, validation messages, redaction, properties round trip (no JVM)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from s3spark import s3a_keys
from s3spark.errors import UserError
from s3spark.paths import PROFILE_DIR, REPO_ROOT
from s3spark.profiles import (
    available_profiles,
    load_profile,
    read_properties,
    redact,
    write_properties,
)

H = "spark.hadoop."
SENTINEL = "S3cr3t-Sentinel-91f2"


def conf(tmp_path: Path, text: str, name: str = "t.conf") -> Path:
    """Write an ad-hoc profile file and return its path."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def error_of(spec: str | Path, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(UserError) as e:
        load_profile(str(spec), environ=environ or {})
    return str(e.value)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {}), "PYTHONPATH": str(REPO_ROOT / "lib")}
    return subprocess.run(
        [sys.executable, "-m", "s3spark.profiles", *args],
        cwd=REPO_ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def truststore(tmp_path: Path) -> Path:
    path = tmp_path / "truststore.jks"
    path.write_bytes(b"not really a keystore; only its existence is checked")
    return path


# --- layering ---------------------------------------------------------------------------------------


def test_base_is_applied_first_and_later_layers_override(tmp_path: Path) -> None:
    base = read_properties(PROFILE_DIR / "base.conf")
    a = conf(tmp_path, f"{H}fs.s3a.threads.max 10\nspark.sql.shuffle.partitions 4\n", "a.conf")
    b = conf(tmp_path, "spark.sql.shuffle.partitions 8\n", "b.conf")

    ab = load_profile(f"{a},{b}", environ={})
    assert ab.properties[H + "fs.s3a.threads.max"] == "10"  # a overrides base
    assert ab.properties["spark.sql.shuffle.partitions"] == "8"  # b overrides a
    assert ab.origins["spark.sql.shuffle.partitions"] == f"{b}:1"
    assert ab.origins[H + "fs.s3a.multipart.size"].startswith("conf/profiles/base.conf:")
    assert ab.properties[H + "fs.s3a.multipart.size"] == base[H + "fs.s3a.multipart.size"]

    ba = load_profile(f"{b},{a}", environ={})
    assert ba.properties["spark.sql.shuffle.partitions"] == "4"
    assert ba.origins["spark.sql.shuffle.partitions"] == f"{a}:2"


def test_named_profile_layers_on_base() -> None:
    p = load_profile("minio", environ={})
    assert p.properties[H + "fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert p.properties[H + "fs.s3a.committer.name"] == "magic"  # from base
    assert p.hadoop_options()["fs.s3a.path.style.access"] == "true"
    assert "spark.sql.session.timeZone" not in p.hadoop_options()
    assert list(p.properties)[: len(read_properties(PROFILE_DIR / "base.conf"))] == list(
        read_properties(PROFILE_DIR / "base.conf")
    )  # ordered: base keys first, in file order


def test_extra_java_options_append_across_layers(tmp_path: Path, truststore: Path) -> None:
    base_opts = read_properties(PROFILE_DIR / "base.conf")["spark.driver.extraJavaOptions"]
    a = conf(tmp_path, "spark.driver.extraJavaOptions -Da=1\nspark.sql.shuffle.partitions 3\n", "a.conf")
    b = conf(tmp_path, "spark.driver.extraJavaOptions -Db=2\nspark.sql.shuffle.partitions 5\n", "b.conf")
    p = load_profile(f"{a},{b}", environ={})
    assert p.properties["spark.driver.extraJavaOptions"] == f"{base_opts} -Da=1 -Db=2"
    assert p.properties["spark.sql.shuffle.partitions"] == "5"  # other keys still replace
    assert p.origins["spark.driver.extraJavaOptions"].endswith(f"{a}:1, {b}:1")

    onprem = load_profile("onprem", environ={"S3_ENDPOINT": "https://s3.example:443", "S3_TRUSTSTORE": str(truststore)})
    opts = onprem.properties["spark.executor.extraJavaOptions"]
    assert opts.startswith(read_properties(PROFILE_DIR / "base.conf")["spark.executor.extraJavaOptions"] + " ")
    assert f"-Djavax.net.ssl.trustStore={truststore}" in opts
    assert "-Djavax.net.ssl.trustStorePassword=changeit" in opts


def test_a_layer_named_twice_applies_once(tmp_path: Path) -> None:
    a = conf(tmp_path, "spark.driver.extraJavaOptions -Da=1\n", "a.conf")
    p = load_profile(f"base,{a},{a}", environ={})
    assert p.properties["spark.driver.extraJavaOptions"].count("-Da=1") == 1


# --- environment expansion --------------------------------------------------------------------------


def test_env_expansion_with_and_without_defaults(tmp_path: Path) -> None:
    path = conf(
        tmp_path,
        f"""
        {H}fs.s3a.endpoint ${{EP}}
        {H}fs.s3a.endpoint.region ${{REGION:-eu-west-1}}
        {H}fs.s3a.user.agent.prefix app-${{EMPTY:-fallback}}-${{EP}}
        {H}fs.s3a.buffer.dir ${{hadoop.tmp.dir}}/s3a
        """,
    )
    p = load_profile(str(path), environ={"EP": "http://minio:9000", "EMPTY": ""})
    assert p.properties[H + "fs.s3a.endpoint"] == "http://minio:9000"
    assert p.properties[H + "fs.s3a.endpoint.region"] == "eu-west-1"  # unset -> default
    # set but empty -> default, as in the shell
    assert p.properties[H + "fs.s3a.user.agent.prefix"] == "app-fallback-http://minio:9000"
    assert p.properties[H + "fs.s3a.buffer.dir"] == "${hadoop.tmp.dir}/s3a"  # Hadoop's own syntax, untouched

    set_region = load_profile(str(path), environ={"EP": "x", "REGION": "ap-south-1"})
    assert set_region.properties[H + "fs.s3a.endpoint.region"] == "ap-south-1"


def test_env_expansion_missing_variable_names_file_line_and_variable(tmp_path: Path) -> None:
    path = conf(tmp_path, f"# endpoint\n{H}fs.s3a.endpoint ${{NO_SUCH_VAR_XYZ}}\n")
    assert error_of(path) == (
        f"{path}:2: environment variable NO_SUCH_VAR_XYZ is not set (used as ${{NO_SUCH_VAR_XYZ}} with no "
        "default); export it, or write ${NO_SUCH_VAR_XYZ:-default}"
    )


def test_unterminated_env_reference(tmp_path: Path) -> None:
    path = conf(tmp_path, f"{H}fs.s3a.endpoint ${{EP\n")
    assert error_of(path).startswith(f"{path}:1: unterminated '${{'")


def test_onprem_requires_endpoint() -> None:
    assert "environment variable S3_ENDPOINT is not set" in error_of("onprem")
    assert error_of("onprem").startswith("conf/profiles/onprem.conf:")


# --- validation -------------------------------------------------------------------------------------


def test_unknown_s3a_key_suggests_the_right_one(tmp_path: Path) -> None:
    path = conf(tmp_path, f"# pool\n\n{H}fs.s3a.connection.maximun 100\n")
    assert error_of(path) == (
        f"{path}:3: unknown S3A key 'fs.s3a.connection.maximun'; did you mean 'fs.s3a.connection.maximum'?"
    )


def test_unknown_s3a_key_without_close_match(tmp_path: Path) -> None:
    path = conf(tmp_path, f"{H}fs.s3a.zzzz.qqqq 1\n")
    assert error_of(path) == (
        f"{path}:1: unknown S3A key 'fs.s3a.zzzz.qqqq' (Hadoop 3.3.4's hadoop-aws does not read it)"
    )


def test_keys_outside_fs_s3a_are_not_checked_for_existence(tmp_path: Path) -> None:
    path = conf(tmp_path, f"spark.whatever.custom abc\n{H}fs.gs.whatever xyz\n")
    assert load_profile(str(path), environ={}).properties["spark.whatever.custom"] == "abc"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            f"{H}fs.s3a.connection.timeout 60s",
            "fs.s3a.connection.timeout expects integer milliseconds (Hadoop 3.3.4 reads it with getInt), got '60s'",
        ),
        (
            f"{H}fs.s3a.path.style.access yes",
            "fs.s3a.path.style.access expects true or false (Hadoop 3.3.4 reads it with getBoolean, which "
            "silently falls back to the default), got 'yes'",
        ),
        (
            f"{H}fs.s3a.threads.max 32.5",
            "fs.s3a.threads.max expects a plain integer (Hadoop 3.3.4 reads it with getInt), got '32.5'",
        ),
        (
            f"{H}fs.s3a.threads.max 3000000000",
            "fs.s3a.threads.max expects a plain integer (Hadoop 3.3.4 reads it with getInt), got '3000000000'",
        ),
        (
            f"{H}fs.s3a.threads.keepalivetime 60s",
            "fs.s3a.threads.keepalivetime expects a plain integer number of seconds (Hadoop 3.3.4 reads it with "
            "getLong), got '60s'",
        ),
        (
            f"{H}fs.s3a.multipart.size 64MB",
            "fs.s3a.multipart.size expects a byte size: an integer with an optional k/m/g/t/p suffix such as "
            "64M (Hadoop 3.3.4 reads it with getLongBytes), got '64MB'",
        ),
        (
            f"{H}fs.s3a.retry.interval soon",
            "fs.s3a.retry.interval expects a duration: an integer with an optional ns/us/ms/s/m/h/d suffix, "
            "milliseconds if none (Hadoop 3.3.4 reads it with getTimeDuration), got 'soon'",
        ),
        (
            f"{H}fs.s3a.experimental.input.fadvise adaptive",
            "fs.s3a.experimental.input.fadvise expects one of normal, sequential, random, got 'adaptive'",
        ),
        (
            f"{H}fs.s3a.fast.upload.buffer DISK",
            "fs.s3a.fast.upload.buffer expects one of disk, array, bytebuffer (case-sensitive), got 'DISK'",
        ),
        (
            f"{H}fs.s3a.aws.credentials.provider com.example.Good, not a class",
            "fs.s3a.aws.credentials.provider expects a comma-separated list of Java class names, "
            "got 'com.example.Good, not a class'",
        ),
        (
            "spark.sql.shuffle.partitions many",
            "spark.sql.shuffle.partitions expects a plain integer (Spark reads it with intConf), got 'many'",
        ),
        (
            "spark.sql.files.maxPartitionBytes 128 MB",
            "spark.sql.files.maxPartitionBytes expects a byte size such as 128m or 134217728 (Spark reads it "
            "with bytesConf), got '128 MB'",
        ),
        (
            "spark.ui.showConsoleProgress on",
            "spark.ui.showConsoleProgress expects true or false (Spark reads it with booleanConf), got 'on'",
        ),
    ],
)
def test_wrong_kind(tmp_path: Path, line: str, expected: str) -> None:
    path = conf(tmp_path, f"# a comment\n{line}\n")
    assert error_of(path) == f"{path}:2: {expected}"


def test_values_of_the_right_kind_pass(tmp_path: Path) -> None:
    path = conf(
        tmp_path,
        f"""
        {H}fs.s3a.connection.timeout 60000
        {H}fs.s3a.connection.establish.timeout 0x1388
        {H}fs.s3a.path.style.access TRUE
        {H}fs.s3a.multipart.size 128m
        {H}fs.s3a.block.size 134217728
        {H}fs.s3a.readahead.range 2K
        {H}fs.s3a.retry.interval 2s
        {H}fs.s3a.retry.throttle.interval 250
        {H}fs.s3a.connection.request.timeout 1 m
        {H}fs.s3a.experimental.input.fadvise Random
        {H}fs.s3a.ssl.channel.mode default_jsse
        {H}fs.s3a.aws.credentials.provider com.amazonaws.auth.EnvironmentVariableCredentialsProvider, \\
            org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider
        {H}fs.s3a.s3guard.ddb.table.tag.owner data-team
        spark.sql.files.maxPartitionBytes 64mb
        spark.sql.execution.arrow.pyspark.enabled False
        """,
    )
    props = load_profile(str(path), environ={}).properties
    assert props[H + "fs.s3a.aws.credentials.provider"] == (
        "com.amazonaws.auth.EnvironmentVariableCredentialsProvider, "
        "org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider"
    )


def test_kinds_table_matches_hadoop_getters() -> None:
    kinds = s3a_keys.S3A_KEYS
    assert len(kinds) > 130
    assert kinds["fs.s3a.connection.timeout"].name == "millis"
    assert kinds["fs.s3a.connection.establish.timeout"].name == "millis"
    assert kinds["fs.s3a.connection.request.timeout"].name == "duration"
    assert kinds["fs.s3a.socket.send.buffer"].name == "int"
    assert kinds["fs.s3a.readahead.range"].name == "size"
    assert kinds["fs.s3a.bucket.probe"].name == "int"
    assert kinds["fs.s3a.endpoint.region"].name == "str"


def test_connection_maximum_must_exceed_threads_max(tmp_path: Path) -> None:
    # base sets threads.max 32 and connection.maximum 64; this layer raises threads.max last
    path = conf(tmp_path, f"# tuning\n{H}fs.s3a.threads.max 64\n")
    message = error_of(path)
    assert message.startswith(
        f"{path}:2: fs.s3a.connection.maximum (64) must be above fs.s3a.threads.max (64): otherwise the S3A "
        "thread pool starves, uploads and reads wait for free HTTP connections"
    )
    # lowering connection.maximum is reported at its own line, the one set last
    path2 = conf(tmp_path, f"{H}fs.s3a.connection.maximum 16\n", "low.conf")
    assert error_of(path2).startswith(f"{path2}:1: fs.s3a.connection.maximum (16) must be above")
    # raising both consistently is fine
    ok = conf(tmp_path, f"{H}fs.s3a.threads.max 100\n{H}fs.s3a.connection.maximum 128\n", "ok.conf")
    assert load_profile(str(ok), environ={}).properties[H + "fs.s3a.threads.max"] == "100"


def test_connection_maximum_checked_per_bucket(tmp_path: Path) -> None:
    path = conf(tmp_path, f"{H}fs.s3a.bucket.logs.threads.max 80\n")
    message = error_of(path)
    assert message.startswith(f"{path}:1: fs.s3a.connection.maximum (64) must be above fs.s3a.threads.max (80)")
    assert "for bucket 'logs'" in message


def test_missing_truststore(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jks"
    message = error_of("onprem", {"S3_ENDPOINT": "https://s3.example:443", "S3_TRUSTSTORE": str(missing)})
    assert message.startswith(
        f"conf/profiles/onprem.conf:15: truststore '{missing}' "
        "(javax.net.ssl.trustStore in spark.driver.extraJavaOptions) does not exist"
    )
    assert "keytool -importcert" in message


@pytest.mark.parametrize(
    "key",
    [
        "fs.s3a.access.key",
        "fs.s3a.secret.key",
        "fs.s3a.session.token",
        "fs.s3a.bucket.raw.secret.key",
        "fs.s3a.bucket.my.dotted.bucket.access.key",
    ],
)
def test_secrets_are_refused_in_profiles(tmp_path: Path, key: str) -> None:
    path = conf(tmp_path, f"{H}{key} {SENTINEL}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:1: {key} must not be set in a profile")
    assert "AWS_ACCESS_KEY_ID" in message and "AWS_SECRET_ACCESS_KEY" in message
    assert "fs.s3a.security.credential.provider.path" in message
    assert SENTINEL not in message


def test_malformed_line(tmp_path: Path) -> None:
    path = conf(tmp_path, f"spark.sql.shuffle.partitions 4\n\n{H}fs.s3a.endpoint\n")
    assert error_of(path).startswith(f"{path}:3: 'spark.hadoop.fs.s3a.endpoint' has no value")


def test_inline_comment_and_missing_prefix_are_reported(tmp_path: Path) -> None:
    inline = conf(tmp_path, f"{H}fs.s3a.endpoint http://x:9000  # local minio\n", "inline.conf")
    assert "has a '#' after its value" in error_of(inline)
    bare = conf(tmp_path, "fs.s3a.endpoint http://x:9000\n", "bare.conf")
    assert error_of(bare) == (
        f"{bare}:1: 'fs.s3a.endpoint' is not a Spark property; in a Spark properties "
        "file Hadoop keys need the prefix: 'spark.hadoop.fs.s3a.endpoint'"
    )


def test_unknown_profile() -> None:
    assert error_of("x") == (
        "unknown profile 'x': no conf/profiles/x.conf; available: aws, local, minio, onprem "
        "(or pass a path to a .conf file)"
    )
    assert available_profiles() == ["aws", "local", "minio", "onprem"]


def test_missing_profile_path(tmp_path: Path) -> None:
    assert "not found" in error_of(tmp_path / "absent.conf")


# --- per-bucket keys --------------------------------------------------------------------------------


def test_per_bucket_keys_are_validated_as_their_global_key(tmp_path: Path) -> None:
    good = conf(
        tmp_path,
        f"""
        {H}fs.s3a.bucket.logs.endpoint http://other:9000
        {H}fs.s3a.bucket.my.dotted.bucket.path.style.access true
        {H}fs.s3a.bucket.logs.accesspoint.arn arn:aws:s3:eu-west-1:123456789012:accesspoint/logs
        """,
        "good.conf",
    )
    props = load_profile(str(good), environ={}).hadoop_options()
    assert props["fs.s3a.bucket.logs.endpoint"] == "http://other:9000"

    wrong_kind = conf(tmp_path, f"{H}fs.s3a.bucket.logs.connection.timeout 60s\n", "kind.conf")
    assert error_of(wrong_kind) == (
        f"{wrong_kind}:1: fs.s3a.bucket.logs.connection.timeout expects integer "
        "milliseconds (Hadoop 3.3.4 reads it with getInt), got '60s'"
    )
    typo = conf(tmp_path, f"{H}fs.s3a.bucket.logs.endpoit http://x\n", "typo.conf")
    assert error_of(typo) == (
        f"{typo}:1: unknown S3A key 'fs.s3a.bucket.logs.endpoit'; did you mean 'fs.s3a.bucket.logs.endpoint'?"
    )
    global_only = conf(tmp_path, f"{H}fs.s3a.accesspoint.arn arn:x\n", "ap.conf")
    assert "only read per bucket" in error_of(global_only)


# --- shipped profiles -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["base", "local", "minio", "aws", "onprem"])
def test_every_shipped_profile_loads_cleanly(name: str, truststore: Path) -> None:
    env = {"S3_ENDPOINT": "https://s3.example.internal:443", "S3_TRUSTSTORE": str(truststore)}
    profile = load_profile(name, environ=env)
    hadoop = profile.hadoop_options()
    assert int(hadoop["fs.s3a.connection.maximum"]) > int(hadoop["fs.s3a.threads.max"])
    assert hadoop["fs.s3a.committer.name"] == "magic"
    assert not any(k.endswith(("access.key", "secret.key", "session.token")) for k in hadoop)
    # every setting in a shipped file has a comment in the block of lines just above it
    lines = (PROFILE_DIR / f"{name}.conf").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.startswith("#"):
            j = i - 1
            while j >= 0 and lines[j].strip() and not lines[j].startswith("#"):
                j -= 1
            assert j >= 0 and lines[j].startswith("#"), f"{name}.conf:{i + 1} has no comment"


def test_aws_profile_uses_the_region() -> None:
    p = load_profile("aws", environ={"AWS_REGION": "eu-central-1"})
    assert p.properties[H + "fs.s3a.endpoint"] == "s3.eu-central-1.amazonaws.com"
    assert p.properties[H + "fs.s3a.endpoint.region"] == "eu-central-1"


# --- redaction and printing -------------------------------------------------------------------------


def test_redact() -> None:
    props = {
        H + "fs.s3a.proxy.password": SENTINEL,
        "spark.executorEnv.AWS_SECRET_ACCESS_KEY": SENTINEL,
        "spark.executorEnv.AWS_ACCESS_KEY_ID": SENTINEL,
        H + "fs.s3a.security.credential.provider.path": "jceks://file/x.jceks",
        "spark.some.Token": SENTINEL,
        "spark.driver.extraJavaOptions": f"-Da=1 -Djavax.net.ssl.trustStorePassword={SENTINEL} -Db=2",
        H + "fs.s3a.endpoint": "http://x:9000",
    }
    out = redact(props)
    assert SENTINEL not in repr(out)
    assert out[H + "fs.s3a.endpoint"] == "http://x:9000"
    assert out[H + "fs.s3a.proxy.password"] == "********"
    assert out[H + "fs.s3a.security.credential.provider.path"] == "********"
    assert out["spark.driver.extraJavaOptions"] == "-Da=1 -Djavax.net.ssl.trustStorePassword=******** -Db=2"
    assert props[H + "fs.s3a.proxy.password"] == SENTINEL  # input untouched


def test_show_redacts_secrets_and_names_origins(tmp_path: Path, truststore: Path) -> None:
    extra = conf(
        tmp_path,
        f"""
        # proxy with a password from the environment
        {H}fs.s3a.proxy.password ${{PROXY_PW}}
        """,
    )
    env = {
        "S3_ENDPOINT": "https://s3.example:443",
        "S3_TRUSTSTORE": str(truststore),
        "S3_TRUSTSTORE_PASSWORD": SENTINEL,
        "PROXY_PW": SENTINEL,
    }
    result = run_cli("show", f"onprem,{extra}", env=env)
    assert result.returncode == 0, result.stderr
    assert SENTINEL not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines == sorted(lines)
    proxy = next(x for x in lines if x.startswith(H + "fs.s3a.proxy.password "))
    assert proxy.split("#")[0].split() == [H + "fs.s3a.proxy.password", "********"]
    assert proxy.endswith(f"# from {extra}:2")
    endpoint = next(x for x in lines if x.startswith(H + "fs.s3a.endpoint "))
    assert endpoint.endswith("# from conf/profiles/onprem.conf:7")
    assert "trustStorePassword=********" in result.stdout


def test_show_error_exits_2() -> None:
    result = run_cli("show", "nope")
    assert result.returncode == 2
    assert result.stderr.startswith("error: unknown profile 'nope'")
    assert result.stdout == ""


def test_list() -> None:
    result = run_cli("list")
    assert result.returncode == 0
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert names == ["base", "aws", "local", "minio", "onprem"]


# --- properties files -------------------------------------------------------------------------------

TRICKY = {
    "spark.a": "plain",
    "spark.windows.path": "C:\\dir\\new\\table",
    "spark.trailing.backslash": "ends\\",
    "spark.leading": "=starts with equals: and has # and ! inside",
    "spark.unicode": "ünïcödé ✓ 😀",
    "spark.key with space=and:colon#hash": "v",
    "spark.tab": "a\tb",
}


def test_write_round_trips(tmp_path: Path) -> None:
    out = tmp_path / "merged.properties"
    write_properties(TRICKY, out)
    back = read_properties(out)
    assert back == TRICKY
    assert list(back) == list(TRICKY)  # order kept
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    out.read_text(encoding="ascii")  # non-ASCII is \\u-escaped, as Java's store() does


def test_read_properties_accepts_the_java_syntaxes(tmp_path: Path) -> None:
    path = conf(
        tmp_path,
        """
        # comment
        ! also a comment
        spark.a=1
        spark.b: 2
        spark.c   3
        spark.d = 4 \\
                  continued
        spark.e\\=x 5
        """,
    )
    assert read_properties(path) == {
        "spark.a": "1",
        "spark.b": "2",
        "spark.c": "3",
        "spark.d": "4 continued",
        "spark.e=x": "5",
    }


def test_cli_write_round_trips_the_merged_profile(tmp_path: Path, truststore: Path) -> None:
    env = {
        "S3_ENDPOINT": "https://s3.example:443",
        "S3_TRUSTSTORE": str(truststore),
        "S3_TRUSTSTORE_PASSWORD": "pa\\ss word",
    }
    out = tmp_path / "spark.properties"
    result = run_cli("write", "onprem", str(out), env=env)
    assert result.returncode == 0, result.stderr
    expected = load_profile("onprem", environ=env).properties
    back = read_properties(out)
    assert back == expected and list(back) == list(expected)
    assert "-Djavax.net.ssl.trustStorePassword=pa\\ss word" in back["spark.driver.extraJavaOptions"]
