"""A local Spark standalone cluster on 127.0.0.1: one master and N workers from the pip-installed pyspark.

For trying cluster runs on one machine and for tests. The daemons are ``bin/spark-class`` running
``org.apache.spark.deploy.master.Master`` and ``org.apache.spark.deploy.worker.Worker``; the workers have
no s3a jars of their own: jobs ship them with spark.jars (``./spark-submit.sh`` does).

Python use (tests)::

    with LocalCluster.start(tmp_path / "cluster", workers=2, cores=1, memory="1g") as cluster:
        run("./spark-submit.sh", "--master", cluster.master_url, ...)

Command line: ``scripts/local-cluster start|stop|status|env|check`` (see ``--help``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from s3spark import processes
from s3spark.errors import UserError
from s3spark.jars import pyspark_jars_dir
from s3spark.paths import cache_dir

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"
READY_TIMEOUT_S = 90.0  # two JVMs per worker start on shared cores: give them time
STOP_GRACE_S = 10.0
DAEMON_MEMORY = "512m"  # heap of the master and worker daemons themselves (Spark's default is 1g)
# Fail instead of silently moving to the next port (Spark's default), so the URLs we print are the real ones;
# a stopped application's work directory (with its copy of the shipped jars) is cleaned after an hour.
DAEMON_JAVA_OPTS = "-Dspark.port.maxRetries=0"
WORKER_OPTS = " ".join(
    [
        "-Dspark.worker.cleanup.enabled=true",
        "-Dspark.worker.cleanup.interval=600",
        "-Dspark.worker.cleanup.appDataTtl=3600",
    ]
)
_MEMORY = re.compile(r"[1-9][0-9]*[mMgG]")
# Inherited variables that would point the daemons at another Spark or at a Python driver's gateway.
_NOT_INHERITED = ("SPARK_", "PYSPARK_GATEWAY", "PYSPARK_SUBMIT_ARGS")
_MINIMAL_ENV = ("PATH", "HOME", "JAVA_HOME", "LANG", "TMPDIR")


def spark_class() -> Path:
    """bin/spark-class of the Spark in use ($SPARK_HOME, else the installed pyspark)."""
    path = pyspark_jars_dir().parent / "bin" / "spark-class"
    if not path.is_file():
        raise UserError(f"no {path}: install pyspark (./spark-submit.sh --setup) or set SPARK_HOME to a Spark 3.5")
    return path


def master_json(webui_url: str, timeout: float = 2.0) -> dict[str, Any]:
    """The master's state as its web UI serves it at /json/ (workers, cores, memory, applications)."""
    with urllib.request.urlopen(webui_url.rstrip("/") + "/json/", timeout=timeout) as response:
        return json.load(response)


def alive_workers(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]


