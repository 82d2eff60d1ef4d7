"""Run one measured unit in this process: one workload, one tool, one input; print one JSON line.

    python -m bench.unit W1 pandas --input s3://s3spark/bench/pageviews-1g.csv
    python -m bench.unit W2 duckdb --input s3://.../pageviews-1g.csv --output s3://s3spark/bench/out/x/

The harness (``bench.run``) starts a fresh process for every unit and reads ``result`` from the last line:
rows matched (W1), rows the tool says it wrote (W2; None when it does not say), bytes (W3), rows (W4).
``inside_s`` is the time spent inside the tool's call, without interpreter start-up and imports.
Tools that are whole programs (our jobs, spark-submit.sh, awk) are run by the harness directly.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

from bench.common import DEFAULT_PROFILE

# (workload, tool) -> "module:function" under bench.tools
IN_PROCESS = {
    ("W1", "pandas"): "pandas_tool:w1",
    ("W1", "pyarrow"): "pyarrow_tool:w1",
    ("W1", "dask"): "dask_tool:w1",
    ("W1", "duckdb"): "duckdb_tool:w1",
    ("W1", "polars"): "polars_tool:w1",
    ("W1", "spark-classic"): "spark_tool:w1",
    ("W1", "pandas-on-spark"): "handoff_tool:w1",
    ("W2", "duckdb"): "duckdb_tool:w2",
    ("W2", "polars"): "polars_tool:w2",
    ("W2", "pyarrow"): "pyarrow_tool:w2",
    ("W3", "boto3-get"): "raw_tool:boto3_get",
    ("W3", "boto3-download"): "raw_tool:boto3_download",
    ("W3", "http-get"): "raw_tool:http_get",
    ("W4", "pyarrow"): "pyarrow_tool:w4",
    ("W4", "handoff-arrow"): "handoff_tool:w4_arrow",
    ("W4", "handoff-noarrow"): "handoff_tool:w4_noarrow",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.unit", description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=sorted({w for w, _ in IN_PROCESS}))
    parser.add_argument("tool")
    parser.add_argument("--input", required=True, help="s3://bucket/key or a local path")
    parser.add_argument("--output", help="W2: output prefix (s3://bucket/prefix/) or local directory")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="profile for the endpoint and our session")
    args = parser.parse_args(argv)
    target = IN_PROCESS.get((args.workload, args.tool))
    if target is None:
        tools = sorted(t for w, t in IN_PROCESS if w == args.workload)
        parser.error(f"no in-process tool {args.tool!r} for {args.workload}; choose from {', '.join(tools)}")
    from bench.tools import Source

    module, function = target.split(":")
    run = getattr(importlib.import_module(f"bench.tools.{module}"), function)
    src = Source(args.input, args.profile)
    start = time.perf_counter()
    result = run(src, Source(args.output, args.profile)) if args.workload == "W2" else run(src)
    inside = time.perf_counter() - start
    print(json.dumps({"workload": args.workload, "tool": args.tool, "result": result, "inside_s": round(inside, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
