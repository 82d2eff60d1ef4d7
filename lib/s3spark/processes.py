"""Small process, port and file helpers shared by the local servers (MinIO, Spark standalone) and jobs."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(exclude: set[int] | None = None) -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in (exclude or set()):
            return port


def alive(pid: int) -> bool:
    """True if pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return stat.read_text().rpartition(")")[2].split()[0] != "Z"
    return True


def start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot (Linux), to tell a reused PID apart."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except FileNotFoundError:
        return []
    except OSError:  # no /proc (macOS): ask ps
        res = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True)
        return res.stdout.split()


def tail(path: Path, n: int, after: int = 0) -> str:
    """The last n lines of a file, from byte offset `after` on."""
    try:
        with path.open("rb") as f:
            f.seek(after)
            return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    with lock_file.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
