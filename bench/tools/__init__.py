"""One module per tool; each runs a workload in-process for ``bench.unit``.

Every function takes a ``Source`` and returns the number it computed (rows matched, rows written, bytes):
the harness checks that every tool got the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from bench.common import DEFAULT_PROFILE, S3Store, split_s3, store_from_env


@dataclass(frozen=True)
class Source:
    """What a unit reads: an ``s3://bucket/key`` URI or a local path, and the profile for the store."""

    uri: str
    profile: str = DEFAULT_PROFILE

    @property
    def is_s3(self) -> bool:
        return self.uri.startswith(("s3://", "s3a://"))

    @property
    def bucket_key(self) -> tuple[str, str]:
        return split_s3(self.uri)

    @property
    def s3(self) -> str:
        """``s3://bucket/key`` (pandas, Dask, DuckDB, Polars)."""
        return "s3://" + self.uri.split("://", 1)[1] if self.is_s3 else self.uri

    @property
    def s3a(self) -> str:
        """``s3a://bucket/key`` (Spark), or the local path."""
        return "s3a://" + self.uri.split("://", 1)[1] if self.is_s3 else self.uri

    @property
    def arrow_path(self) -> str:
        """``bucket/key`` for pyarrow's S3FileSystem, or the local path."""
        return self.uri.split("://", 1)[1] if self.is_s3 else self.uri

    @cached_property
    def store(self) -> S3Store:
        return store_from_env(self.profile)
