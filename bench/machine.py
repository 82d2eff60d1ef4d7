"""The environment a campaign ran in: machine, versions of every tool, and where the S3 server was."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from urllib.parse import urlsplit

import psutil

from bench.common import S3Store, python

PACKAGES = (
    "pandas",
    "numpy",
    "pyarrow",
    "dask",
    "s3fs",
    "duckdb",
    "duckdb-extension-httpfs",
    "polars",
    "pyspark",
    "delta-spark",
    "boto3",
    "psutil",
)
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed versions in the units' interpreter (None when not installed)."""
    code = (
        "import json, sys\nfrom importlib import metadata\nout = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try: out[name] = metadata.version(name)\n"
        "    except metadata.PackageNotFoundError: out[name] = None\n"
        "print(json.dumps(out))"
    )
    result = subprocess.run([python(), "-c", code, *names], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def importable(modules: set[str]) -> set[str]:
    """Which of these modules the units' interpreter can import (found, not imported)."""
    code = "import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m)))"
    result = subprocess.run([python(), "-c", code, *sorted(modules)], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def java_version() -> str | None:
    try:
        result = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[0] if lines else None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(store: S3Store | None) -> dict:
    """Everything about the run's environment that explains its numbers (no keys)."""
    memory = psutil.virtual_memory().total
    env = {
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "memory_bytes": memory,
        "memory_gib": round(memory / 1024**3, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "java": java_version(),
        "versions": package_versions(),
    }
    if store is not None:
        host = urlsplit(store.endpoint).hostname or ""
        env["s3"] = {
            "endpoint": store.endpoint,
            "same_machine": host in LOOPBACK,
            "note": (
                "the S3 server runs on this machine: it shares the CPU cores, memory and disk with the tools, "
                "so S3 timings include its work, and no network is crossed"
                if host in LOOPBACK
                else "remote S3 endpoint: timings include the network"
            ),
        }
    return env
