"""The split() fast path for unquoted lines gives the CSV parser's results, row for row, bad rows included."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from conftest import write
from s3spark import expressions
from s3spark.errors import UserError
from s3spark.reader import CSV_PARSER, SPLIT_PARSER, CsvFormat, parser_for, read_csv
from s3spark.schema import parse_schema

PAGEVIEWS = "project STRING, url STRING, count INT, bytes BIGINT"
# Lines a page-view dump or a log may hold, good and bad, including the forms where Spark's cast and the CSV
# parser disagree ("+5", "1.0", " 1", overflow, non-ASCII digits) and lines with quotes.
PAGEVIEW_LINES = [
    "en Main_Page 1 100",
    "de Berlin 12 2000",
    "en Zürich_%E6%9D%B1 3 4",
    "en  3 4",
    " en x 1 2",
    "en x 1 2 ",
    "en x 1",
    "en x 1 2 3",
    "en x +5 6",
    "en x -5 -6",
    "en x 1.0 2",
    "en x 1.5 2",
    "en x 2147483648 1",
    "en x -2147483648 0",
    "en x 1 9223372036854775808",
    "en x abc 1",
    "en x  1",
    'en "quoted title" 1 2',
    'en a"b 1 2',
    '"en" x 1 2',
    'en x "7" 8',
    "",
    "   ",
    "\t",
    "\u00a0",
    "\u007f",
    "\u0001 en x 1 2",
    "!",
    "en x 1 2\r",
    "en x ١٢ 5",
    "en x 0x10 1",
    "en x 007 1",
    "en x -0 1",
    "en x - 1",
    "en x\u0000y 1 2",
    "\u0000en x 1 2",
    "en x 1 2\u0000",
    "en \u0000 1 2",
    "en x 1e3 1",
    "en x 1 2\t",
    "a b c d e f",
]
NUMBERS = [
    "1", "-1", "+1", "1.5", "-.5", ".5", "5.", "1e3", "1E-3", "+1e+3", "NaN", "Inf", "-Inf", "Infinity",
    "-Infinity", "nan", "inf", " 1", "1 ", "1d", "1f", "0x1p3", "", "abc", "true", "False", "TRUE", "yes", "1e400",
    "3.4e39", "127", "128", "-129", "32768", "١", "00", "-0", "0.0", "-0.0", "2147483647", "2147483648",
    "9223372036854775807", "9223372036854775808", "+", "-", ".",
    # integers around each length the fast path checks, and forms the cast reads but the CSV parser does not
    "0", "9", "10", "-9", "-10", "99", "100", "32767", "-32768", "-128", "-2147483648", "-2147483649",
    "999999999999999", "1000000000000000", "-9223372036854775808", "-9223372036854775809", "-.", "+.", "0.",
    ".0", "-0.", "\t1", "1\t", "1\u0001", "01", "-01", "+0",
]  # fmt: skip


@pytest.fixture(params=["own", "builtin"])
def split_expressions(request, spark):
    """Each fast-path test runs with our own expressions (lib/java) and with Spark's built-in ones."""
    if request.param == "own" and expressions.find_javac() is None:
        pytest.skip("no javac here: our own expressions are not built")
    spark.conf.set(expressions.ENABLED_KEY, str(request.param == "own").lower())
    assert expressions.usable(spark, " ", "") == (request.param == "own")
    yield request.param
    spark.conf.unset(expressions.ENABLED_KEY)


def both_parsers(spark, path, ddl: str, fmt: CsvFormat) -> tuple[list, list]:
    schema = parse_schema(spark, ddl)
    assert parser_for(schema, fmt) == SPLIT_PARSER
    rows = []
    for parser in (CSV_PARSER, SPLIT_PARSER):
        frame = read_csv(spark, [str(path)], schema, replace(fmt, parser=parser)).drop("_source_file")
        rows.append(sorted((_comparable(row) for row in frame.collect()), key=repr))
    return rows[0], rows[1]


def _comparable(row) -> tuple:
    return tuple("NaN" if isinstance(value, float) and math.isnan(value) else value for value in row)


def test_pageview_edge_lines_parse_identically(spark, split_expressions, tmp_path):
    path = write(tmp_path / "pv.txt", "\n".join(PAGEVIEW_LINES) + "\n")
    by_csv, by_split = both_parsers(spark, path, PAGEVIEWS, CsvFormat(delimiter=" ", header=False))
    assert by_split == by_csv
    good = [row for row in by_csv if row[-1] is None]
    bad = [row[-1] for row in by_csv if row[-1] is not None]
    assert ("en", "Zürich_%E6%9D%B1", 3, 4, None) in good
    assert ("en", "x", 5, 6, None) in good  # "+5": the CSV parser accepts it, so the fast path hands it over
    assert "en x 1.5 2" in bad and "en x 1 2 3" in bad and "en x 2147483648 1" in bad
    assert len(good) + len(bad) == len(PAGEVIEW_LINES) - 3  # the three blank lines are skipped by both
    assert "\u00a0" in bad and "\u007f" in bad and "!" in bad  # not blank to the CSV reader either