@dataclass
class Daemon:
    """One master or worker JVM that this module started."""

    role: str  # "master" or "worker-N"
    pid: int
    log_file: Path
    start_ticks: int | None = None  # process start time, guards against PID reuse
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    def is_running(self, marker: str) -> bool:
        """True if the process is alive and still ours (its command line holds the marker)."""
        if self._proc is not None:
            return self._proc.poll() is None
        if self.pid <= 1 or not processes.alive(self.pid):
            return False
        if self.start_ticks is not None and processes.start_ticks(self.pid) not in (None, self.start_ticks):
            return False
        return marker in processes.cmdline(self.pid)

    def stop(self, marker: str) -> None:
        """SIGTERM, then SIGKILL after a grace period; a PID that is no longer ours is left alone."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(STOP_GRACE_S)
            return
        if not self.is_running(marker):
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline:
                if not processes.alive(self.pid):
                    return
                time.sleep(0.1)
        raise UserError(f"Spark {self.role} (pid {self.pid}) did not stop after SIGKILL")


@dataclass
class LocalCluster:
    """A running standalone cluster started by this process or recorded in a state directory."""

    master_url: str  # spark://127.0.0.1:PORT
    webui_url: str  # http://127.0.0.1:PORT
    workers: int
    cores: int
    memory: str
    state_dir: Path
    daemons: list[Daemon] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        state_dir: Path,
        *,
        workers: int = 2,
        cores: int = 1,
        memory: str = "1g",
        env: dict[str, str] | None = None,
        inherit_env: bool = True,
        detach: bool = False,
        timeout: float = READY_TIMEOUT_S,
    ) -> LocalCluster:
        """Start a master and `workers` workers (each `cores` cores and `memory`) on 127.0.0.1, free ports.

        Returns once every worker has registered with the master. The daemons' environment is this process's
        (minus SPARK_* and PySpark gateway variables; with inherit_env=False only PATH, HOME, JAVA_HOME, LANG
        and TMPDIR) updated with `env`. Executors inherit it. Logs and work directories go to state_dir.
        detach=True puts the daemons in their own session so that they outlive this process.
        """
        if workers < 1 or cores < 1:
            raise UserError("a local cluster needs at least one worker with at least one core")
        if not _MEMORY.fullmatch(memory):
            raise UserError(f"worker memory {memory!r}: write it like 512m or 2g")
        state_dir = Path(state_dir).resolve()
        logs, work = state_dir / "logs", state_dir / "work"
        shutil.rmtree(work, ignore_errors=True)  # a fresh cluster: no old applications' copies of the jars
        for folder in (logs, work):
            folder.mkdir(parents=True, exist_ok=True)
        base_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(_NOT_INHERITED) and (inherit_env or k in _MINIMAL_ENV)
        }
        base_env.update(env or {})
        base_env.update(
            SPARK_LOCAL_IP=HOST,
            SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
            SPARK_DAEMON_JAVA_OPTS=DAEMON_JAVA_OPTS,
            SPARK_WORKER_OPTS=WORKER_OPTS,
        )
        launcher = str(spark_class())
        cluster: LocalCluster | None = None
        for attempt in range(1, 4):  # free ports are picked, then bound by the JVM: may race
            port = processes.free_port()
            ui_port = processes.free_port(exclude={port})
            master = _spawn(
                "master",
                [launcher, MASTER_CLASS, "--host", HOST, "--port", str(port), "--webui-port", str(ui_port)],
                base_env,
                logs,
                detach,
            )
            cluster = cls(f"spark://{HOST}:{port}", f"http://{HOST}:{ui_port}", workers, cores, memory, state_dir)
            cluster.daemons.append(master)
            if cluster._wait(lambda state: True, timeout, master):
                break
            cluster.stop()
            tail = processes.tail(master.log_file, 15)
            if attempt < 3 and "BindException" in tail:
                continue
            raise UserError(f"the Spark master did not start; {master.log_file} ends with:\n{tail}")
        assert cluster is not None
        try:
            for n in range(1, workers + 1):
                cmd = [launcher, WORKER_CLASS, "--host", HOST, "--port", "0", "--webui-port", "0"]
                cmd += ["--cores", str(cores), "--memory", memory, "--work-dir", str(work / f"worker-{n}")]
                cluster.daemons.append(_spawn(f"worker-{n}", [*cmd, cluster.master_url], base_env, logs, detach))
            if not cluster._wait(lambda state: len(alive_workers(state)) >= workers, timeout, *cluster.daemons):
                dead = next((d for d in cluster.daemons if d._proc and d._proc.poll() is not None), None)
                shown = dead or cluster.daemons[-1]
                what = f"{shown.role} exited" if dead else f"not all {workers} workers registered in {timeout:.0f} s"
                raise UserError(
                    f"local cluster: {what}; {shown.log_file} ends with:\n{processes.tail(shown.log_file, 15)}"
                )
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _wait(self, ready, timeout: float, *watched: Daemon) -> bool:
        """Poll the master's JSON until ready(state); False when a watched process exits or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(d._proc is not None and d._proc.poll() is not None for d in watched):
                return False
            with contextlib.suppress(OSError, ValueError):
                if ready(master_json(self.webui_url)):
                    return True
            time.sleep(0.25)
        return False

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def is_running(self) -> bool:
        master = next((d for d in self.daemons if d.role == "master"), None)
        return master is not None and master.is_running(MASTER_CLASS)

    def stop(self) -> None:
        """Stop the workers (which end their executors), then the master; only processes started here."""
        for daemon in sorted(self.daemons, key=lambda d: d.role == "master"):
            daemon.stop(_marker(daemon))

    def state(self) -> dict[str, Any]:
        """The master's JSON state (raises OSError when it does not answer)."""
        return master_json(self.webui_url)

    def env(self) -> dict[str, str]:
        """Environment for ./spark-submit.sh: the master URL as the default master."""
        return {"S3SPARK_MASTER": self.master_url}

    def export_lines(self) -> str:
        return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.env().items())

    def describe(self) -> str:
        try:
            alive = alive_workers(self.state())
        except (OSError, ValueError):
            return f"master {self.master_url} is not answering at {self.webui_url}"
        each = ", ".join(sorted({f"{w['cores']} core(s) and {w['memory']} MB" for w in alive})) or "-"
        return (
            f"master {self.master_url} (web UI {self.webui_url}); {len(alive)} of {self.workers} worker(s) alive, "
            f"each with {each}"
        )


