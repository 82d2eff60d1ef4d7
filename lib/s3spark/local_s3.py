"""A local MinIO server on 127.0.0.1 for development, tests and CI, over HTTP or HTTPS.

Python use (tests)::

    with LocalS3.start(tmp_path / "data", tls=True) as s3:
        run_job(env=s3.env())

Command line: ``scripts/local-s3 start|stop|status|env|build`` (see ``--help``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from s3spark import processes
from s3spark.errors import UserError
from s3spark.paths import cache_dir

MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c"
MINIO_MODULE = "github.com/minio/minio"
REGION = "us-east-1"
DEFAULT_BUCKET = "s3spark"
TRUSTSTORE_PASSWORD = "changeit"
READY_TIMEOUT_S = 30.0
STOP_GRACE_S = 5.0
CERT_DAYS = 825


# --------------------------------------------------------------------------- the binary


def minio_path() -> Path:
    """Where the pinned MinIO binary lives (built or not)."""
    return cache_dir() / "minio" / MINIO_VERSION / "minio"


def ensure_minio() -> Path:
    """Return the pinned MinIO binary, building it from source with Go the first time."""
    target = minio_path()
    if _is_executable(target):
        return target
    go = shutil.which("go")
    if go is None:
        raise UserError(
            f"MinIO is not built yet and `go` is not on PATH: install Go >= 1.24 "
            f"(apt-get install golang-go, or your platform's Go package), "
            f"then run `scripts/local-s3 build` (it builds {MINIO_MODULE}@{MINIO_VERSION} into {target})"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with processes.locked(target.parent / ".build.lock"):  # another process may be building it right now
        if _is_executable(target):
            return target
        log = target.parent / "build.log"
        tmp_bin = target.parent / ".gobin"  # built aside, then renamed: never a half-written binary
        shutil.rmtree(tmp_bin, ignore_errors=True)
        print(f"building MinIO {MINIO_VERSION} from source (first time only, ~4 min)...", file=sys.stderr)
        env = {**os.environ, "CGO_ENABLED": "0", "GOBIN": str(tmp_bin)}
        cmd = [go, "install", "-trimpath", "-ldflags", "-s -w", f"{MINIO_MODULE}@{MINIO_VERSION}"]
        with log.open("w") as out:
            rc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        if rc != 0 or not _is_executable(tmp_bin / "minio"):
            raise UserError(
                f"building MinIO with `go install` failed (exit {rc}); see {log} "
                f"(last line: {processes.tail(log, 1) or 'empty'})"
            )
        os.replace(tmp_bin / "minio", target)
        shutil.rmtree(tmp_bin, ignore_errors=True)
    return target


# --------------------------------------------------------------------------- the server


@dataclass
class LocalS3:
    """A running MinIO server started by this process or recorded in a state file."""

    endpoint: str
    port: int
    console_port: int
    pid: int
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    data_dir: Path
    log_file: Path
    tls: bool = False
    ca_cert: Path | None = None
    truststore: Path | None = None
    truststore_password: str | None = None
    start_ticks: int | None = None  # process start time, guards against PID reuse
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def start(
        cls,
        data_dir: Path,
        *,
        tls: bool = False,
        port: int | None = None,
        bucket: str | None = DEFAULT_BUCKET,
        access_key: str | None = None,
        secret_key: str | None = None,
        run_dir: Path | None = None,
        detach: bool = False,
    ) -> LocalS3:
        """Start MinIO on 127.0.0.1 storing into data_dir and wait until it is ready.

        The log and TLS files go to run_dir (default: data_dir's parent). Credentials default to
        MINIO_ROOT_USER/MINIO_ROOT_PASSWORD, then AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, then random.
        detach=True puts the server in its own session so that it outlives this process.
        """
        data_dir = Path(data_dir).resolve()
        run_dir = Path(run_dir).resolve() if run_dir else data_dir.parent
        access_key, secret_key = resolve_credentials(access_key, secret_key)
        binary = ensure_minio()
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot use {exc.filename} as a MinIO directory: {exc.strerror}") from None
        log_file = run_dir / "minio.log"
        certs = make_certs(run_dir / "certs") if tls else None
        if port is not None and not processes.port_free(port):
            raise UserError(f"port {port} on 127.0.0.1 is already in use: pick another with --port, or omit it")

        env = {
            **os.environ,
            "MINIO_ROOT_USER": access_key,
            "MINIO_ROOT_PASSWORD": secret_key,
            "MINIO_UPDATE": "off",
            "MINIO_CALLHOME_ENABLE": "off",
        }
        attempts = 1 if port is not None else 3  # free ports are picked, then bound by MinIO: may race
        for attempt in range(1, attempts + 1):
            api_port = port if port is not None else processes.free_port()
            console_port = processes.free_port(exclude={api_port})
            cmd = [
                str(binary),
                "server",
                "--address",
                f"127.0.0.1:{api_port}",
                "--console-address",
                f"127.0.0.1:{console_port}",
            ]
            if certs:
                cmd += ["--certs-dir", str(certs["dir"])]
            cmd.append(str(data_dir))
            with log_file.open("a") as log:
                offset = log.tell()
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting MinIO on port {api_port}\n")
                log.flush()
                proc = subprocess.Popen(
                    cmd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=detach,
                )
            server = cls(
                endpoint=f"{'https' if tls else 'http'}://127.0.0.1:{api_port}",
                port=api_port,
                console_port=console_port,
                pid=proc.pid,
                access_key=access_key,
                secret_key=secret_key,
                data_dir=data_dir,
                log_file=log_file,
                tls=tls,
                ca_cert=certs["ca"] if certs else None,
                truststore=certs["truststore"] if certs else None,
                truststore_password=TRUSTSTORE_PASSWORD if certs else None,
                start_ticks=processes.start_ticks(proc.pid),
                _proc=proc,
            )
            if server._wait_ready(proc):
                break
            code = proc.poll()
            server.stop()
            tail = processes.tail(log_file, 12, after=offset)
            if code is not None and attempt < attempts and "already in use" in tail:
                continue  # lost the race for a port we picked: pick again
            what = f"exited with code {code}" if code is not None else f"was not ready after {READY_TIMEOUT_S:.0f} s"
            raise UserError(f"MinIO on {server.endpoint} {what}; {log_file} ends with:\n{tail}")
        if bucket:
            try:
                server.create_bucket(bucket)
            except BaseException:
                server.stop()
                raise
        return server

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> bool:
        """Poll /minio/health/ready until 200; False if the process exits or time runs out."""
        url = f"{self.endpoint}/minio/health/ready"
        ctx = ssl.create_default_context(cafile=str(self.ca_cert)) if self.ca_cert else None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            with contextlib.suppress(OSError):  # URLError, connection refused, reset...
                with urllib.request.urlopen(url, timeout=2, context=ctx) as resp:
                    if resp.status == 200:
                        return True
            time.sleep(0.1)
        return False

    def __enter__(self) -> LocalS3:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def is_running(self) -> bool:
        """True if our MinIO process is alive (checked by PID, command line and start time)."""
        if self._proc is not None:
            return self._proc.poll() is None
        return _is_our_minio(self.pid, self.port, self.start_ticks)

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL after a few seconds. Leaves unknown PIDs alone."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(STOP_GRACE_S)
            return
        if not self.is_running():  # gone, or the PID now belongs to some other process
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline:
                if not processes.alive(self.pid):
                    return
                time.sleep(0.1)
        raise UserError(f"MinIO (pid {self.pid}) did not stop after SIGKILL")

    def client(self) -> Any:
        """A boto3 S3 client for this server (path-style, us-east-1, trusting our CA under TLS)."""
        try:
            import boto3
            from botocore.config import Config
        except ImportError as exc:
            raise UserError("boto3 is needed to talk to the local S3 server: pip install -e '.[dev]'") from exc
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=REGION,
            verify=str(self.ca_cert) if self.ca_cert else None,
            config=Config(s3={"addressing_style": "path"}, signature_version="s3v4"),
        )

    def create_bucket(self, name: str) -> None:
        """Create a bucket; an existing bucket of ours is fine."""
        client = self.client()
        try:
            client.create_bucket(Bucket=name)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass

    def env(self) -> dict[str, str]:
        """Environment for jobs and clients: credentials, endpoint, region, and the truststore under TLS."""
        env = {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": REGION,
            "S3_ENDPOINT": self.endpoint,
        }
        if self.tls:
            env["S3_TRUSTSTORE"] = str(self.truststore)
            env["S3_TRUSTSTORE_PASSWORD"] = str(self.truststore_password)
            env["S3_CA_BUNDLE"] = str(self.ca_cert)  # PEM, for Python clients (boto3 verify=)
        return env

    def export_lines(self) -> str:
        """`export K=V` lines for a POSIX shell's eval."""
        return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.env().items())