@pytest.mark.parametrize("column_type", ["TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN"])
def test_every_fast_type_agrees_with_the_csv_parser(spark, split_expressions, tmp_path, column_type):
    path = write(tmp_path / "values.txt", "".join(f"row{i}|{value}\n" for i, value in enumerate(NUMBERS)))
    by_csv, by_split = both_parsers(spark, path, f"name STRING, value {column_type}", CsvFormat("|", header=False))
    assert by_split == by_csv
    assert len(by_csv) == len(NUMBERS)


@pytest.mark.parametrize(("delimiter", "quote"), [("\t", '"'), (",", '"'), ("|", ""), (";", "'")])
def test_delimiters_and_quotes_agree(spark, split_expressions, tmp_path, delimiter, quote):
    lines = [
        ["a", "1", "x y"],
        ["b", "", ""],
        ['"c', "2", 'say "hi"'],
        ["'d'", "3", "it's"],
        [f'"e{delimiter}f"', "4", "z"],
        ["g", "5"],
        ["h", "6", "i", "j"],
        ["\u0000k", "7", "l\u0000m"],  # NUL is the quote character when quoting is off
        ["n\u0000", "8", "\u0000"],
    ]
    path = write(tmp_path / "d.txt", "".join(delimiter.join(fields) + "\n" for fields in lines))
    fmt = CsvFormat(delimiter=delimiter, header=False, quote=quote, escape=quote or '"')
    by_csv, by_split = both_parsers(spark, path, "k STRING, n INT, note STRING", fmt)
    assert by_split == by_csv
    assert ("a", 1, "x y", None) in by_csv


def test_gzip_and_several_files_agree(spark, split_expressions, tmp_path):
    from s3spark.sample_data import write_pageviews

    write_pageviews(tmp_path / "in" / "a.gz", 3000, seed=1)
    write_pageviews(tmp_path / "in" / "b.txt", 2000, seed=2)
    write(tmp_path / "in" / "c.txt", "en broken 1\nen x y z\nen ok 1 2\n")
    by_csv, by_split = both_parsers(spark, tmp_path / "in", PAGEVIEWS, CsvFormat(delimiter=" ", header=False))
    assert by_split == by_csv
    assert len(by_csv) == 5003


@pytest.mark.parametrize(
    ("fmt", "ddl", "reason"),
    [
        (CsvFormat(delimiter=" ", header=True), PAGEVIEWS, "header"),
        (CsvFormat(delimiter=" ", header=False, multiline=True), PAGEVIEWS, "multiline"),
        (CsvFormat(delimiter=" ", header=False, encoding="ISO-8859-1"), PAGEVIEWS, "encoding"),
        (CsvFormat(delimiter=" ", header=False), "day DATE, n INT", "type date"),
        (CsvFormat(delimiter=" ", header=False), "price DECIMAL(10,2)", "type decimal(10,2)"),
    ],
)
def test_inputs_the_fast_path_cannot_mirror_use_the_csv_parser(spark, fmt, ddl, reason):
    schema = parse_schema(spark, ddl)
    assert parser_for(schema, fmt) == CSV_PARSER
    with pytest.raises(UserError, match="--parser split cannot read this input"):
        parser_for(schema, replace(fmt, parser=SPLIT_PARSER))
    assert parser_for(parse_schema(spark, PAGEVIEWS), CsvFormat(delimiter=" ", header=False)) == SPLIT_PARSER


BAD_ROW_DATA = "en a 1 10\nen b 2 20\nen c three 30\nde d 1\nde e 1 40 extra\nfr f 1 50\n"


@pytest.mark.parametrize("policy", ["drop", "quarantine", "fail"])
def test_jobs_account_for_bad_rows_identically(spark, run_job, tmp_path, policy):
    src = write(tmp_path / "in" / "pv.txt", BAD_ROW_DATA)
    results = {}
    for parser in ("csv", "auto"):
        out, bad = tmp_path / f"out-{parser}", tmp_path / f"bad-{parser}"
        args = ["--input", str(src), "--schema", "@pageviews", "--delimiter", "space", "--no-header"]
        args += ["--output", str(out), "--parser", parser, "--on-bad-rows", policy, "--quarantine", str(bad)]
        result = run_job("csv_to_parquet", *args)
        counts = {k: result.summary.get(k) for k in ("status", "rows_read", "rows_written", "rows_dropped")}
        counts["rows_quarantined"] = result.summary.get("rows_quarantined")
        rows = sorted(map(tuple, spark.read.parquet(str(out)).collect())) if out.exists() else None
        quarantined = (
            sorted(r.record for r in spark.read.schema("source_file STRING, record STRING").json(str(bad)).collect())
            if bad.exists()
            else None
        )
        error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        results[parser] = (result.code, counts, rows, quarantined, error, result.summary.get("parser"))
    assert results["auto"][:5] == results["csv"][:5]
    assert (results["csv"][5], results["auto"][5]) == ("csv", "split")
    code, counts, rows, quarantined, error, _ = results["auto"]
    if policy == "fail":
        assert code == 2 and rows is None and len(error) == 1 and "malformed row" in error[0]
    else:
        assert code == 0 and counts["rows_read"] == 6 and counts["rows_written"] == 3
        assert rows == [("en", "a", 1, 10), ("en", "b", 2, 20), ("fr", "f", 1, 50)]
    if policy == "quarantine":
        assert quarantined == ["de d 1", "de e 1 40 extra", "en c three 30"]


