"""What the benchmark's parts share: sizes, the data cache, and how to reach the S3 store.

The endpoint comes from ``$S3_ENDPOINT``, else from a profile's ``fs.s3a.endpoint`` (``conf/profiles``); the
keys always come from ``$AWS_ACCESS_KEY_ID`` / ``$AWS_SECRET_ACCESS_KEY`` and are never printed or written.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DDL = "project STRING, url STRING, count INT, bytes BIGINT"
COLUMNS = ("project", "url", "count", "bytes")
DEFAULT_BUCKET = "s3spark"
DEFAULT_PROFILE = "minio"
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int:
    """'20m' -> 20 MiB in bytes; k, m, g, t are powers of 1024; a bare number is bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text.lower())
    if not match:
        raise ValueError(f"not a size: {text!r} (use e.g. 20m, 1g, 4g)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def size_label(text: str) -> str:
    """The canonical label of a size, used in file and object names: '1G' -> '1g', '1024m' -> '1g'."""
    value = parse_size(text)
    for unit in "tgmk":
        if value % _UNITS[unit] == 0:
            return f"{value // _UNITS[unit]}{unit}"
    return str(value)


def python() -> str:
    """The interpreter units run with: this one (run the harness with the project's virtualenv)."""
    return sys.executable


def data_dir() -> Path:
    """Where generated CSV files live: $S3SPARK_BENCH_DATA, else $S3SPARK_CACHE/bench (~/.cache/s3spark/bench)."""
    if os.environ.get("S3SPARK_BENCH_DATA"):
        return Path(os.environ["S3SPARK_BENCH_DATA"])
    from s3spark.paths import cache_dir

    return cache_dir() / "bench"


def object_key(label: str) -> str:
    """The S3 key of a generated file."""
    return f"bench/pageviews-{label}.csv"


@dataclass(frozen=True)
class S3Store:
    """An S3-compatible endpoint and the credentials from the environment (kept out of repr)."""

    endpoint: str  # with scheme: http://127.0.0.1:9000
    region: str = "us-east-1"
    path_style: bool = True
    access_key: str = field(default="", repr=False)
    secret_key: str = field(default="", repr=False)
    ca_bundle: str | None = None

    @property
    def scheme(self) -> str:
        return urlsplit(self.endpoint).scheme

    @property
    def host(self) -> str:
        """host:port, as DuckDB's ENDPOINT wants it."""
        return urlsplit(self.endpoint).netloc

    @property
    def secure(self) -> bool:
        return self.scheme == "https"

    def client(self):  # -> botocore S3 client
        """A boto3 S3 client (path-style unless the profile says otherwise, SigV4)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
            verify=self.ca_bundle,
            config=Config(
                s3={"addressing_style": "path" if self.path_style else "virtual"},
                signature_version="s3v4",
                max_pool_connections=16,
            ),
        )

    def s3fs_options(self) -> dict:
        """storage_options for pandas and Dask (s3fs)."""
        client_kwargs: dict = {"endpoint_url": self.endpoint, "region_name": self.region}
        if self.ca_bundle:
            client_kwargs["verify"] = self.ca_bundle
        return {
            "key": self.access_key,
            "secret": self.secret_key,
            "client_kwargs": client_kwargs,
            "config_kwargs": {"s3": {"addressing_style": "path" if self.path_style else "virtual"}},
        }

    def polars_options(self) -> dict[str, str]:
        """storage_options for Polars (object_store)."""
        return {
            "aws_endpoint_url": self.endpoint,
            "aws_allow_http": str(not self.secure).lower(),
            "aws_region": self.region,
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
            "aws_virtual_hosted_style_request": str(not self.path_style).lower(),
        }

    def pyarrow_fs(self):  # -> pyarrow.fs.S3FileSystem
        """pyarrow's S3 file system (the scheme belongs in endpoint_override)."""
        from pyarrow.fs import S3FileSystem

        return S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            region=self.region,
            endpoint_override=self.endpoint,
            force_virtual_addressing=not self.path_style,
        )

    def duckdb_secret_sql(self) -> str:
        """DuckDB's CREATE SECRET for this store. Holds the keys: never print it."""

        def quoted(value: str) -> str:
            return "'" + value.replace("'", "''") + "'"

        return (
            f"CREATE OR REPLACE SECRET bench (TYPE s3, KEY_ID {quoted(self.access_key)}, "
            f"SECRET {quoted(self.secret_key)}, REGION {quoted(self.region)}, ENDPOINT {quoted(self.host)}, "
            f"URL_STYLE {quoted('path' if self.path_style else 'vhost')}, USE_SSL {str(self.secure).lower()})"
        )

    def env(self) -> dict[str, str]:
        """The environment a unit needs to reach this store."""
        return {
            "S3_ENDPOINT": self.endpoint,
            "AWS_REGION": self.region,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
        }

    def scrub(self, text: str) -> str:
        """``text`` without the keys (for error lines that are recorded)."""
        for secret in (self.secret_key, self.access_key):
            if secret:
                text = text.replace(secret, "***")
        return text


def split_s3(uri: str) -> tuple[str, str]:
    """'s3://bucket/a/b' or 's3a://...' -> ('bucket', 'a/b')."""
    rest = uri.split("://", 1)[1]
    bucket, _, key = rest.partition("/")
    return bucket, key


def store_from_env(profile: str = DEFAULT_PROFILE) -> S3Store:
    """The store: endpoint from $S3_ENDPOINT or the profile, keys from the environment."""
    access_key = os.environ.get("AWS_ACCESS_KEY_ID", "")
    secret_key = os.environ.get("AWS_SECRET_ACCESS_KEY", "")
    if not (access_key and secret_key):
        raise SystemExit(
            "error: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set "
            '(for a local MinIO: eval "$(scripts/local-s3 start)")'
        )
    options: dict[str, str] = {}
    try:
        from s3spark.profiles import load_profile

        options = load_profile(profile).hadoop_options()
    except Exception as error:  # a profile problem matters only when the environment has no endpoint
        if not os.environ.get("S3_ENDPOINT"):
            raise SystemExit(f"error: profile {profile!r}: {error}") from None
    endpoint = os.environ.get("S3_ENDPOINT") or options.get("fs.s3a.endpoint", "")
    if not endpoint:
        raise SystemExit(f"error: no endpoint: set S3_ENDPOINT or fs.s3a.endpoint in profile {profile!r}")
    if "://" not in endpoint:
        ssl = options.get("fs.s3a.connection.ssl.enabled", "true").lower() == "true"
        endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
    return S3Store(
        endpoint=endpoint.rstrip("/"),
        region=os.environ.get("AWS_REGION") or options.get("fs.s3a.endpoint.region") or "us-east-1",
        path_style=options.get("fs.s3a.path.style.access", "true").lower() == "true",
        access_key=access_key,
        secret_key=secret_key,
        ca_bundle=os.environ.get("S3_CA_BUNDLE") or os.environ.get("AWS_CA_BUNDLE") or None,
    )
