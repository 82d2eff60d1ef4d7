"""The catalogue of measured units: which tools run which workload on which source, and their command lines.

A unit is one (workload, tool, source, size). Python tools run as ``python -m bench.unit``; our jobs run as
users run them (``./spark-submit.sh``, or the job file with a minimal PYSPARK_SUBMIT_ARGS); awk runs in sh.
Every command is started as a fresh process by the harness, which reads its answer from stdout.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import REPO_ROOT, S3Store, python

WORKLOADS = {
    "W1": "load CSV, filter count == 1, count",
    "W2": "CSV -> Parquet (snappy), S3 -> S3",
    "W3": "the limits: the raw object, and awk on the local file",
    "W4": "Parquet on S3 -> pandas",
}
# What each workload's answer counts, and so which dataset figure it must equal.
KINDS = {"W1": "rows_matched", "W2": "rows_written", "W4": "rows"}


@dataclass(frozen=True)
class Spec:
    """A tool for a workload: how it runs and what it needs."""

    workload: str
    tool: str
    sources: tuple[str, ...]  # "s3", "local"
    runner: str  # "python" (bench.unit), "job" (jobs/*.py, minimal config), "submit" (spark-submit.sh), "shell"
    needs: tuple[str, ...] = ()  # Python modules that must be importable
    kind: str = ""  # rows_matched, rows_written, bytes, rows
    note: str = ""

    def needs_for(self, source: str) -> tuple[str, ...]:
        """The modules a run on this source needs (s3fs and httpfs only for S3)."""
        return tuple(m for m in self.needs if source == "s3" or m not in S3_ONLY_MODULES)

    @property
    def uses_spark(self) -> bool:
        return self.runner in ("job", "submit") or self.tool in IN_PROCESS_SPARK

    @property
    def answer_kind(self) -> str:
        return self.kind or KINDS[self.workload]


S3_ONLY_MODULES = {"s3fs", "duckdb_extension_httpfs"}
IN_PROCESS_SPARK = {"spark-classic", "pandas-on-spark", "handoff-arrow", "handoff-noarrow"}
BOTH = ("s3", "local")
S3 = ("s3",)
SPECS: tuple[Spec, ...] = (
    Spec("W1", "pandas", BOTH, "python", ("pandas", "s3fs"), note="read_csv, C engine, s3fs"),
    Spec("W1", "pyarrow", BOTH, "python", ("pyarrow",), note="pyarrow.dataset CSV scan, count_rows"),
    Spec("W1", "dask", BOTH, "python", ("dask", "s3fs"), note="dd.read_csv, default blocksize, threads"),
    Spec("W1", "duckdb", BOTH, "python", ("duckdb", "duckdb_extension_httpfs"), note="read_csv + httpfs"),
    Spec("W1", "polars", BOTH, "python", ("polars",), note="scan_csv, lazy"),
    Spec("W1", "spark-classic", BOTH, "python", ("pyspark",), note="plain PySpark script, minimal s3a config"),
    Spec("W1", "ours-minimal", BOTH, "job", ("pyspark",), note="jobs/csv_filter_count.py, minimal s3a config"),
    Spec("W1", "ours", BOTH, "submit", ("pyspark",), note="./spark-submit.sh --profile P jobs/csv_filter_count.py"),
    Spec("W1", "pandas-on-spark", BOTH, "python", ("pyspark",), note="read_table(csv) + (psdf.count == 1).sum()"),
    Spec("W2", "duckdb", S3, "python", ("duckdb", "duckdb_extension_httpfs"), note="COPY ... TO s3 (parquet)"),
    Spec("W2", "polars", S3, "python", ("polars",), note="scan_csv -> sink_parquet (streaming)"),
    Spec("W2", "pyarrow", S3, "python", ("pyarrow",), note="dataset scan -> write_dataset"),
    Spec(
        "W2", "ours-classic", S3, "job", ("pyspark",), note="jobs/csv_to_parquet.py, minimal config (classic committer)"
    ),
    Spec("W2", "ours", S3, "submit", ("pyspark",), note="./spark-submit.sh --profile P jobs/csv_to_parquet.py"),
    Spec("W3", "boto3-get", S3, "python", ("boto3",), "bytes", "one GET, streamed and counted"),
    Spec("W3", "boto3-download", S3, "python", ("boto3",), "bytes", "download_fileobj: ranged GETs on threads"),
    Spec("W3", "http-get", S3, "python", (), "bytes", "one GET of a presigned URL with http.client"),
    Spec("W3", "awk", ("local",), "shell", (), "rows_matched", "awk '$3 == 1' FILE | wc -l"),
    Spec("W4", "pyarrow", S3, "python", ("pyarrow",), note="pq.read_table(S3FileSystem).to_pandas()"),
    Spec("W4", "handoff-arrow", S3, "python", ("pyspark",), note="read_table(parquet) + to_pandas (Arrow)"),
    Spec("W4", "handoff-noarrow", S3, "python", ("pyspark",), note="read_table(parquet) + to_pandas, Arrow off"),
)


def find(workload: str, tool: str) -> Spec | None:
    return next((s for s in SPECS if s.workload == workload and s.tool == tool), None)


@dataclass
class Context:
    """What the commands of one size need: inputs, the store, the profile and what was prepared."""

    local_path: Path
    s3_uri: str  # s3://bucket/key of the CSV
    profile: str
    store: S3Store | None
    jars: list[str] = field(default_factory=list)  # hadoop-aws + SDK bundle, for the minimal-config runs
    presigned_url: str = ""
    parquet_uri: str = ""  # s3://bucket/prefix: W4's input
    parquet_bytes: int = 0
    driver_memory: str = ""  # W4's hand-off: the driver holds the whole table
    base_env: dict[str, str] = field(default_factory=dict)


@dataclass
class Command:
    argv: list[str]
    env: dict[str, str]
    cwd: Path = REPO_ROOT


def s3a(uri: str) -> str:
    return "s3a://" + uri.split("://", 1)[1] if "://" in uri else uri


def job_args(workload: str, src: str, out: str) -> list[str]:
    """Our job and its options for a workload."""
    common = ["--input", src, "--schema", "@pageviews", "--delimiter", "space", "--no-header"]
    if workload == "W1":
        return ["jobs/csv_filter_count.py", *common, "--filter", "count = 1"]
    return ["jobs/csv_to_parquet.py", *common, "--output", out, "--mode", "overwrite"]


def minimal_submit_args(ctx: Context) -> str:
    """PYSPARK_SUBMIT_ARGS of the minimal configuration: local[2], the two s3a jars, endpoint, path style, SSL."""
    args = ["--master", "local[2]", "--jars", ",".join(ctx.jars)]
    if ctx.store is not None:
        args += ["--conf", f"spark.hadoop.fs.s3a.endpoint={ctx.store.endpoint}"]
        args += ["--conf", f"spark.hadoop.fs.s3a.path.style.access={str(ctx.store.path_style).lower()}"]
        args += ["--conf", f"spark.hadoop.fs.s3a.connection.ssl.enabled={str(ctx.store.secure).lower()}"]
    return shlex.join(args) + " pyspark-shell"


def command(spec: Spec, source: str, ctx: Context, output: str = "") -> Command:
    """The command line and environment of one unit (keys only ever in the environment)."""
    src = ctx.s3_uri if source == "s3" else str(ctx.local_path)
    if spec.workload == "W4":
        src = ctx.parquet_uri
    env = dict(ctx.base_env)
    if ctx.store is not None:
        env.update(ctx.store.env())
    if spec.runner == "shell":
        env["LC_ALL"] = "C"
        return Command(["sh", "-c", "awk '$3 == 1' \"$1\" | wc -l", "awk", src], env)
    if spec.runner == "submit":
        env["S3SPARK_MASTER"] = "local[2]"
        argv = [str(REPO_ROOT / "spark-submit.sh"), "--profile", ctx.profile]
        return Command(argv + job_args(spec.workload, s3a(src), s3a(output)), env)
    if spec.runner == "job":
        env["S3SPARK_SUBMITTED_PROFILE"] = "classic"  # session() applies no profile: PYSPARK_SUBMIT_ARGS is all
        env["PYSPARK_SUBMIT_ARGS"] = minimal_submit_args(ctx)
        return Command([python(), *job_args(spec.workload, s3a(src), s3a(output))], env)
    argv = [python(), "-m", "bench.unit", spec.workload, spec.tool, "--input", src, "--profile", ctx.profile]
    if output:
        argv += ["--output", output]
    if spec.tool == "spark-classic":
        env["BENCH_JARS"] = ",".join(ctx.jars)
    if spec.tool == "http-get":
        env["BENCH_PRESIGNED_URL"] = ctx.presigned_url
    if spec.tool in ("pandas-on-spark", "handoff-arrow", "handoff-noarrow"):
        env.update({"S3SPARK_PROFILE": ctx.profile, "S3SPARK_MASTER": "local[2]"})
        env.update({"S3SPARK_TO_PANDAS_MAX_ROWS": "0", "S3SPARK_TO_PANDAS_MAX_BYTES": "0"})
        if spec.workload == "W4" and ctx.driver_memory:
            env["BENCH_DRIVER_MEMORY"] = ctx.driver_memory
    return Command(argv, env)


def parse_answer(spec: Spec, stdout: str) -> int | None:
    """The unit's answer from its stdout: the last JSON line (ours: the job summary), or awk's number."""
    if spec.runner == "shell":
        return int(stdout.split()[-1])
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise ValueError("no JSON line on stdout")
    data = json.loads(lines[-1])
    if spec.runner in ("job", "submit"):
        if data.get("status") != "ok":
            raise ValueError(f"job status {data.get('status')}: {data.get('error')}")
        return data["rows_matched" if spec.workload == "W1" else "rows_written"]
    return data["result"]
