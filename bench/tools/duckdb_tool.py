"""DuckDB: read_csv with explicit columns, and COPY to Parquet; httpfs loaded from its wheel (no download)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from bench.tools import Source

COLUMNS = "{'project': 'VARCHAR', 'url': 'VARCHAR', 'count': 'INTEGER', 'bytes': 'BIGINT'}"


def httpfs_path() -> Path:
    """The httpfs extension shipped in the duckdb-extension-httpfs wheel for this DuckDB version."""
    import duckdb_extension_httpfs

    folder = Path(duckdb_extension_httpfs.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    found = sorted(folder.glob("httpfs.duckdb_extension"))
    if not found:
        raise RuntimeError(f"no httpfs extension for DuckDB {duckdb.__version__} in {folder.parent}")
    return found[0]


def connect(src: Source) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    if src.is_s3:
        con.execute(f"LOAD '{httpfs_path()}'")
        con.execute(src.store.duckdb_secret_sql())
    return con


def _scan(src: Source) -> str:
    path = src.s3.replace("'", "''")
    return f"read_csv('{path}', delim=' ', header=false, auto_detect=false, columns={COLUMNS})"


def w1(src: Source) -> int:
    return connect(src).execute(f'SELECT count(*) FROM {_scan(src)} WHERE "count" = 1').fetchone()[0]


def w2(src: Source, out: Source) -> int | None:
    target = out.s3.rstrip("/") + "/part-0.parquet"
    con = connect(src)
    con.execute(f"COPY (SELECT * FROM {_scan(src)}) TO '{target}' (FORMAT parquet, COMPRESSION snappy)")
    row = con.fetchone()
    return int(row[0]) if row else None