def _marker(daemon: Daemon) -> str:
    """What the daemon's command line holds: its main class."""
    return MASTER_CLASS if daemon.role == "master" else WORKER_CLASS


def _spawn(role: str, cmd: list[str], env: dict[str, str], logs: Path, detach: bool) -> Daemon:
    log_file = logs / f"{role}.log"
    with log_file.open("a") as log:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(cmd)}\n")
        log.flush()
        proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=detach
        )
    # spark-class execs java once it has built the command line: the PID becomes the daemon's JVM.
    return Daemon(role=role, pid=proc.pid, log_file=log_file, start_ticks=processes.start_ticks(proc.pid), _proc=proc)


# --------------------------------------------------------------------------- command-line state

_STATE = "cluster.json"


def default_state_dir() -> Path:
    """Where `scripts/local-cluster` keeps its cluster: state file, logs/ and work/."""
    return cache_dir() / "local-cluster"


def save(cluster: LocalCluster) -> None:
    state: dict[str, Any] = {
        "master_url": cluster.master_url,
        "webui_url": cluster.webui_url,
        "workers": cluster.workers,
        "cores": cluster.cores,
        "memory": cluster.memory,
    }
    state["daemons"] = [
        {"role": d.role, "pid": d.pid, "log_file": str(d.log_file), "start_ticks": d.start_ticks}
        for d in cluster.daemons
    ]
    processes.write_private(cluster.state_dir / _STATE, json.dumps(state, indent=2) + "\n", 0o644)


def _daemons(state: dict[str, Any]) -> list[Daemon]:
    return [Daemon(d["role"], int(d["pid"]), Path(d["log_file"]), d.get("start_ticks")) for d in state["daemons"]]