def resolve_credentials(access_key: str | None = None, secret_key: str | None = None) -> tuple[str, str]:
    """Explicit keys, else MINIO_ROOT_USER/PASSWORD, else AWS_ACCESS_KEY_ID/SECRET, else random ones."""
    if not (access_key and secret_key):
        env = os.environ
        for user_var, pass_var in (
            ("MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"),
            ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        ):
            if env.get(user_var) and env.get(pass_var):
                access_key, secret_key = env[user_var], env[pass_var]
                break
        else:
            access_key, secret_key = "s3spark-" + secrets.token_hex(4), secrets.token_urlsafe(24)
    if len(access_key) < 3 or len(secret_key) < 8:
        raise UserError("MinIO needs an access key of at least 3 and a secret key of at least 8 characters")
    return access_key, secret_key


# --------------------------------------------------------------------------- TLS


def make_certs(certs_dir: Path) -> dict[str, Path]:
    """Make a fresh self-signed CA, a server cert for 127.0.0.1/localhost, and a JVM truststore.

    certs_dir gets public.crt and private.key (for MinIO --certs-dir), ca.crt (PEM) and
    truststore.p12 (PKCS12, password "changeit"); the CA key is deleted once used.
    """
    openssl = shutil.which("openssl")
    keytool = shutil.which("keytool")
    if openssl is None:
        raise UserError("TLS mode needs the `openssl` command: install it (apt-get install openssl)")
    if keytool is None:
        raise UserError("TLS mode needs `keytool` from a JDK (the one Spark runs on) on PATH")
    certs_dir = Path(certs_dir)
    shutil.rmtree(certs_dir, ignore_errors=True)
    (certs_dir / "CAs").mkdir(parents=True)
    os.chmod(certs_dir, 0o700)
    ca_key, ca, csr = certs_dir / "ca.key", certs_dir / "ca.crt", certs_dir / "server.csr"
    key, crt, ext = certs_dir / "private.key", certs_dir / "public.crt", certs_dir / "server.ext"
    truststore = certs_dir / "truststore.p12"
    ext.write_text(
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n"
    )
    days = str(CERT_DAYS)
    # fmt: off
    _run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca),
          "-days", days, "-subj", "/CN=s3spark local S3 CA",
          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    _run([openssl, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
          "-subj", "/CN=localhost"])
    _run([openssl, "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
          "-set_serial", str(secrets.randbits(63)), "-days", days, "-extfile", str(ext), "-out", str(crt)])
    # fmt: on
    for p in (ca_key, csr, ext):
        p.unlink()
    os.chmod(key, 0o600)
    shutil.copyfile(ca, certs_dir / "CAs" / "ca.crt")  # MinIO trusts its own CA for internal calls
    # fmt: off
    _run([keytool, "-importcert", "-noprompt", "-alias", "s3spark-local-ca", "-file", str(ca),
          "-keystore", str(truststore), "-storetype", "PKCS12", "-storepass", TRUSTSTORE_PASSWORD])
    # fmt: on
    return {"dir": certs_dir, "ca": ca, "cert": crt, "key": key, "truststore": truststore}


