"""Run one command as a fresh process tree: wall time, peak RSS of the whole tree, exit code, output."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

POLL_S = 0.05


@dataclass
class Measurement:
    seconds: float
    peak_rss: int  # bytes: the largest sum of RSS over the process and all its descendants seen at one poll
    exit_code: int | None  # None: killed (see killed)
    stdout: str
    stderr: str
    killed: str | None = None  # why the harness killed it


def tree_rss(proc: psutil.Process) -> int:
    """RSS of a process and all its descendants (the JVM behind PySpark is a child). Pages shared between
    processes are counted once per process, as `ps` does."""
    total = 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass  # gone between listing and reading
    return total


def measure(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 3600.0, max_rss: int | None = None
) -> Measurement:
    """Start ``argv`` in its own session, poll the tree's RSS every ``POLL_S`` until it exits.

    Wall time covers the whole process, interpreter and JVM start-up included. Output goes to temporary
    files (no pipe to fill up). The whole process group is killed at ``timeout`` seconds, or when the tree's
    RSS passes ``max_rss`` bytes (before the kernel's OOM killer picks a victim, which may be the S3 server).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err, start_new_session=True)
        proc = psutil.Process(child.pid)
        peak = 0
        exit_code: int | None = None
        killed: str | None = None
        while True:
            peak = max(peak, tree_rss(proc))
            if max_rss and peak > max_rss:
                killed = f"killed: the process tree's RSS passed {max_rss / 1024**3:.1f} GiB (--max-rss)"
            elif time.perf_counter() - start > timeout:
                killed = f"killed after {timeout:.0f} s (--timeout)"
            if killed:
                _kill_group(child.pid)
                child.wait()
                break
            try:
                exit_code = child.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
        seconds = time.perf_counter() - start
        _kill_group(child.pid)  # anything the unit left behind (a stray JVM) is not the next unit's problem
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        return Measurement(seconds, peak, exit_code, stdout, stderr, killed)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