def load(state_dir: Path) -> LocalCluster | None:
    """The cluster recorded in state_dir, if its master is still running; else None."""
    try:
        state = json.loads((state_dir / _STATE).read_text())
        daemons = _daemons(state)
        cluster = LocalCluster(
            state["master_url"],
            state["webui_url"],
            state["workers"],
            state["cores"],
            state["memory"],
            state_dir,
            daemons,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return cluster if cluster.is_running() else None


def cli_start(state_dir: Path, *, workers: int, cores: int, memory: str) -> LocalCluster:
    state_dir.mkdir(parents=True, exist_ok=True)
    with processes.locked(state_dir / ".lock"):
        running = load(state_dir)
        if running:
            print(f"local cluster already running: {running.describe()}", file=sys.stderr)
            return running
        cluster = LocalCluster.start(state_dir, workers=workers, cores=cores, memory=memory, detach=True)
        try:
            save(cluster)
        except BaseException:  # an unrecorded cluster could never be stopped by `stop`
            cluster.stop()
            raise
        print(f"local cluster running: {cluster.describe()}; logs in {state_dir / 'logs'}", file=sys.stderr)
        return cluster


def cli_stop(state_dir: Path) -> bool:
    with processes.locked(state_dir / ".lock") if state_dir.is_dir() else contextlib.nullcontext():
        try:
            state = json.loads((state_dir / _STATE).read_text())
            daemons = _daemons(state)
        except (OSError, ValueError, KeyError, TypeError):
            return False
        running = [d for d in daemons if d.is_running(_marker(d))]
        for daemon in sorted(running, key=lambda d: d.role == "master"):
            daemon.stop(_marker(daemon))
        (state_dir / _STATE).unlink(missing_ok=True)
        return bool(running)


def check(webui_url: str, workers: int = 0) -> tuple[bool, str]:
    """Health check of a standalone master or worker through its web UI's JSON.

    A master is healthy when it is ALIVE with at least `workers` alive workers; a worker when it has
    registered with its master.
    """
    try:
        state = master_json(webui_url, timeout=5)
    except (OSError, ValueError) as exc:
        return False, f"web UI {webui_url} not answering: {exc}"
    if "workers" not in state:  # a worker's page: it learns its master's web UI when it registers
        registered = bool(state.get("masterwebuiurl"))
        verb = "registered with" if registered else "not registered yet with"
        return registered, f"worker {state.get('id')} {verb} {state.get('masterurl')}"
    alive = len(alive_workers(state))
    ok = state.get("status") == "ALIVE" and alive >= workers
    return ok, f"master {state.get('url')} {state.get('status')}, {alive} worker(s) alive (want {workers})"


def main(argv: list[str] | None = None) -> int:
    """`local-cluster start|stop|status|env|check`."""
    parser = argparse.ArgumentParser(
        prog="local-cluster",
        description="Run a Spark standalone cluster (one master, N workers) on 127.0.0.1 from the installed pyspark.",
        epilog='Typical use:  eval "$(scripts/local-cluster start)"  # sets S3SPARK_MASTER for ./spark-submit.sh\n'
        "              ./spark-submit.sh --profile minio jobs/csv_to_parquet.py ...;  scripts/local-cluster stop",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=default_state_dir(),
        help="state directory: state file, logs/, work/ (default: %(default)s)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_start = sub.add_parser(
        "start", help="start a master and workers in the background; print `export S3SPARK_MASTER=...`"
    )
    p_start.add_argument("--workers", type=int, default=2, help="number of workers (default: %(default)s)")
    p_start.add_argument("--cores", type=int, default=1, help="cores per worker (default: %(default)s)")
    p_start.add_argument("--memory", default="1g", help="memory per worker for executors (default: %(default)s)")
    sub.add_parser("stop", help="stop the daemons recorded in --dir (only those processes)")
    sub.add_parser("status", help="say whether it runs and how many workers are alive: exit 0 if running, 1 if not")
    sub.add_parser("env", help="print the `export ...` line of the running cluster again")
    p_check = sub.add_parser(
        "check", help="health check of any standalone master or worker through its web UI (exit 0 if healthy)"
    )
    p_check.add_argument("--url", required=True, help="web UI of a master or worker, e.g. http://spark-master:8080")
    p_check.add_argument(
        "--workers", type=int, default=0, help="for a master: alive workers required (default: %(default)s)"
    )
    for p in sub.choices.values():  # --dir is accepted after the subcommand too
        p.add_argument("--dir", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    state_dir: Path = args.dir.expanduser().resolve()
    try:
        if args.command == "start":
            cluster = cli_start(state_dir, workers=args.workers, cores=args.cores, memory=args.memory)
            sys.stdout.write(cluster.export_lines())
        elif args.command == "stop":
            print("stopped" if cli_stop(state_dir) else f"not running (state dir {state_dir})", file=sys.stderr)
        elif args.command == "status":
            cluster = load(state_dir)
            if cluster is None:
                print(f"not running (state dir {state_dir})")
                return 1
            print(cluster.describe())
        elif args.command == "env":
            cluster = load(state_dir)
            if cluster is None:
                raise UserError(f"no local cluster is running in {state_dir}: run `scripts/local-cluster start`")
            sys.stdout.write(cluster.export_lines())
        elif args.command == "check":
            ok, message = check(args.url, args.workers)
            print(message)
            return 0 if ok else 1
    except UserError as exc:
        print(f"local-cluster: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
