"""PyArrow: the dataset CSV scanner (S3FileSystem), Parquet writing, and Parquet to pandas."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.csv as csv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from bench.common import COLUMNS
from bench.tools import Source

TYPES = {"project": pa.string(), "url": pa.string(), "count": pa.int32(), "bytes": pa.int64()}


def _filesystem(src: Source):
    return src.store.pyarrow_fs() if src.is_s3 else None


def _csv(src: Source) -> ds.Dataset:
    fmt = ds.CsvFileFormat(
        parse_options=csv.ParseOptions(delimiter=" "),
        read_options=csv.ReadOptions(column_names=list(COLUMNS)),
        convert_options=csv.ConvertOptions(column_types=TYPES),
    )
    return ds.dataset(src.arrow_path, format=fmt, filesystem=_filesystem(src))


def w1(src: Source) -> int:
    return _csv(src).count_rows(filter=ds.field("count") == 1)


def w2(src: Source, out: Source) -> int | None:
    options = ds.ParquetFileFormat().make_write_options(compression="snappy")
    ds.write_dataset(
        _csv(src),
        out.arrow_path,
        format="parquet",
        file_options=options,
        filesystem=_filesystem(out),
        existing_data_behavior="overwrite_or_ignore",
        create_dir=not out.is_s3,  # no directory marker objects on S3
    )
    return None


def w4(src: Source) -> int:
    frame = pq.read_table(src.arrow_path, filesystem=_filesystem(src)).to_pandas()
    return len(frame)
