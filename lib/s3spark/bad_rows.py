"""What happens to malformed rows: fail the job naming the row, drop and count them, or quarantine them."""

from __future__ import annotations

import re
from enum import Enum

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from s3spark.reader import CORRUPT_COLUMN, HELPER_COLUMNS, SOURCE_COLUMN, is_malformed

MARKER_START = "S3SPARK_MALFORMED_ROW<<"
MARKER_END = ">>S3SPARK_MALFORMED_ROW"
# Between the markers: the file as a URI (input_file_name() encodes spaces, so it has none), then the raw record.
_RECORD = " record: "
_MARKED = re.compile(re.escape(MARKER_START) + r"(\S*)" + _RECORD + r"(.*?)" + re.escape(MARKER_END), re.DOTALL)


class BadRowPolicy(Enum):
    FAIL = "fail"
    DROP = "drop"
    QUARANTINE = "quarantine"


def good_rows(frame: DataFrame, policy: BadRowPolicy) -> DataFrame:
    """The well-formed rows without helper columns; under FAIL the first malformed row aborts the job."""
    if policy is BadRowPolicy.FAIL:
        # Plain concat: to_json would be easier to take apart, but it has no generated code, and would split
        # Spark's whole-stage code generation around this filter, which every row passes.
        details = F.concat(F.col(SOURCE_COLUMN), F.lit(_RECORD), F.col(CORRUPT_COLUMN))
        abort = F.raise_error(F.concat(F.lit(MARKER_START), details, F.lit(MARKER_END)))
        kept = frame.where(F.when(is_malformed(), abort.cast("boolean")).otherwise(F.lit(True)))
    else:
        kept = frame.where(~is_malformed())
    return kept.drop(*HELPER_COLUMNS)


def malformed_rows(frame: DataFrame) -> DataFrame:
    """Malformed rows as quarantine records: the source file and the raw text."""
    return frame.where(is_malformed()).select(
        F.col(SOURCE_COLUMN).alias("source_file"), F.col(CORRUPT_COLUMN).alias("record")
    )


def malformed_row_in(message: str) -> tuple[str, str] | None:
    """(file, record) of the malformed row named in a failed job's error message, if any."""
    match = _MARKED.search(message)
    if not match:
        return None
    file, record = match.groups()
    return file or "?", record
