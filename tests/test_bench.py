"""bench/: the generator, the harness on tiny inputs, the report, and ensure_venv's extras. No timing assertions.

Runs with the dev extra alone: tools of the bench extra (dask, duckdb, polars, s3fs) join when installed.
No Spark unit runs here (each is a JVM start); the harness is exercised with the Python peers and awk.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from s3spark.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))  # bench/ is run from the repository, not installed

from bench import report  # noqa: E402
from bench.common import parse_size, size_label  # noqa: E402
from bench.generate import chunk, ensure_local, ensure_uploaded, generate, load_stamp  # noqa: E402

pytest.importorskip("psutil")  # the harness measures with it (a dependency of ipykernel in dev)

# The bench extra's peers, where installed; pandas, pyarrow and awk are always there.
PEERS = [name for name in ("duckdb", "polars", "dask") if importlib.util.find_spec(name)]


def lines_of(path: Path) -> list[list[str]]:
    return [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines()]


# --- the generator ---------------------------------------------------------------------------------------


def test_sizes_parse_and_label():
    assert parse_size("20m") == 20 * 1024**2
    assert parse_size("1G") == 1024**3
    assert parse_size("4g") == 4 * 1024**3
    assert size_label("1024m") == "1g"
    assert size_label("200m") == "200m"
    with pytest.raises(ValueError):
        parse_size("lots")


def test_same_seed_and_size_give_the_same_bytes_and_a_smaller_file_is_a_prefix(tmp_path):
    a = generate(tmp_path / "a.csv", 3_000_000, seed=7)
    b = generate(tmp_path / "b.csv", 3_000_000, seed=7)
    assert a.path.read_bytes() == b.path.read_bytes()
    assert (a.rows, a.rows_count_1, a.bytes) == (b.rows, b.rows_count_1, b.bytes)
    other = generate(tmp_path / "c.csv", 3_000_000, seed=8)
    assert other.path.read_bytes() != a.path.read_bytes()
    small = generate(tmp_path / "small.csv", 1_000_000, seed=7)
    assert a.path.read_bytes().startswith(small.path.read_bytes())


def test_the_file_has_the_requested_size_the_dump_format_and_60_percent_count_1(tmp_path):
    target = 5 * 1024**2  # cut inside the first chunk (~36 MB)
    dataset = generate(tmp_path / "pv.csv", target, seed=0)
    assert target - 300 < dataset.bytes <= target
    assert dataset.path.stat().st_size == dataset.bytes
    rows = lines_of(dataset.path)
    assert len(rows) == dataset.rows
    assert all(len(fields) == 4 for fields in rows)
    counts = [int(fields[2]) for fields in rows]
    sizes = [int(fields[3]) for fields in rows]
    assert all(count >= 1 for count in counts) and all(size > 0 for size in sizes)
    ones = sum(count == 1 for count in counts)
    assert ones == dataset.rows_count_1
    assert 0.57 < ones / len(rows) < 0.63
    urls = [fields[1] for fields in rows]
    assert len(set(urls)) > len(urls) / 10  # varied titles
    assert any("%" in url for url in urls)  # percent-encoded ones among them
    assert {fields[0] for fields in rows} >= {"en", "de", "ja"}


def test_chunks_are_independent_and_cut_at_whole_lines(tmp_path):
    data, ends, one = chunk(3, seed=1, rows=1000)
    assert data.count(b"\n") == 1000 == len(ends) == len(one)
    assert ends[-1] == len(data) and data[int(ends[9]) - 1 : int(ends[9])] == b"\n"
    assert chunk(3, seed=1, rows=1000)[0] == data
    # two chunks' worth: the second chunk starts where the first ended
    first = chunk(0, seed=2, rows=1_000_000)[0]
    dataset = generate(tmp_path / "two.csv", len(first) + 1000, seed=2)
    content = dataset.path.read_bytes()
    assert content.startswith(first) and content.endswith(b"\n") and len(content) > len(first)


def test_ensure_local_reuses_a_matching_file_and_regenerates_a_changed_one(tmp_path):
    first = ensure_local("1m", directory=tmp_path)
    mtime = first.path.stat().st_mtime_ns
    assert ensure_local("1m", directory=tmp_path) == first
    assert first.path.stat().st_mtime_ns == mtime
    with first.path.open("ab") as stream:
        stream.write(b"en X 1 1\n")
    assert load_stamp(first.path) is None
    again = ensure_local("1m", directory=tmp_path)
    assert again.path.read_bytes() == generate(tmp_path / "x.csv", 1024**2).path.read_bytes()


# --- the harness, end to end on a tiny file -------------------------------------------------------------


def run_bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bench.run", *args],
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_harness_runs_every_tool_it_can_and_they_agree(tmp_path):
    tools = ["pandas", "pyarrow", "awk", *PEERS]
    result = run_bench(
        *("--sizes", "2m", "--repeats", "2", "--workloads", "W1,W3", "--sources", "local"),
        *("--tools", ",".join(tools), "--data-dir", str(tmp_path / "data"), "--out-dir", str(tmp_path / "out")),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    raw_files = list((tmp_path / "out").glob("*-2m.json"))
    assert len(raw_files) == 1
    raw = json.loads(raw_files[0].read_text())
    stamp = raw["datasets"]["2m"]
    runs = raw["runs"]
    assert sorted({run["tool"] for run in runs}) == sorted(tools)
    assert len(runs) == 2 * len(tools)
    # round-robin: every tool's rep 1 before any rep 2
    assert [run["rep"] for run in runs] == [1] * len(tools) + [2] * len(tools)
    assert {run["status"] for run in runs} == {"ok"}
    assert {run["result"] for run in runs} == {stamp["rows_count_1"]}
    assert all(run["seconds"] > 0 and run["peak_rss"] > 0 for run in runs)
    assert raw["environment"]["cores"] == os.cpu_count()
    assert raw["environment"]["versions"]["pandas"]
    markdown = raw_files[0].with_suffix(".md").read_text()
    assert "### W1" in markdown and "### W3" in markdown
    for tool in tools:
        assert f"| {tool} | local |" in markdown
    assert raw_files[0].with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # progress: one line per run on stderr
    assert sum(" rep " in line for line in result.stderr.splitlines()) == len(runs)


def test_a_failing_unit_is_recorded_with_its_error_and_the_campaign_goes_on(tmp_path):
    from bench.run import Planned, run_unit
    from bench.units import Context, find

    dataset = ensure_local("1m", directory=tmp_path)
    ctx = Context(tmp_path / "missing.csv", "", "minio", None)
    args = argparse.Namespace(timeout=120, bucket="unused", max_rss="85%")
    record = run_unit(Planned(find("W1", "pandas"), "local", "1m"), 1, ctx, dataset, "t", args)
    assert record["status"] == "failed"
    assert "missing.csv" in record["error"] or "No such file" in record["error"]
    good = Context(dataset.path, "", "minio", None)
    ok = run_unit(Planned(find("W3", "awk"), "local", "1m"), 1, good, dataset, "t", args)
    assert ok["status"] == "ok" and ok["result"] == dataset.rows_count_1


def test_measure_takes_the_whole_tree_and_kills_it_at_the_limits(tmp_path):
    from bench.measure import measure

    # a child that holds ~200 MiB, started by the measured process: the tree's RSS counts it
    holder = "import time; b = bytearray(200 * 1024**2); b[::4096] = b'x' * len(b[::4096]); time.sleep(1)"
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {holder!r}]); print('done')"
    whole = measure([sys.executable, "-c", code], dict(os.environ), tmp_path)
    assert whole.exit_code == 0 and whole.stdout.strip() == "done" and whole.killed is None
    assert whole.peak_rss > 200 * 1024**2 and whole.seconds >= 1
    capped = measure([sys.executable, "-c", code], dict(os.environ), tmp_path, max_rss=100 * 1024**2)
    assert capped.exit_code is None and "--max-rss" in capped.killed and "done" not in capped.stdout
    slow = measure(["sleep", "30"], dict(os.environ), tmp_path, timeout=0.5)
    assert slow.exit_code is None and "--timeout" in slow.killed and slow.seconds < 10


def test_the_harness_explains_itself_and_refuses_unknown_names():
    result = run_bench("--help")
    assert result.returncode == 0
    assert "round-robin" in result.stdout and "peak RSS" in result.stdout and "--peers-at-all-sizes" in result.stdout
    listing = run_bench("--list")
    assert "spark-classic" in listing.stdout and "handoff-noarrow" in listing.stdout
    bad = run_bench("--tools", "pandsa", "--sizes", "1m")
    assert bad.returncode != 0 and "unknown tool pandsa" in bad.stderr
    bad = run_bench("--exclude", "awc", "--sizes", "1m")
    assert bad.returncode != 0 and "unknown tool awc" in bad.stderr


def test_against_s3_the_input_is_uploaded_once_and_w2_outputs_are_read_back_and_removed(s3_server, bucket, tmp_path):
    dataset = ensure_local("2m", directory=tmp_path / "data")
    uri = ensure_uploaded(dataset, bucket)
    client = s3_server.client()
    key = uri.split("/", 3)[3]
    etag = client.head_object(Bucket=bucket, Key=key)["ETag"]
    modified = client.head_object(Bucket=bucket, Key=key)["LastModified"]
    assert ensure_uploaded(dataset, bucket) == uri
    head = client.head_object(Bucket=bucket, Key=key)
    assert (head["ETag"], head["LastModified"], head["ContentLength"]) == (etag, modified, dataset.bytes)

    result = run_bench(
        *("--sizes", "2m", "--repeats", "1", "--workloads", "W1,W2,W3", "--sources", "s3", "--bucket", bucket),
        *("--tools", "pyarrow,boto3-get,http-get,awk", "--data-dir", str(tmp_path / "data")),
        *("--out-dir", str(tmp_path / "out")),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    raw_path = next((tmp_path / "out").glob("*.json"))
    raw = json.loads(raw_path.read_text())
    by_unit = {(run["workload"], run["tool"]): run for run in raw["runs"]}
    assert by_unit["W1", "pyarrow"]["result"] == dataset.rows_count_1 == by_unit["W3", "awk"]["result"]
    assert by_unit["W2", "pyarrow"]["result"] == dataset.rows and by_unit["W2", "pyarrow"]["files"] >= 1
    assert by_unit["W3", "boto3-get"]["result"] == by_unit["W3", "http-get"]["result"] == dataset.bytes
    assert raw["environment"]["s3"]["same_machine"] is True
    left = client.list_objects_v2(Bucket=bucket, Prefix="bench/out/").get("KeyCount", 0)
    assert left == 0
    for path in (tmp_path / "out").iterdir():
        text = path.read_text(errors="replace") if path.suffix != ".png" else ""
        assert s3_server.secret_key not in text and s3_server.access_key not in text
    assert s3_server.secret_key not in result.stdout + result.stderr


# --- the report -------------------------------------------------------------------------------------------


def fake_run(workload, tool, source, seconds, rss_mib=100, rep=1, status="ok", size="1g", result=10):
    return {
        "workload": workload,
        "tool": tool,
        "source": source,
        "size": size,
        "rep": rep,
        "kind": "rows_matched",
        "expected": 10,
        "input_bytes": 1_000_000_000,
        "seconds": seconds,
        "peak_rss": rss_mib * 1024**2,
        "status": status,
        "result": result if status == "ok" else None,
        "error": None if status == "ok" else "error: boom",
    }


def test_the_report_builds_tables_targets_and_a_chart_from_raw_json(tmp_path):
    runs = [
        *(fake_run("W1", "pandas", "s3", s, 2000, rep) for rep, s in enumerate((40, 42, 41), 1)),
        *(fake_run("W1", "ours", "s3", s, 900, rep) for rep, s in enumerate((20, 19, 21), 1)),
        *(fake_run("W1", "ours", "local", s, 800, rep) for rep, s in enumerate((10, 11, 12), 1)),
        fake_run("W1", "dask", "s3", 0, status="failed"),
        fake_run("W2", "ours", "s3", 50),
        fake_run("W2", "duckdb", "s3", 10),
        fake_run("W1", "ours", "s3", 80, 1000, size="4g"),
        fake_run("W2", "ours", "s3", 200, size="4g"),
    ]
    raw = {
        "campaign": {"id": "test", "repeats": 3, "profile": "minio"},
        "environment": {"cores": 2, "cpu": "x", "memory_gib": 23.5, "versions": {"pandas": "2.2.3"}},
        "datasets": {"1g": {"bytes": 1_000_000_000, "rows": 20, "rows_count_1": 10, "seed": 0}},
        "runs": runs,
        "skipped": [{"workload": "W1", "tool": "polars", "reason": "polars not installed"}],
    }
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(raw))
    md_path, png_path = report.write_report(path)
    md = md_path.read_text()
    assert "| ours | s3 | 20.00 | 19.00 | 50.0 | 900 | 0.49× | 1.82× | 3/3 |" in md
    assert "| pandas | s3 | 41.00 | 40.00 | 24.4 | 2,000 | 1.00× | 3.73× | 3/3 |" in md
    assert "| ours | local | 11.00 | 10.00 |" in md
    assert "| dask | s3 | – | – | – | – | – | – | 0/1 |" in md
    assert "- W2 ours / DuckDB: 5.00× (50.00 s vs 10.00 s)" in md
    assert "- W1 pandas (s3) / ours (s3): 2.05×" in md
    assert "- W1 ours S3 / ours local: 1.82×" in md
    assert "- W1 ours (s3) 4g/1g: time 4.00× for 4× the data" in md
    assert "W4 hand-off (Arrow) / pyarrow, time: – (not measured)" in md
    assert "- W1 dask s3 1g: error: boom" in md and "skipped W1 polars: polars not installed" in md
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = subprocess.run(
        [sys.executable, "-m", "bench.report", str(path)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0 and "### W1" in again.stdout


# --- ensure_venv: extras are a set ------------------------------------------------------------------------


def test_ensure_venv_is_satisfied_by_installed_extras_and_installs_their_union(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"  # records each pip call instead of installing
    fake.write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/../pip.log"\n')
    fake.chmod(0o755)
    script = (
        f'set -euo pipefail; REPO="{REPO_ROOT}"; S3SPARK_VENV="{venv}"; '
        'source "$REPO/scripts/bootstrap.sh"; ensure_venv "$1"'
    )

    def ensure(extras: str) -> tuple[int, str]:
        subprocess.run(["bash", "-c", script, "bash", extras], check=True, capture_output=True, timeout=60)
        log = venv / "pip.log"
        installs = log.read_text().splitlines() if log.exists() else []
        return len(installs), (venv / ".s3spark-installed").read_text().split()[1:]

    assert ensure("dev") == (1, ["dev"])
    assert ensure("dev") == (1, ["dev"])
    installs, extras = ensure("bench")
    assert (installs, extras) == (2, ["bench,dev"])
    assert (venv / "pip.log").read_text().splitlines()[-1].endswith("[bench,dev]")
    for wanted in ("dev", "bench", "", "dev,bench", "bench, dev"):
        assert ensure(wanted) == (2, ["bench,dev"])