def test_without_fallback_plain_lines_read_alike_and_other_lines_stop_the_action(spark, split_expressions, tmp_path):
    from s3spark.line_split import needs_csv_parser

    schema = parse_schema(spark, PAGEVIEWS)
    fmt = CsvFormat(delimiter=" ", header=False)
    plain = write(tmp_path / "plain.txt", "en Main_Page 1 100\n\nde Berlin -12 2000\nen Zürich_%E6 3 4\nen  3 \n")
    expected = read_csv(spark, [str(plain)], schema, replace(fmt, parser=CSV_PARSER)).drop("_source_file").collect()
    fast = read_csv(spark, [str(plain)], schema, fmt, fallback=False).drop("_source_file").collect()
    assert sorted(fast, key=repr) == sorted(expected, key=repr)
    assert len(fast) == 4
    quoted = write(tmp_path / "quoted.txt", 'en Main_Page 1 100\nen "a b" 1 2\n')
    with pytest.raises(Exception) as stopped:  # noqa: B017 - Spark raises its own job failure type
        read_csv(spark, [str(quoted)], schema, fmt, fallback=False).collect()
    assert needs_csv_parser(stopped.value)
    # Also when a query reads one column only (the corrupt-record column is pruned then).
    with pytest.raises(Exception) as stopped:  # noqa: B017
        read_csv(spark, [str(quoted)], schema, fmt, fallback=False).where("count = 2").select("count").collect()
    assert needs_csv_parser(stopped.value)


@pytest.mark.parametrize("fallback", [True, False])
def test_dropping_malformed_rows_splits_each_line_once(spark, split_expressions, tmp_path, fallback):
    from s3spark.bad_rows import BadRowPolicy, good_rows

    path = write(tmp_path / "pv.txt", "en a 1 2\n")
    frame = read_csv(
        spark, [str(path)], parse_schema(spark, PAGEVIEWS), CsvFormat(" ", header=False), fallback=fallback
    )
    plan = good_rows(frame, BadRowPolicy.DROP)._jdf.queryExecution().executedPlan().toString()
    # A filter pushed below the split would repeat it for every field it checks.
    assert plan.count("split_on_byte(" if split_expressions == "own" else "split(") == 1


def test_a_line_for_the_csv_parser_makes_the_job_read_again_with_it(spark, run_job, tmp_path):
    src = write(tmp_path / "in" / "pv.txt", 'en a 1 10\nen "b c" 2 20\nde d 1 30\n')
    out = tmp_path / "out"
    common = ["--input", str(src), "--schema", "@pageviews", "--delimiter", "space", "--no-header"]
    converted = run_job("csv_to_parquet", *common, "--output", str(out))  # --mode error: out must not exist yet
    assert converted.code == 0, converted.stderr
    assert "reading the input again" in converted.stderr
    assert converted.summary["rows_written"] == 3 and "read a second time" in converted.summary["note"]
    rows = sorted(map(tuple, spark.read.parquet(str(out)).collect()))
    assert rows == [("de", "d", 1, 30), ("en", "a", 1, 10), ("en", "b c", 2, 20)]
    # A filter on a column: Spark evaluates "count IS NOT NULL" first, and the quoted line must not slip by it.
    filtered = run_job("csv_to_parquet", *common, "--output", str(tmp_path / "two"), "--filter", "count = 2")
    assert filtered.code == 0 and filtered.summary["rows_written"] == 1
    assert [tuple(row) for row in spark.read.parquet(str(tmp_path / "two")).collect()] == [("en", "b c", 2, 20)]
    counted = run_job("csv_filter_count", *common, "--filter", "count = 1")
    assert counted.code == 0 and counted.summary["rows_matched"] == 2 and counted.summary["rows_read"] == 3
    clean = run_job("csv_filter_count", "--input", str(write(tmp_path / "ok.txt", "en a 1 10\n")), *common[2:])
    assert clean.summary["note"] is None and "reading the input again" not in clean.stderr