def _run(cmd: list[str]) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        out = (res.stderr or res.stdout).strip().splitlines()
        raise UserError(f"`{Path(cmd[0]).name} {cmd[1]}` failed: {out[-1] if out else f'exit {res.returncode}'}")


# --------------------------------------------------------------------------- processes and ports


def _is_executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def _is_our_minio(pid: int, port: int, start_ticks: int | None) -> bool:
    """True only for a live MinIO server process listening on our address, started when recorded."""
    if pid <= 1 or not processes.alive(pid):
        return False
    argv = processes.cmdline(pid)
    if not argv or Path(argv[0]).name != "minio" or "server" not in argv or f"127.0.0.1:{port}" not in argv:
        return False
    return start_ticks is None or processes.start_ticks(pid) in (None, start_ticks)


# --------------------------------------------------------------------------- command-line state


def default_state_dir() -> Path:
    """Where `scripts/local-s3` keeps its server: data, log, certs, pid and state files."""
    return cache_dir() / "local-s3"


_STATE = "state.json"  # non-secret: endpoint, ports, pid, TLS paths
_CREDS = "credentials.json"  # mode 0600, kept across restarts so the data stays readable
_PID = "minio.pid"


def load_running(state_dir: Path) -> LocalS3 | None:
    """The server recorded in state_dir if it is still running, else None."""
    try:
        pid = int((state_dir / _PID).read_text())
        state = json.loads((state_dir / _STATE).read_text())
        creds = json.loads((state_dir / _CREDS).read_text())
    except (OSError, ValueError):
        return None
    try:
        paths = {k: Path(v) if v else None for k, v in state.items() if k in ("ca_cert", "truststore")}
        server = LocalS3(
            **{k: v for k, v in state.items() if k not in ("ca_cert", "truststore", "data_dir", "log_file")},
            **paths,
            data_dir=Path(state["data_dir"]),
            log_file=Path(state["log_file"]),
            pid=pid,
            access_key=creds["access_key"],
            secret_key=creds["secret_key"],
        )
    except (KeyError, TypeError):  # a state file from another version: treat as not running
        return None
    return server if server.is_running() else None


