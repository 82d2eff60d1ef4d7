"""The fast path for delimited text without quoting: Spark's text source and ``split`` instead of the CSV parser.

Page-view dumps and most machine-written logs have one record per line and no quoted fields. For them the
CSV parser's per-field work is wasted; splitting each line on the delimiter and casting is cheaper (measured
on 1 GB of page views, 2 cores: see README "Benchmarks").

The results are the CSV reader's, row for row, bad rows included, by construction:

* A line is taken by the fast path only when it is certainly parsed the same way: it has exactly one field
  per column, does not contain the quote character (NUL when quoting is off, as for the CSV parser), and every
  typed field is in a plain form whose cast gives the same value as the CSV parser (an integer whose text is
  exactly as long as its value prints, a plain decimal or exponent number for floating point,
  ``true``/``false`` for booleans).
* Every other line (wrong field count, a quote, ``NaN``, `` 12``, ``1.0`` in an INT column, an overflow, a
  word in a number column, ...) goes through ``from_csv``, which is Spark's CSV parser itself with the same
  options: it decides the values or flags the line as malformed, exactly as the CSV reader would. (Or, with
  ``parse_lines(fallback=False)``, such a line stops the action, and the caller reads again with fallback.)
* Blank lines (only characters up to U+0020) are skipped, as the CSV reader skips them; an empty field is
  null, as with the CSV reader's default ``nullValue``.

The split and the integer check are our own expressions (``expressions``: one pass over the line's bytes)
when the session loaded them, and Spark's ``split()`` and casts otherwise; the results are the same.

It applies when lines are records (no ``multiLine``), there is no header line to skip (the text source
cannot tell a file's first line), the encoding is UTF-8 and every column has a type listed in
``_PLAIN_FORMS``. ``unsupported_reason`` says why not otherwise, and the CSV reader is used.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from s3spark import expressions

# Integers are checked by the length of their text (cheaper than a regular expression); this one marks them.
_INTEGER = r"^-?[0-9]+$"
_FLOATING = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_BOOLEAN = r"^(?i)(true|false)$"
# Column types the fast path decides itself, and the regular expression of the values it accepts.
_PLAIN_FORMS: dict[type[DataType], str | None] = {
    StringType: None,
    ByteType: _INTEGER,
    ShortType: _INTEGER,
    IntegerType: _INTEGER,
    LongType: _INTEGER,
    FloatType: _FLOATING,
    DoubleType: _FLOATING,
    BooleanType: _BOOLEAN,
}
# Java regex metacharacters: a delimiter among them is escaped, so split() still takes Java's one-char fast path.
_REGEX_META = set(".$|()[{^?*+\\")
_NOT_BLANK = r"[^\x00-\x20]"
_SLOW_COLUMN = "_s3spark_csv_parsed"
_FIELDS_COLUMN = "_s3spark_fields"
_PLAIN_COLUMN = "_s3spark_plain"
# Starts the error of an action that met a line the fast path alone cannot read (parse_lines fallback=False).
NEEDS_CSV_PARSER = "S3SPARK_NEEDS_CSV_PARSER: "


def unsupported_reason(schema: StructType, *, multiline: bool, header: bool, encoding: str) -> str | None:
    """Why the fast path cannot read this input exactly like the CSV reader, or None when it can."""
    if multiline:
        return "records may span lines (--multiline)"
    if header:
        return "the input has a header line"
    if encoding.replace("-", "").replace("_", "").upper() != "UTF8":
        return f"the encoding is {encoding}, not UTF-8"
    for column in schema.fields:
        if type(column.dataType) not in _PLAIN_FORMS:
            return f"column {column.name} has type {column.dataType.simpleString()}"
    return None


def split_pattern(delimiter: str) -> str:
    """The delimiter as the regular expression split() takes."""
    return "\\" + delimiter if delimiter in _REGEX_META else delimiter


def _ddl(schema: StructType) -> str:
    return ", ".join(f"`{c.name.replace('`', '``')}` {c.dataType.simpleString()}" for c in schema.fields)


def parse_lines(
    lines: DataFrame,
    schema: StructType,
    corrupt_column: str,
    delimiter: str,
    quote: str,
    csv_options: dict[str, str],
    *,
    fallback: bool = True,
) -> DataFrame:
    """Lines (a text source's ``value`` column) as the schema's columns plus the corrupt-record column.

    ``quote`` is the quote character ('' when quoting is off, which the CSV parser treats as NUL);
    ``csv_options`` are the CSV reader's options, used by ``from_csv`` for the lines the fast path leaves.
    With ``fallback=False`` a line that is not plain fails the action instead (see ``needs_csv_parser``):
    ``from_csv`` has no generated code, and merely having it in the plan splits Spark's whole-stage code
    generation in two, which cost about 4 s of 18 s converting 1 GiB of page views to Parquet (2 cores).
    """
    line = F.col("value")
    # split() once per line: the fields are a column of their own that the checks and casts below index.
    fields = F.col(_FIELDS_COLUMN)
    spark = lines.sparkSession
    own = expressions.usable(spark, delimiter, quote)
    if own:
        # A line with the quote character comes out with no fields, so its field count is wrong.
        split_line = expressions.split_on_byte(spark, line, delimiter, quote)
    else:
        split_line = F.split(line, split_pattern(delimiter), -1)
    # The CSV reader skips blank lines; most lines start with a printable character, which is checked first
    # (comparing bytes: ascii() would make a Java string of the first character, per line).
    split = lines.where((line >= "!") | line.rlike(_NOT_BLANK)).select(line, split_line.alias(_FIELDS_COLUMN))
    plain, fast_values = _plain_and_values(schema, fields, line, quote, spark if own else None)
    # A nondeterministic term (always true) keeps Spark from pushing a filter on the flag, such as dropping
    # malformed rows, below this projection: there it would repeat split() for every field it checks.
    plain = plain & (F.spark_partition_id() >= 0)
    fast = split.select(
        line, plain.alias(_PLAIN_COLUMN), *[value.alias(f"_fast_{index}") for index, value in enumerate(fast_values)]
    )
    is_plain = F.col(_PLAIN_COLUMN)
    if fallback:
        ddl = _ddl(schema) + f", `{corrupt_column}` string"
        options = {**csv_options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": corrupt_column}
        # The CSV parser runs only for lines that are not plain; its struct is then picked apart per column.
        fast = fast.withColumn(_SLOW_COLUMN, F.when(~is_plain, F.from_csv(line, ddl, options)))

        def slow_value(name: str, data_type: DataType) -> Column:
            return F.col(_SLOW_COLUMN).getField(name)
    else:
        # Every column of a line that is not plain raises, the corrupt-record column included: whatever a query
        # reads of such a line (even a filter Spark moves first, such as "count IS NOT NULL") stops it.
        stop = F.raise_error(F.concat(F.lit(NEEDS_CSV_PARSER), line))

        def slow_value(name: str, data_type: DataType) -> Column:
            return stop.cast(data_type)

    return fast.select(
        *[
            F.when(is_plain, F.col(f"_fast_{index}"))
            .otherwise(slow_value(column.name, column.dataType))
            .alias(column.name)
            for index, column in enumerate(schema.fields)
        ],
        F.when(~is_plain, slow_value(corrupt_column, StringType())).alias(corrupt_column),
    )


def _plain_and_values(
    schema: StructType, fields: Column, line: Column, quote: str, own: SparkSession | None
) -> tuple[Column, list[Column]]:
    """Whether a line is plain (see the module docstring), and each column's value when it is.

    ``own`` is the session when the fields come from ``expressions.split_on_byte`` (which already checked for
    the quote character) and its integer check is used; None for Spark's built-in expressions.
    """
    plain = F.size(fields) == len(schema.fields)
    if own is None:
        # NUL is the CSV parser's quote character when quoting is off; with a quote it is an ordinary one.
        plain = plain & ~line.contains(quote or "\u0000")
    values: list[Column] = []
    for index, column in enumerate(schema.fields):
        text = fields.getItem(index)
        form = _PLAIN_FORMS[type(column.dataType)]
        if form is None:
            values.append(F.when(text != "", text))
            continue
        if isinstance(column.dataType, BooleanType):
            value = F.lower(text) == "true"
            plain = plain & ((text == "") | text.rlike(form))
        elif form is _INTEGER and own is not None:
            # The same test as below, in one pass over the text's bytes.
            value = expressions.canonical_integer(own, text, column.dataType)
            plain = plain & ((text == "") | value.isNotNull())
        elif form is _INTEGER:
            # The text is exactly as long as the value prints: every digit of a non-zero value is in its text,
            # so anything more ("+5", "007", " 5", "5.0") makes it longer; zero must be "0" (the cast reads "."
            # as 0). Overflows are null. The others go to the CSV parser. Cheaper than printing the value back
            # and comparing: measured on 1 GiB of page views (2 cores), the print-back was a sixth of the CPU.
            value = text.cast(column.dataType)
            canonical = (F.octet_length(text) == _printed_length(value)) & ((value != 0) | (text == "0"))
            plain = plain & ((text == "") | (value.isNotNull() & canonical))
        else:
            value = text.cast(column.dataType)
            plain = plain & ((text == "") | (text.rlike(form) & value.isNotNull()))
        values.append(F.when(text != "", value))
    return plain, values


def _printed_length(value: Column) -> Column:
    """How many characters an integer prints as: its digits, plus one for a minus sign.

    Comparisons only, most likely first. Long.MIN_VALUE, whose absolute value overflows, comes out as 2: wrong,
    so its line goes to the CSV parser, which reads it right.
    """
    magnitude = F.abs(value.cast("long"))
    length = F.when(magnitude < 10, 1)
    for digits in range(2, 19):
        length = length.when(magnitude < 10**digits, digits)
    return length.otherwise(19) + F.when(value < 0, 1).otherwise(0)


def needs_csv_parser(error: BaseException) -> bool:
    """True when an action failed because a line read with fallback=False was not plain."""
    return NEEDS_CSV_PARSER in str(error)
