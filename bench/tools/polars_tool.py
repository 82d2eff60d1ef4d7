"""Polars: scan_csv with an explicit schema, and sink_parquet (streaming) to S3."""

from __future__ import annotations

import polars as pl

from bench.tools import Source

SCHEMA = {"project": pl.String, "url": pl.String, "count": pl.Int32, "bytes": pl.Int64}


def _scan(src: Source) -> pl.LazyFrame:
    return pl.scan_csv(
        src.s3,
        separator=" ",
        has_header=False,
        schema=SCHEMA,
        quote_char=None,
        storage_options=src.store.polars_options() if src.is_s3 else None,
    )


def w1(src: Source) -> int:
    return int(_scan(src).filter(pl.col("count") == 1).select(pl.len()).collect().item())


def w2(src: Source, out: Source) -> int | None:
    target = out.s3.rstrip("/") + "/part-0.parquet"
    options = out.store.polars_options() if out.is_s3 else None
    _scan(src).sink_parquet(target, compression="snappy", storage_options=options)
    return None
