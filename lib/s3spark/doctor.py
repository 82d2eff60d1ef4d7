"""``./spark-submit.sh --doctor``: check, in order, everything an s3a job needs, one line per check.

Each check prints ``✓ name: detail``, ``✗ name: what is wrong — how to fix`` or ``- name: skipped (reason)``
when an earlier failure makes it pointless. Without a bucket argument nothing starts a Spark JVM (only
the TLS check runs a tiny Java program), so the doctor answers in about a second.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ipaddress
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from s3spark.errors import UserError, java_message, scrub

OK, FAIL, SKIP = "✓", "✗", "-"
SUPPORTED_JAVA = (8, 11, 17)
DNS_TIMEOUT_S = 5.0
TCP_TIMEOUT_S = 3.0
TLS_TIMEOUT_MS = 3000
JAVA_TIMEOUT_S = 20.0
MAX_LISTED = 1000
IMDS = ("169.254.169.254", 80)  # EC2 instance metadata: where an instance role's credentials come from
# JVM options that change how the JVM trusts TLS servers: passed to the TLS check exactly as the profile has them.
_TLS_JVM_OPTION = re.compile(r"-D(javax\.net\.ssl\.|jdk\.tls\.|jdk\.certpath\.|com\.sun\.net\.ssl\.)")
# Credential providers that read the environment or fs.s3a.access.key (S3A's default chain in 3.3.4).
_ENV_PROVIDERS = ("SimpleAWSCredentialsProvider", "EnvironmentVariableCredentialsProvider", "TemporaryAWSCredentials")
_PROFILE_PROVIDERS = ("ProfileCredentialsProvider", "DefaultAWSCredentialsProviderChain")

HELP_EPILOG = """\
checks, in this order (a check that an earlier failure makes pointless is shown as skipped):
  java           Java on $JAVA_HOME/bin, else on PATH (as Spark picks it); Spark 3.5 runs on 8, 11 or 17
  pyspark        the installed pyspark and the Hadoop version it bundles (hadoop-aws must equal it)
  jars           every pinned jar of conf/jars/hadoop-<version>.txt is in the cache and passes its sha256;
                 nothing is fetched here: ./spark-submit.sh --setup fetches them (and also says whether
                 our own expressions and the class archive are built)
  profile        the profile loads and validates (as for a job); shows the endpoint it resolves to
  endpoint DNS   the endpoint host resolves: fs.s3a.endpoint, or fs.s3a.bucket.BUCKET.endpoint for the
                 bucket given, or the AWS regional endpoint when none is set (with virtual-host
                 addressing, the bucket's own name BUCKET.host, which is what s3a connects to)
  endpoint TCP   the host accepts a TCP connection within 3 s (port from the URL, else 443 or 80 from
                 fs.s3a.connection.ssl.enabled)
  TLS            for an HTTPS endpoint: the JVM itself (a small Java program, same java and the same
                 -Djavax.net.ssl.* options as spark.driver.extraJavaOptions) completes a TLS handshake
                 and verifies the certificate and host name against the profile's truststore, or the
                 JVM's default cacerts when the profile names none; skipped for plain HTTP
  credentials    AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, or a Hadoop credential
                 provider (fs.s3a.security.credential.provider.path), or a credential provider class
                 set in the profile; the key id is shown masked, secrets never
  bucket         with s3a://BUCKET[/PREFIX]: starts a small local Spark session with the profile and
                 lists the prefix through s3a (Hadoop's FileSystem API), exactly as jobs reach it
  write test     with --write-test: writes a small object _s3spark_doctor_<random> under the prefix,
                 reads it back, deletes it and checks it is gone (directory markers s3a leaves behind
                 for a prefix that did not exist before are removed too)

output: one line per check, then 'all N checks passed' or 'K of N checks failed' (skipped checks are not
counted in N). Secrets are never printed.
exit codes: 0 every check that ran passed; 1 a check failed (an unknown or invalid profile is a failed
profile check); 2 bad usage (unknown option, a URI that is not s3a://BUCKET[/PREFIX], --write-test
without one).
"""


# --- results ------------------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    status: str  # OK, FAIL or SKIP
    detail: str

    def line(self) -> str:
        if self.status == SKIP:
            return f"{SKIP} {self.name}: skipped ({self.detail})"
        return f"{self.status} {self.name}: {self.detail}"


def ok(name: str, detail: str) -> Result:
    return Result(name, OK, detail)


def fail(name: str, problem: str, fix: str = "") -> Result:
    return Result(name, FAIL, f"{problem} — {fix}" if fix else problem)


def skip(name: str, reason: str) -> Result:
    return Result(name, SKIP, reason)


@dataclass
class Endpoint:
    """Where s3a connects for the bucket (or for any bucket): derived from the profile like S3A does."""

    url: str  # the configured value, or the derived default
    source: str  # where it came from
    scheme: str
    host: str  # the host s3a connects to (BUCKET.host under virtual-host addressing)
    port: int
    endpoint_host: str  # the host of the endpoint itself
    path_style: bool
    region: str
    proxy: tuple[str, int] | None = None


@dataclass
class State:
    """What the checks learned so far; later checks read it."""

    profile_spec: str
    uri: str | None
    bucket: str | None
    prefix: str
    write_test: bool
    java: str | None = None
    java_major: int | None = None
    profile: Any = None  # s3spark.profiles.Profile
    endpoint: Endpoint | None = None
    passed: dict[str, bool] = field(default_factory=dict)


# --- helpers --------------------------------------------------------------------------------------------


def mask(key_id: str) -> str:
    """An access key id safe to print: its first 4 characters and ***."""
    return (key_id[:4] if len(key_id) > 8 else "") + "***"


def find_java() -> str | None:
    """The java Spark would run: $JAVA_HOME/bin/java if JAVA_HOME is set, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if os.access(candidate, os.X_OK) else None
    return shutil.which("java")


def java_major(version: str) -> int | None:
    """17 from '17.0.15', 8 from '1.8.0_392'."""
    m = re.match(r"(\d+)(?:\.(\d+))?", version)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _hadoop_opt(state: State, key: str, default: str | None = None) -> tuple[str | None, str]:
    """(value, origin) of an fs.s3a key for the bucket: per-bucket setting first, then global, then default."""
    props = state.profile.properties
    names = []
    if state.bucket:
        names.append(f"spark.hadoop.fs.s3a.bucket.{state.bucket}.{key[len('fs.s3a.') :]}")
    names.append(f"spark.hadoop.{key}")
    for name in names:
        if name in props:
            return props[name], f"{name[len('spark.hadoop.') :]} in {state.profile.origins[name]}"
    return default, "Hadoop's default"


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _dns_bucket_name(bucket: str) -> bool:
    """Whether the AWS SDK v1 would address this bucket as a host name (BucketNameUtils.isDNSBucketName)."""
    return bool(re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", bucket)) and ".." not in bucket and not _is_ip(bucket)


def resolve_endpoint(state: State) -> Endpoint:
    """The URL, host and port s3a will use, following DefaultS3ClientFactory / the AWS SDK v1 rules."""
    raw, source = _hadoop_opt(state, "fs.s3a.endpoint", "")
    ssl_value, _ = _hadoop_opt(state, "fs.s3a.connection.ssl.enabled", "true")
    path_style = _is_true(_hadoop_opt(state, "fs.s3a.path.style.access", "false")[0])
    region = _hadoop_opt(state, "fs.s3a.endpoint.region", "")[0] or "us-east-1"
    raw = (raw or "").strip()
    if not raw:
        raw, source = f"s3.{region}.amazonaws.com", "no fs.s3a.endpoint set: AWS regional endpoint"
    elif raw == os.environ.get("S3_ENDPOINT", "").strip():
        source = f"S3_ENDPOINT, via {source}"
    has_scheme = "://" in raw
    parts = urlsplit(raw if has_scheme else f"//{raw}")
    scheme = parts.scheme.lower() if has_scheme else ("https" if _is_true(ssl_value) else "http")
    if scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"endpoint '{raw}' ({source}) is not host[:port] or an http(s):// URL")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as e:
        raise UserError(f"endpoint '{raw}' ({source}) has a bad port: {e}") from None
    host = parts.hostname
    if state.bucket and not path_style and not _is_ip(host) and _dns_bucket_name(state.bucket):
        target = f"{state.bucket}.{host}"
    else:
        target = host
    proxy = None
    proxy_host = _hadoop_opt(state, "fs.s3a.proxy.host")[0]
    if proxy_host:
        proxy_port = _hadoop_opt(state, "fs.s3a.proxy.port")[0]
        proxy = (proxy_host, int(proxy_port) if proxy_port and proxy_port.lstrip("-").isdigit() else port)
        if proxy[1] < 0:
            proxy = (proxy_host, 443 if scheme == "https" else 80)
    return Endpoint(raw, source, scheme, target, port, host, path_style, region, proxy)


def _resolve(host: str, port: int) -> list[str]:
    """Addresses of host, with a timeout (getaddrinfo itself has none)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        infos = pool.submit(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM).result(timeout=DNS_TIMEOUT_S)
    finally:
        pool.shutdown(wait=False)
    return list(dict.fromkeys(info[4][0] for info in infos))


# --- the checks -----------------------------------------------------------------------------------------


def check_java(state: State) -> Result:
    name = "java"
    java = find_java()
    if java is None:
        where = f"$JAVA_HOME/bin/java ({os.environ['JAVA_HOME']})" if os.environ.get("JAVA_HOME") else "PATH"
        return fail(
            name,
            f"no java on {where}",
            "install Java 17 (apt-get install openjdk-17-jre-headless; brew install openjdk@17) "
            "or point JAVA_HOME at one",
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=JAVA_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return fail(name, f"{java} -version failed: {e}", "check the Java installation or JAVA_HOME")
    m = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    major = java_major(m.group(1)) if m else None
    if major is None:
        return fail(name, f"cannot read the version of {java}", "install Java 17 or set JAVA_HOME")
    state.java, state.java_major = java, major
    vendor = (out.stderr.splitlines()[1:2] or [""])[0].split(" (build")[0].strip()
    detail = f"Java {m.group(1)} at {java}" + (f" ({vendor})" if vendor else "")
    if major not in SUPPORTED_JAVA:
        return fail(
            name,
            f"{detail}: Spark 3.5 runs on Java 8, 11 or 17",
            "install Java 17 and put it first on PATH or set JAVA_HOME to it",
        )
    return ok(name, detail)


def check_pyspark(state: State) -> Result:
    name = "pyspark"
    try:
        import pyspark

        from s3spark.jars import pyspark_jars_dir, spark_hadoop_version

        hadoop = spark_hadoop_version()
    except ImportError as e:
        return fail(name, f"cannot import pyspark ({e})", "run ./spark-submit.sh --setup")
    except UserError as e:
        return fail(name, str(e), "reinstall pyspark: ./spark-submit.sh --setup")
    python = ".".join(map(str, sys.version_info[:3]))
    where = f"SPARK_HOME={os.environ['SPARK_HOME']}" if os.environ.get("SPARK_HOME") else str(pyspark_jars_dir().parent)
    return ok(name, f"pyspark {pyspark.__version__} (Python {python}) bundles Hadoop {hadoop}; {where}")


def check_jars(state: State) -> Result:
    name = "jars"
    if not state.passed.get("pyspark"):
        return skip(name, "pyspark is not usable")
    from s3spark.jars import is_verified, jars_cache, pins_for, pyspark_jars_dir, spark_hadoop_version

    hadoop = spark_hadoop_version()
    try:
        pins = pins_for(hadoop)  # refuses a hadoop-aws pin that does not match Spark's Hadoop
    except UserError as e:
        return fail(name, str(e))
    cache = jars_cache()
    missing, corrupt = [], []
    for pin in pins:
        path = cache / pin.filename
        if not path.exists():
            missing.append(pin.filename)
        elif not is_verified(path, pin):
            corrupt.append(pin.filename)
    if missing or corrupt:
        problems = []
        if missing:
            problems.append(f"missing {', '.join(missing)}")
        if corrupt:
            problems.append(f"{', '.join(corrupt)} fail their sha256 (delete them)")
        return fail(name, f"{'; '.join(problems)} in {cache}", "run ./spark-submit.sh --setup to fetch the pinned jars")
    stray = sorted(
        p.name for p in pyspark_jars_dir().glob("*.jar") if p.name.startswith(("hadoop-aws-", "aws-java-sdk"))
    )
    if stray:
        return fail(
            name,
            f"{', '.join(stray)} in {pyspark_jars_dir()} would clash with the pinned jars (NoSuchMethodError)",
            "remove them; the pinned ones are added by ./spark-submit.sh and s3spark.session",
        )
    aws = next(p for p in pins if p.artifact == "hadoop-aws")
    detail = f"{len(pins)} pinned jars verified in {cache}; hadoop-aws {aws.version} matches Spark's Hadoop"
    return ok(name, f"{detail}; {_own_expressions_state()}; {_class_archive_state()}")


def _own_expressions_state() -> str:
    """Whether the fast path's own expressions are built (faster, not a requirement)."""
    from s3spark import expressions

    jar = expressions.ensure_jar(build=False)
    if jar is not None:
        return f"own expressions built in {jar.parent}"
    if expressions.find_javac() is None:
        return "own expressions not built: no javac (the fast path uses Spark's slower split(); install a JDK)"
    return "own expressions not built yet (./spark-submit.sh --setup builds them)"


def _class_archive_state() -> str:
    """Whether local runs have their class archive (a faster start, not a requirement)."""
    from s3spark import class_archive

    if not class_archive.enabled():
        return f"class archive off ({class_archive.SWITCH_ENV}=0)"
    class_path, _ = class_archive.default_class_path()
    path = class_archive.archive_path(class_path)
    if path is not None and path.is_file():
        return f"class archive for local runs in {path.parent}"
    return "no class archive yet (local runs start 1-2 s slower; ./spark-submit.sh --setup makes it)"


def check_profile(state: State) -> Result:
    name = "profile"
    from s3spark.profiles import load_profile

    try:
        state.profile = load_profile(state.profile_spec)
    except UserError as e:
        return fail(
            name,
            f"'{state.profile_spec}': {e}",
            "fix it and check with ./spark-submit.sh --show-profile --profile " + shlex.quote(state.profile_spec),
        )
    try:
        state.endpoint = ep = resolve_endpoint(state)
    except UserError as e:
        return fail(name, f"'{state.profile_spec}': {e}", "set spark.hadoop.fs.s3a.endpoint to https://host[:port]")
    style = "path style" if ep.path_style else "virtual-host style"
    via = f", via proxy {ep.proxy[0]}:{ep.proxy[1]}" if ep.proxy else ""
    scope = f" for bucket '{state.bucket}'" if state.bucket else ""
    return ok(
        name,
        f"'{state.profile_spec}' loads; endpoint{scope} {ep.scheme}://{ep.endpoint_host}:{ep.port} "
        f"({ep.source}), {style}, region {ep.region}{via}",
    )


def _connect_target(ep: Endpoint) -> tuple[str, int, str]:
    if ep.proxy:
        return ep.proxy[0], ep.proxy[1], "proxy "
    return ep.host, ep.port, ""


def check_dns(state: State) -> Result:
    name = "endpoint DNS"
    ep = state.endpoint
    if ep is None:
        return skip(name, "no profile")
    host, port, what = _connect_target(ep)
    try:
        addresses = _resolve(host, port)
    except concurrent.futures.TimeoutError:
        return fail(name, f"resolving {what}'{host}' took over {DNS_TIMEOUT_S:.0f} s", "check your DNS server or VPN")
    except OSError as e:
        reason = e.strerror or str(e)
        if host != ep.endpoint_host and not ep.proxy:
            try:
                _resolve(ep.endpoint_host, port)
            except (OSError, concurrent.futures.TimeoutError):
                pass
            else:
                return fail(
                    name,
                    f"'{host}' does not resolve ({reason}): with virtual-host addressing s3a reaches bucket "
                    f"'{state.bucket}' as a host name under '{ep.endpoint_host}'",
                    "set spark.hadoop.fs.s3a.path.style.access true for stores without wildcard DNS "
                    "(MinIO, Ceph, FlashBlade), or add a wildcard DNS record",
                )
        return fail(
            name,
            f"cannot resolve {what}'{host}' ({reason})",
            f"check the host name in {ep.source}, your DNS, VPN or /etc/hosts",
        )
    shown = ", ".join(addresses[:3]) + (f" (+{len(addresses) - 3} more)" if len(addresses) > 3 else "")
    return ok(name, f"{what}{host} → {shown}")


def check_tcp(state: State) -> Result:
    name = "endpoint TCP"
    if not state.passed.get("endpoint DNS"):
        return skip(name, "the endpoint host does not resolve" if state.endpoint else "no profile")
    host, port, what = _connect_target(state.endpoint)
    start = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=TCP_TIMEOUT_S):
            pass
    except ConnectionRefusedError:
        return fail(
            name,
            f"connection refused by {what}{host}:{port}: nothing listens there",
            f"start the S3 server, or fix the port of the endpoint ({state.endpoint.source})",
        )
    except TimeoutError:
        return fail(
            name,
            f"{what}{host}:{port} did not answer within {TCP_TIMEOUT_S:.0f} s",
            "a firewall, security group or wrong address: check the endpoint and the network path "
            "(proxy settings fs.s3a.proxy.host/port if you need one)",
        )
    except OSError as e:
        return fail(
            name, f"cannot connect to {what}{host}:{port} ({e.strerror or e})", "check the endpoint and network"
        )
    return ok(name, f"{what}{host}:{port} accepted a connection in {(time.monotonic() - start) * 1000:.0f} ms")


TLS_CHECK_JAVA = r"""
import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/** s3spark doctor: a TLS handshake with the JVM's default trust settings, as the AWS SDK does it. */
public class S3SparkTlsCheck {
    public static void main(String[] args) {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int timeout = Integer.parseInt(args[2]);
        try (Socket raw = new Socket()) {
            raw.connect(new InetSocketAddress(host, port), timeout);
            raw.setSoTimeout(timeout);
            SSLSocketFactory factory = (SSLSocketFactory) SSLSocketFactory.getDefault();
            try (SSLSocket tls = (SSLSocket) factory.createSocket(raw, host, port, true)) {
                SSLParameters params = tls.getSSLParameters();
                params.setEndpointIdentificationAlgorithm("HTTPS");  // host name check, like the SDK's
                tls.setSSLParameters(params);
                tls.startHandshake();
                X509Certificate cert = (X509Certificate) tls.getSession().getPeerCertificates()[0];
                System.out.println("OK " + tls.getSession().getProtocol() + " | "
                    + cert.getSubjectX500Principal().getName() + " | "
                    + cert.getIssuerX500Principal().getName() + " | " + cert.getNotAfter().toInstant());
            }
        } catch (Exception e) {
            StringBuilder text = new StringBuilder("FAIL");
            for (Throwable t = e; t != null; t = t.getCause()) {
                text.append(" | ").append(t.getClass().getName()).append(": ").append(t.getMessage());
                if (t.getCause() == t) break;
            }
            if (text.indexOf("trust store") >= 0) {  // say why: load the truststore as the JVM would
                String store = System.getProperty("javax.net.ssl.trustStore");
                String password = System.getProperty("javax.net.ssl.trustStorePassword");
                String type = System.getProperty("javax.net.ssl.trustStoreType", KeyStore.getDefaultType());
                try (FileInputStream in = new FileInputStream(store)) {
                    KeyStore.getInstance(type).load(in, password == null ? null : password.toCharArray());
                } catch (Exception why) {
                    Throwable root = why;
                    while (root.getCause() != null && root.getCause() != root) root = root.getCause();
                    text.append(" | truststore ").append(store).append(": ").append(why.getClass().getName())
                        .append(why.getMessage() == null ? "" : ": " + why.getMessage());
                    if (root != why) text.append(" (").append(root.getMessage()).append(")");
                }
            }
            System.out.println(text.toString().replace('\n', ' '));
            System.exit(1);
        }
    }
}
"""


def _argfile_quote(arg: str) -> str:
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tls_options(state: State) -> tuple[list[str], str | None]:
    """The trust-related -D options of the driver's JVM options, and the truststore they name (if any)."""
    options = shlex.split(state.profile.properties.get("spark.driver.extraJavaOptions", ""))
    tls = [o for o in options if _TLS_JVM_OPTION.match(o)]
    store = next((o.split("=", 1)[1] for o in reversed(tls) if o.startswith("-Djavax.net.ssl.trustStore=")), None)
    return tls, store


def run_tls_check(java: str, major: int, host: str, port: int, options: list[str]) -> str:
    """Run the Java TLS check; returns its one output line ('OK ...' or 'FAIL | ...')."""
    with tempfile.TemporaryDirectory(prefix="s3spark-doctor-") as tmp:
        source = Path(tmp) / "S3SparkTlsCheck.java"
        source.write_text(TLS_CHECK_JAVA)
        fast = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]
        args = [host, str(port), str(TLS_TIMEOUT_MS)]
        if major >= 11:
            # Options through an argument file (mode 0600 in a private dir): a truststore password stays off ps.
            argfile = Path(tmp) / "options"
            fd = os.open(argfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write("\n".join(_argfile_quote(o) for o in options) + "\n")
            cmd = [java, *fast, f"@{argfile}", str(source), *args]
        else:
            javac = Path(java).with_name("javac")
            if not javac.exists():
                raise UserError(f"Java {major} cannot run a .java file and there is no javac next to {java}")
            subprocess.run([str(javac), "-d", tmp, str(source)], check=True, capture_output=True, timeout=60)
            cmd = [java, *fast, *options, "-cp", tmp, "S3SparkTlsCheck", *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=JAVA_TIMEOUT_S)
    lines = [line for line in out.stdout.splitlines() if line.startswith(("OK", "FAIL"))]
    if not lines:
        tail = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return f"FAIL | the Java TLS check did not run: {tail}"
    return lines[0]


def _tls_fix(text: str, store: str | None) -> tuple[str, str]:
    """(what is wrong, how to fix) for the TLS check's failure text."""
    trusted_by = f"the truststore {store}" if store else "the JVM's default truststore (cacerts)"
    keytool = "keytool -importcert -noprompt -alias s3-ca -file ca.pem -keystore truststore.p12 -storepass PASS"
    if "PKIX" in text or "unable to find valid certification path" in text:
        if store:
            return (
                f"the server certificate is not trusted by {trusted_by} (PKIX path building failed)",
                "import the CA that signed the server certificate into it: "
                + keytool.replace("truststore.p12", shlex.quote(store)),
            )
        return (
            f"the server certificate is not trusted by {trusted_by}: PKIX path building failed, "
            "unable to find a valid certification path (a private or self-signed CA)",
            f"put the CA in a truststore ({keytool}) and name it in the profile: S3_TRUSTSTORE (and "
            "S3_TRUSTSTORE_PASSWORD) with --profile onprem, or -Djavax.net.ssl.trustStore=FILE "
            "-Djavax.net.ssl.trustStorePassword=PASS in spark.driver.extraJavaOptions and "
            "spark.executor.extraJavaOptions",
        )
    if "No subject alternative" in text or "doesn't match any of the subject alternative names" in text:
        return (
            "the server certificate does not name this host (" + _tls_reason(text) + ")",
            "use a host name the certificate lists in the endpoint, or reissue the certificate with a "
            "subjectAltName for this host (an IP endpoint needs IP:addr)",
        )
    if "password was incorrect" in text:
        return (
            f"cannot open {trusted_by}: wrong password",
            "set S3_TRUSTSTORE_PASSWORD (or -Djavax.net.ssl.trustStorePassword) to the truststore's password",
        )
    if "trust store" in text:
        return (
            f"cannot read {trusted_by} ({_tls_reason(text)})",
            "point it at a JKS or PKCS12 truststore (javax.net.ssl.trustStoreType if neither), built with: " + keytool,
        )
    if "Unsupported or unrecognized SSL message" in text or "plaintext connection" in text:
        return (
            "the endpoint does not speak TLS (a plain HTTP server?)",
            "use an http:// endpoint (or spark.hadoop.fs.s3a.connection.ssl.enabled false), or the server's HTTPS port",
        )
    if "CertificateExpired" in text or "NotAfter" in text:
        return f"the server certificate has expired ({_tls_reason(text)})", "renew the server certificate"
    return f"TLS handshake failed: {_tls_reason(text)}", "check the endpoint's certificate and the truststore"


def _tls_reason(text: str) -> str:
    parts = [p.strip() for p in text.split("|")[1:] if p.strip()]
    last = parts[-1] if parts else text
    return re.sub(r"^(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*:\s*", "", last)


def check_tls(state: State) -> Result:
    name = "TLS"
    ep = state.endpoint
    if ep is None:
        return skip(name, "no profile")
    if ep.scheme != "https":
        return skip(name, "plain HTTP endpoint: no certificate to verify")
    if not state.passed.get("endpoint TCP"):
        return skip(name, "the endpoint is not reachable")
    if ep.proxy:
        return skip(name, "through a proxy: the bucket check tests the tunnelled handshake")
    if state.java is None:
        return skip(name, "no usable java")
    options, store = _tls_options(state)
    trusted_by = f"truststore {store}" if store else "the JVM's default cacerts"
    try:
        start = time.monotonic()
        line = run_tls_check(state.java, state.java_major or 17, ep.host, ep.port, options)
        took = time.monotonic() - start
    except (OSError, subprocess.SubprocessError, UserError) as e:
        return fail(name, f"could not run the Java TLS check: {e}", "check the Java installation (a JDK 11+)")
    if line.startswith("OK"):
        protocol, subject, issuer, until = [p.strip() for p in line[2:].split("|")]
        note = ""
        executor_opts = state.profile.properties.get("spark.executor.extraJavaOptions", "")
        if store and "javax.net.ssl.trustStore=" not in executor_opts:
            note = "; note: spark.executor.extraJavaOptions names no truststore, executors on a cluster will fail"
        return ok(
            name,
            f"{ep.host}:{ep.port} certificate '{subject}' (issuer '{issuer}', valid until {until[:10]}) "
            f"trusted by {trusted_by}, {protocol}, {took:.1f} s{note}",
        )
    problem, fix = _tls_fix(line, store)
    return fail(name, f"{ep.host}:{ep.port}: {problem}", fix)


def _credential_provider_path(state: State) -> tuple[str | None, str]:
    return _hadoop_opt(state, "fs.s3a.security.credential.provider.path")


def check_credentials(state: State) -> Result:
    name = "credentials"
    env = os.environ
    key_id, secret = env.get("AWS_ACCESS_KEY_ID", ""), env.get("AWS_SECRET_ACCESS_KEY", "")
    providers = ""
    if state.profile is not None:
        providers = _hadoop_opt(state, "fs.s3a.aws.credentials.provider", "")[0] or ""
    if key_id and secret:
        token = " and AWS_SESSION_TOKEN" if env.get("AWS_SESSION_TOKEN") else ""
        detail = f"AWS_ACCESS_KEY_ID={mask(key_id)}, AWS_SECRET_ACCESS_KEY{token} set in the environment"
        if providers and not any(p in providers for p in _ENV_PROVIDERS):
            detail += f" (but the profile's fs.s3a.aws.credentials.provider is {providers.strip()})"
        return ok(name, detail)
    if state.profile is not None:
        path, origin = _credential_provider_path(state)
        if path:
            files = [p[len("jceks://file") :] for p in path.split(",") if p.strip().startswith("jceks://file")]
            absent = [f for f in files if not Path(f).is_file()]
            if absent:
                return fail(
                    name,
                    f"the Hadoop credential provider file {absent[0]} ({origin}) does not exist",
                    "create it with: hadoop credential create fs.s3a.access.key -provider jceks://file/... "
                    "(and fs.s3a.secret.key), or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                )
            return ok(name, f"from the Hadoop credential provider {path} ({origin})")
        if providers.strip():
            if any(p in providers for p in _PROFILE_PROVIDERS) and not (env.get("AWS_PROFILE") or _aws_files()):
                return fail(
                    name,
                    f"fs.s3a.aws.credentials.provider is {providers.strip()} but there is no AWS_PROFILE "
                    "and no ~/.aws/credentials",
                    "run aws configure, or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                )
            if not any(p in providers for p in _ENV_PROVIDERS):
                return ok(
                    name, f"from fs.s3a.aws.credentials.provider {providers.strip()} (the bucket check uses them)"
                )
    if env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") or env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        return ok(name, "no keys in the environment; container (ECS/EKS) credentials are offered")
    if state.endpoint is not None and state.endpoint.endpoint_host.endswith("amazonaws.com") and _imds_answers():
        return ok(name, "no keys in the environment; the EC2 instance metadata service answers (instance role)")
    if key_id and not secret:
        problem = f"AWS_ACCESS_KEY_ID={mask(key_id)} is set but AWS_SECRET_ACCESS_KEY is not"
    elif secret and not key_id:
        problem = "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
    else:
        problem = "no AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment"
    if env.get("AWS_PROFILE") and not any(p in providers for p in _PROFILE_PROVIDERS):
        problem += (
            f" (AWS_PROFILE={env['AWS_PROFILE']} is set, but S3A's default credential chain in Hadoop 3.3.4 "
            "does not read ~/.aws profiles)"
        )
    return fail(
        name,
        problem,
        "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys), or name "
        "a Hadoop credential provider in the profile (spark.hadoop.fs.s3a.security.credential.provider.path "
        "jceks://file/...); credentials never go in profiles",
    )


def _aws_files() -> bool:
    home = Path.home() / ".aws"
    return (home / "credentials").is_file() or (home / "config").is_file()


def _imds_answers() -> bool:
    try:
        with socket.create_connection(IMDS, timeout=0.5):
            return True
    except OSError:
        return False


def _spark(state: State) -> Any:
    from s3spark.session import SUBMITTED_PROFILE_ENV, session

    os.environ.pop(SUBMITTED_PROFILE_ENV, None)  # set, session() would leave the profile out: always apply it
    return session(profile=state.profile_spec, master="local[1]", conf={"spark.ui.enabled": "false"})


def _java_class(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    try:
        return str(java.getClass().getName()) if java is not None else type(exc).__name__
    except Exception:  # noqa: BLE001 - the gateway may be gone
        return type(exc).__name__


def _shorten(message: str) -> str:
    """An s3a error message without its noise: the "`path': operation on path:" prefix, Java class names,
    the SDK's request ids and a repeated sentence; the HTTP status and the S3 error code stay."""
    message = re.sub(r"^`?s3a://[^\s']*'?:\s*(?:\w+ on \S+:\s*)?", "", message)
    message = re.sub(r"\b(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error):\s*", "", message)
    message = re.sub(
        r"\s*\(Service: [^;)]*; Status Code: (\d+); Error Code: ([\w.]+)[^)]*\)", r" (HTTP \1, \2)", message
    )
    message = re.sub(r"[:,;]?\s*S3 Extended Request ID: [^\s)]+\)?", "", message).strip().rstrip(":")
    half = len(message) // 2
    if len(message) % 2 == 1 and message[:half] == message[half + 1 :]:
        message = message[:half]
    return message


def _hint(exc: BaseException, text: str) -> str:
    cls = _java_class(exc)
    if cls.endswith("UnknownStoreException") or "NoSuchBucket" in text:
        return "create the bucket, or fix its name in the URI (and the endpoint, if it is on another store)"
    if "InvalidAccessKeyId" in text or "SignatureDoesNotMatch" in text:
        return "the keys are wrong for this store: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    if cls.endswith("AccessDeniedException") or "AccessDenied" in text or "403" in text:
        return "check that the bucket policy (or IAM policy) allows these keys to list and write here"
    if "PKIX" in text:
        return "see the TLS check: the JVM does not trust the server certificate"
    return "rerun a job on this URI with --verbose for the Java stack trace"


def _failure_text(exc: BaseException) -> str:
    """One line for a failed s3a call: errors.translate() when it knows it, else the Java message plus a hint."""
    from s3spark.errors import translate

    translated = translate(exc)
    if translated is not None:
        return str(translated)
    message = _shorten(java_message(exc))
    return f"{message} — {_hint(exc, message + ' ' + _java_class(exc))}"


class _Fs:
    """The s3a FileSystem of the bucket, through py4j."""

    def __init__(self, spark: Any, uri: str) -> None:
        self.jvm = spark._jvm
        path = self.jvm.org.apache.hadoop.fs.Path(uri)
        self.fs = path.getFileSystem(spark._jsc.hadoopConfiguration())

    def path(self, uri: str) -> Any:
        return self.jvm.org.apache.hadoop.fs.Path(uri)


def _is_not_found(exc: BaseException) -> bool:
    return _java_class(exc) == "java.io.FileNotFoundException"


def check_bucket(state: State, spark_holder: list[Any]) -> Result:
    name = "bucket"
    if not state.uri:
        return skip(name, "no s3a://bucket/prefix given")
    needed = ("java", "pyspark", "jars", "profile", "endpoint DNS", "endpoint TCP", "credentials")
    broken = [n for n in needed if not state.passed.get(n)]
    if state.passed.get("TLS") is False:
        broken.append("TLS")
    if broken:
        return skip(name, f"fix {', '.join(broken)} first")
    start = time.monotonic()
    try:
        spark = _spark(state)
        spark_holder.append(spark)
        fs = _Fs(spark, state.uri)
    except Exception as e:  # noqa: BLE001 - any failure here is reported as the check's result
        return fail(name, f"cannot start Spark with profile '{state.profile_spec}': {scrub(_failure_text(e))}")
    started = time.monotonic() - start
    try:
        count, more = 0, False
        it = fs.fs.listStatusIterator(fs.path(state.uri))
        while it.hasNext():
            if count == MAX_LISTED:
                more = True
                break
            it.next()
            count += 1
        listed = f"{count}{'+' if more else ''} entr{'y' if count == 1 else 'ies'}"
    except Exception as e:  # noqa: BLE001
        if not _is_not_found(e):
            return fail(name, f"cannot list {state.uri}: {_failure_text(e)}")
        listed = "prefix does not exist yet (0 entries)" if state.prefix else "0 entries"
    took = time.monotonic() - start
    return ok(
        name,
        f"bucket '{state.bucket}' exists, {state.uri} listed through s3a: {listed} "
        f"({took:.1f} s, {started:.1f} s of it starting Spark)",
    )


def check_write(state: State, spark_holder: list[Any]) -> Result:
    name = "write test"
    if not state.write_test:
        return skip(name, "pass --write-test to write, read back and delete a small object")
    if not state.passed.get("bucket"):
        return skip(name, "the bucket check did not pass")
    fs = _Fs(spark_holder[0], state.uri)
    base = state.uri.rstrip("/")
    target = f"{base}/_s3spark_doctor_{secrets.token_hex(6)}"
    payload = f"s3spark doctor write test {time.time()}\n".encode()
    start = time.monotonic()
    step = "find which directories exist under"
    try:
        # Deleting the last file of a directory makes s3a leave a directory marker: remember which levels
        # of the prefix did not exist, so that the markers for them can be removed afterwards.
        created: list[str] = []
        level = base
        while level.count("/") > 2 and not fs.fs.exists(fs.path(level)):
            created.append(level)
            level = level.rsplit("/", 1)[0]
        step = "write"
        out = fs.fs.create(fs.path(target), False)
        try:
            out.write(bytearray(payload))
        finally:
            out.close()
        step = "read back"
        stream = fs.fs.open(fs.path(target))
        try:
            data = bytes(fs.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
        if data != payload:
            fs.fs.delete(fs.path(target), False)
            return fail(
                name,
                f"{target} read back {len(data)} bytes that differ from the {len(payload)} written",
                "check the store's consistency and any proxy or gateway in between",
            )
        step = "delete"
        fs.fs.delete(fs.path(target), False)
        step = "confirm the deletion of"
        if fs.fs.exists(fs.path(target)):
            return fail(name, f"{target} still exists after its delete", "check the store's delete permissions")
    except Exception as e:  # noqa: BLE001
        problem = f"cannot {step} {target}: {_failure_text(e)}"
        if step in ("read back", "delete", "confirm the deletion of"):
            try:  # the object was written: do not leave it behind
                fs.fs.delete(fs.path(target), False)
            except Exception:  # noqa: BLE001
                problem += f" (the test object may remain: delete {target})"
        return fail(name, problem)
    note = _remove_markers(fs, created)
    took = time.monotonic() - start
    return ok(name, f"wrote {len(payload)} bytes to {target}, read them back, deleted it: gone ({took:.1f} s){note}")


def _remove_markers(fs: _Fs, created: list[str]) -> str:
    """Remove the empty directory markers s3a left for prefix levels that did not exist before the write test.

    Deepest first, each with a non-recursive delete, which s3a refuses for a directory that is not empty: it
    can never remove anything but a marker. Best effort: a failure is a note, the write test itself passed.
    """
    for level in created:
        try:
            if fs.fs.exists(fs.path(level)):
                fs.fs.delete(fs.path(level), False)
        except Exception as e:  # noqa: BLE001
            return f"; note: could not remove the empty directory marker {level}/ ({_shorten(java_message(e))})"
    return ""


# --- driver -------------------------------------------------------------------------------------------


def parse_uri(uri: str) -> tuple[str, str]:
    """(bucket, prefix) of s3a://bucket[/prefix]; UserError (bad usage) otherwise."""
    m = re.fullmatch(r"([a-zA-Z0-9]+)://([^/]+)/?(.*)", uri)
    if not m or m.group(1).lower() != "s3a":
        hint = f" (s3a://{m.group(2)}/{m.group(3)} for s3a)" if m and m.group(1).lower() in ("s3", "s3n") else ""
        raise UserError(f"'{uri}' is not an s3a://BUCKET[/PREFIX] URI{hint}")
    return m.group(2), m.group(3).strip("/")


def run(state: State, emit: Callable[[str], None] = print) -> int:
    """Run every check in order, print one line each and the summary; the exit code (0 or 1)."""
    spark_holder: list[Any] = []
    steps: list[tuple[str, Callable[[State], Result]]] = [
        ("java", check_java),
        ("pyspark", check_pyspark),
        ("jars", check_jars),
        ("profile", check_profile),
        ("endpoint DNS", check_dns),
        ("endpoint TCP", check_tcp),
        ("TLS", check_tls),
        ("credentials", check_credentials),
        ("bucket", lambda s: check_bucket(s, spark_holder)),
        ("write test", lambda s: check_write(s, spark_holder)),
    ]
    results = []
    try:
        for name, step in steps:
            try:
                result = step(state)
            except Exception as e:  # noqa: BLE001 - a bug in one check must not hide the others
                result = fail(name, f"the check itself crashed ({type(e).__name__}: {e})", "please report this")
            if result.status != SKIP:
                state.passed[result.name] = result.status == OK
            results.append(result)
            emit(scrub(result.line()))
            sys.stdout.flush()
    finally:
        for spark in spark_holder:
            try:
                spark.stop()
            except Exception:  # noqa: BLE001, S110 - stopping is best effort
                pass
    ran = [r for r in results if r.status != SKIP]
    failed = [r for r in ran if r.status == FAIL]
    skipped = len(results) - len(ran)
    tail = f" ({skipped} skipped)" if skipped else ""
    if failed:
        emit(f"{len(failed)} of {len(ran)} checks failed{tail}")
        return 1
    emit(f"all {len(ran)} checks passed{tail}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./spark-submit.sh --doctor",
        description="Check that s3a jobs can run with a profile: Java, pyspark, jars, the profile, the "
        "endpoint (DNS, TCP, TLS trust), credentials, and optionally a bucket (list, and write with "
        "--write-test). One line per check: ✓ passed, ✗ failed (with the fix), - skipped.",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--profile", help="profile spec as for jobs (default $S3SPARK_PROFILE or local)")
    parser.add_argument("uri", nargs="?", metavar="s3a://BUCKET[/PREFIX]", help="bucket and prefix to list")
    parser.add_argument(
        "--write-test", action="store_true", help="also write, read back and delete a small object under the prefix"
    )
    args = parser.parse_args(argv)
    try:
        bucket, prefix = parse_uri(args.uri) if args.uri else (None, "")
        if args.write_test and not args.uri:
            raise UserError("--write-test needs an s3a://BUCKET[/PREFIX] to write under")
    except UserError as e:
        parser.print_usage(sys.stderr)
        print(f"error: {e}", file=sys.stderr)
        return 2
    uri = f"s3a://{bucket}/{prefix}" if bucket else None
    spec = args.profile or os.environ.get("S3SPARK_PROFILE") or "local"  # as s3spark.session.profile_spec
    state = State(spec, uri, bucket, prefix, args.write_test)
    return run(state)


if __name__ == "__main__":
    sys.exit(main())
