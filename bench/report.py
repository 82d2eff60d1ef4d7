"""Tables, targets and a chart from a campaign's raw JSON.

.venv/bin/python -m bench.report bench/results/20250101-120000-1g.json   # writes .md and .png beside it
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from bench.common import parse_size
from bench.units import WORKLOADS

MIB = 1024**2


def _ok(runs: list[dict]) -> list[dict]:
    return [run for run in runs if run["status"] == "ok"]


def summarise(runs: list[dict]) -> list[dict]:
    """One row per (workload, size, tool, source): median and min seconds, MB/s, peak RSS, runs ok / all."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault((run["workload"], run["size"], run["tool"], run["source"]), []).append(run)
    rows = []
    for (workload, size, tool, source), group in groups.items():
        good = _ok(group)
        seconds = [run["seconds"] for run in good]
        row = {
            "workload": workload,
            "size": size,
            "tool": tool,
            "source": source,
            "runs": len(group),
            "ok": len(good),
            "median": statistics.median(seconds) if seconds else None,
            "min": min(seconds) if seconds else None,
            "peak_rss": max(run["peak_rss"] for run in good) if good else None,
            "input_bytes": group[0].get("input_bytes") or 0,
            "errors": sorted({run["error"] or f"wrong answer {run['result']}" for run in group if run not in good}),
        }
        row["mb_s"] = row["input_bytes"] / 1e6 / row["median"] if row["median"] else None
        rows.append(row)
    return rows


def find(rows: list[dict], workload: str, tool: str, source: str = "s3", size: str | None = None) -> dict | None:
    for row in rows:
        if (row["workload"], row["tool"], row["source"]) == (workload, tool, source) and size in (None, row["size"]):
            if row["median"] is not None:
                return row
    return None


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "–" if not a or not b else f"{a / b:.2f}×"


def tables(rows: list[dict]) -> list[str]:
    """A markdown table per workload and size, fastest first."""
    out = []
    sizes = sorted({row["size"] for row in rows}, key=parse_size)
    for workload in WORKLOADS:
        for size in sizes:
            group = [row for row in rows if row["workload"] == workload and row["size"] == size]
            if not group:
                continue
            group.sort(key=lambda r: (r["median"] is None, r["median"] or 0))
            fastest = next((r["median"] for r in group if r["median"]), None)
            out += [f"### {workload} — {WORKLOADS[workload]} ({size})", ""]
            out += ["| tool | source | median s | min s | MB/s | peak RSS MiB | × pandas | × fastest | ok |"]
            out += ["| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for row in group:
                pandas = find(rows, workload, "pandas", row["source"], size) if workload == "W1" else None
                rss = row["peak_rss"] / MIB if row["peak_rss"] else None
                out.append(
                    f"| {row['tool']} | {row['source']} | {_num(row['median'])} | {_num(row['min'])} | "
                    f"{_num(row['mb_s'], 1)} | {_num(rss, 0)} | {_ratio(row['median'], pandas and pandas['median'])} | "
                    f"{_ratio(row['median'], fastest)} | {row['ok']}/{row['runs']} |"
                )
            out.append("")
    return out


def targets(rows: list[dict]) -> list[str]:
    """The comparisons the benchmark exists for, at the smallest size (scaling: largest over smallest)."""
    sizes = sorted({row["size"] for row in rows}, key=parse_size)
    if not sizes:
        return []
    base = sizes[0]

    def median(workload: str, tool: str, source: str = "s3", size: str = base) -> float | None:
        row = find(rows, workload, tool, source, size)
        return row["median"] if row else None

    def rss(workload: str, tool: str, source: str = "s3", size: str = base) -> float | None:
        row = find(rows, workload, tool, source, size)
        return row["peak_rss"] / MIB if row and row["peak_rss"] else None

    lines = [f"Targets ({base}; a ratio above 1 means the first is slower):", ""]
    pairs = [
        ("W2 ours / DuckDB", median("W2", "ours"), median("W2", "duckdb")),
        ("W1 pandas (s3) / ours (s3)", median("W1", "pandas"), median("W1", "ours")),
        ("W1 ours S3 / ours local", median("W1", "ours"), median("W1", "ours", "local")),
        ("W1 pandas-on-spark / ours (s3)", median("W1", "pandas-on-spark"), median("W1", "ours")),
        ("W4 hand-off (Arrow) / pyarrow, time", median("W4", "handoff-arrow"), median("W4", "pyarrow")),
        ("W4 hand-off (Arrow) / pyarrow, peak RSS", rss("W4", "handoff-arrow"), rss("W4", "pyarrow")),
    ]
    for label, a, b in pairs:
        unit = "MiB" if "RSS" in label else "s"
        digits = 0 if unit == "MiB" else 2
        measured = f"{_num(a, digits)} {unit} vs {_num(b, digits)} {unit}" if a and b else "not measured"
        lines.append(f"- {label}: {_ratio(a, b)} ({measured})")
    if len(sizes) > 1:
        top = sizes[-1]
        data = parse_size(top) / parse_size(base)
        for workload in ("W1", "W2"):
            a, b = median(workload, "ours", size=top), median(workload, "ours")
            ra, rb = rss(workload, "ours", size=top), rss(workload, "ours")
            lines.append(
                f"- {workload} ours (s3) {top}/{base}: time {_ratio(a, b)} for {data:.0f}× the data "
                f"({_num(b)} s → {_num(a)} s); peak RSS {_num(rb, 0)} → {_num(ra, 0)} MiB"
            )
    return lines + [""]


def environment(raw: dict) -> list[str]:
    env, campaign = raw.get("environment", {}), raw.get("campaign", {})
    versions = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items() if v)
    lines = [
        f"Campaign {campaign.get('id', '?')}: {campaign.get('repeats', '?')} runs per unit, interleaved; "
        f"profile {campaign.get('profile', '?')}.",
        f"Machine: {env.get('cores', '?')} cores ({env.get('cpu', '?')}), {env.get('memory_gib', '?')} GiB, "
        f"{env.get('os', '?')}, Python {env.get('python', '?')}, {env.get('java') or 'no java'}.",
        f"Versions: {versions}.",
    ]
    if "s3" in env:
        lines.append(f"S3: {env['s3']['note']}.")
    for size, ds in raw.get("datasets", {}).items():
        lines.append(
            f"Data {size}: {ds['bytes']:,} bytes, {ds['rows']:,} rows, {ds['rows_count_1']:,} with count 1 "
            f"(seed {ds['seed']})."
        )
    return [f"- {line}" for line in lines] + [""]


