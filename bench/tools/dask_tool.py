"""Dask: dd.read_csv through s3fs (default blocksize, default threaded scheduler), filter, count."""

from __future__ import annotations

import dask.dataframe as dd

from bench.common import COLUMNS
from bench.tools import Source
from bench.tools.pandas_tool import DTYPES


def w1(src: Source) -> int:
    options = src.store.s3fs_options() if src.is_s3 else None
    frame = dd.read_csv(src.s3, sep=" ", header=None, names=list(COLUMNS), dtype=DTYPES, storage_options=options)
    return int((frame["count"] == 1).sum().compute())