def cli_start(state_dir: Path, *, tls: bool, port: int | None, bucket: str | None) -> LocalS3:
    """Start a detached server recorded in state_dir, or return the one already running there."""
    state_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(state_dir, 0o700)
    with processes.locked(state_dir / ".lock"):
        running = load_running(state_dir)
        if running:
            print(f"local S3 already running at {running.endpoint} (pid {running.pid})", file=sys.stderr)
            return running
        access_key = secret_key = None
        if not any(os.environ.get(v) for v in ("MINIO_ROOT_USER", "AWS_ACCESS_KEY_ID")):
            with contextlib.suppress(OSError, ValueError, KeyError):
                saved = json.loads((state_dir / _CREDS).read_text())
                access_key, secret_key = saved["access_key"], saved["secret_key"]
        if port is None:  # keep the last port when it is free, so that exported env stays valid
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                last = int(json.loads((state_dir / _STATE).read_text())["port"])
                port = last if processes.port_free(last) else None
        server = LocalS3.start(
            state_dir / "data",
            tls=tls,
            port=port,
            bucket=bucket,
            access_key=access_key,
            secret_key=secret_key,
            run_dir=state_dir,
            detach=True,
        )
        try:
            processes.write_private(
                state_dir / _CREDS,
                json.dumps({"access_key": server.access_key, "secret_key": server.secret_key}) + "\n",
            )
            state = {
                f.name: str(v) if isinstance(v := getattr(server, f.name), Path) else v
                for f in fields(server)
                if f.name not in ("access_key", "secret_key", "pid", "_proc")
            }
            processes.write_private(state_dir / _STATE, json.dumps(state, indent=2) + "\n", 0o644)
            processes.write_private(state_dir / _PID, f"{server.pid}\n", 0o644)
        except BaseException:  # an unrecorded server could never be stopped by `stop`
            server.stop()
            raise
        print(
            f"local S3 running at {server.endpoint} (pid {server.pid}); data in {server.data_dir}, "
            f"log {server.log_file}",
            file=sys.stderr,
        )
        return server


def cli_stop(state_dir: Path) -> bool:
    """Stop the server recorded in state_dir; False if none was running."""
    with processes.locked(state_dir / ".lock") if state_dir.is_dir() else contextlib.nullcontext():
        server = load_running(state_dir)
        if server:
            server.stop()
        (state_dir / _PID).unlink(missing_ok=True)
        return server is not None


def main(argv: list[str] | None = None) -> int:
    """`local-s3 start|stop|status|env|build`."""
    parser = argparse.ArgumentParser(
        prog="local-s3",
        description="Run a local MinIO S3 server on 127.0.0.1 for development, tests and CI. "
        f"MinIO {MINIO_VERSION} is built from source with Go on first use into {minio_path().parent}.",
        epilog='Typical use:  eval "$(scripts/local-s3 start --tls)"  ...  scripts/local-s3 stop',
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=default_state_dir(),
        help="state directory: data/, minio.log, certs/, pid and state files (default: %(default)s)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_start = sub.add_parser(
        "start",
        help="start a server in the background (or report the running one) and print `export ...` lines to eval",
    )
    p_start.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a fresh self-signed CA; exports S3_TRUSTSTORE for the JVM",
    )
    p_start.add_argument("--port", type=int, help="API port on 127.0.0.1 (default: a free one)")
    p_start.add_argument(
        "--bucket", default=DEFAULT_BUCKET, help="bucket to create, '' for none (default: %(default)s)"
    )
    sub.add_parser("stop", help="stop the server recorded in --dir (only that process)")
    sub.add_parser("status", help="say whether it runs: exit 0 if running, 1 if not")
    sub.add_parser("env", help="print the `export ...` lines of the running server again")
    sub.add_parser("build", help="only build (or find) the MinIO binary and print its path")
    # --dir is accepted after the subcommand too
    for p in sub.choices.values():
        p.add_argument("--dir", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    state_dir: Path = args.dir.expanduser().resolve()
    try:
        if args.command == "build":
            print(ensure_minio())
        elif args.command == "start":
            server = cli_start(state_dir, tls=args.tls, port=args.port, bucket=args.bucket or None)
            sys.stdout.write(server.export_lines())
        elif args.command == "stop":
            print("stopped" if cli_stop(state_dir) else f"not running (state dir {state_dir})", file=sys.stderr)
        elif args.command == "status":
            server = load_running(state_dir)
            if server is None:
                print(f"not running (state dir {state_dir})")
                return 1
            print(f"running at {server.endpoint} (pid {server.pid}, {'TLS' if server.tls else 'HTTP'})")
        elif args.command == "env":
            server = load_running(state_dir)
            if server is None:
                raise UserError(f"no local S3 server is running in {state_dir}: run `scripts/local-s3 start`")
            sys.stdout.write(server.export_lines())
    except UserError as exc:
        print(f"local-s3: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