def failures(raw: dict, rows: list[dict]) -> list[str]:
    lines = []
    for row in rows:
        for error in row["errors"]:
            lines.append(f"- {row['workload']} {row['tool']} {row['source']} {row['size']}: {error}")
    for item in raw.get("skipped", []):
        where = " ".join(filter(None, (item.get("source"), item.get("size"))))
        lines.append(f"- skipped {item['workload']} {item['tool']}{' ' + where if where else ''}: {item['reason']}")
    return (["Failures and skips:", "", *lines, ""]) if lines else []


def markdown(raw: dict) -> str:
    rows = summarise(raw["runs"])
    parts = ["## Benchmark results", "", *environment(raw), *targets(rows), *tables(rows), *failures(raw, rows)]
    return "\n".join(parts)


def chart(raw: dict, path: Path) -> Path:
    """Median seconds per tool (and source), one panel per workload at each size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in summarise(raw["runs"]) if row["median"] is not None]
    panels = sorted({(row["workload"], row["size"]) for row in rows}, key=lambda p: (p[0], parse_size(p[1])))
    if not panels:
        panels = [("none", "")]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 1.2 + 0.45 * max(4, len(rows) / len(panels)) * len(panels)))
    axes = axes if len(panels) > 1 else [axes]
    for ax, (workload, size) in zip(axes, panels, strict=True):
        group = sorted((r for r in rows if (r["workload"], r["size"]) == (workload, size)), key=lambda r: -r["median"])
        labels = [f"{r['tool']} ({r['source']})" for r in group]
        bars = ax.barh(labels, [r["median"] for r in group], color=[_colour(r["tool"]) for r in group])
        ax.bar_label(bars, labels=[f"{r['median']:.1f}" for r in group], padding=3, fontsize=8)
        ax.set_title(f"{workload}: {WORKLOADS.get(workload, '')} ({size})", fontsize=10)
        ax.set_xlabel("median seconds (whole process)", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.margins(x=0.15)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _colour(tool: str) -> str:
    if tool.startswith(("ours", "handoff", "pandas-on-spark")):
        return "tab:orange"
    if tool == "spark-classic":
        return "tab:red"
    return "tab:blue"


def write_report(raw_path: Path) -> tuple[Path, Path]:
    """Write RAW.md and RAW.png next to the raw JSON; return their paths."""
    raw = json.loads(Path(raw_path).read_text())
    md = Path(raw_path).with_suffix(".md")
    md.write_text(markdown(raw) + "\n")
    return md, chart(raw, Path(raw_path).with_suffix(".png"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path, help="a campaign's raw JSON (bench/results/*.json)")
    args = parser.parse_args(argv)
    md, png = write_report(args.raw)
    print(md.read_text())
    print(f"report: {md}\nchart: {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
