"""pandas: read_csv (C engine) through s3fs, filter count == 1, count."""

from __future__ import annotations

import pandas as pd

from bench.common import COLUMNS
from bench.tools import Source

DTYPES = {"project": "object", "url": "object", "count": "int32", "bytes": "int64"}


def w1(src: Source) -> int:
    options = src.store.s3fs_options() if src.is_s3 else None
    frame = pd.read_csv(
        src.s3, sep=" ", header=None, names=list(COLUMNS), dtype=DTYPES, engine="c", storage_options=options
    )
    return int((frame["count"] == 1).sum())
