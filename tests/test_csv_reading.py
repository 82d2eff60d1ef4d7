"""CSV edge cases, converted through the csv_to_parquet job and checked row by row."""

from __future__ import annotations

import gzip

from chispa import assert_df_equality

from conftest import write

PEOPLE = "id INT, name STRING, city STRING"


def convert(run_job, inputs, out, *extra):
    result = run_job("csv_to_parquet", "--input", inputs, "--schema", PEOPLE, "--output", str(out), *extra)
    assert result.code == 0, result.stderr
    return result


def expect(spark, out, rows):
    expected = spark.createDataFrame(rows, PEOPLE)
    actual = spark.read.parquet(str(out))
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)


def test_quoted_delimiters_and_escaped_quotes(spark, run_job, tmp_path):
    src = write(tmp_path / "in.csv", 'id,name,city\n1,"Smith, Jane","Paris"\n2,"say ""hi""",Rome\n')
    result = convert(run_job, str(src), tmp_path / "out")
    expect(spark, tmp_path / "out", [(1, "Smith, Jane", "Paris"), (2, 'say "hi"', "Rome")])
    assert result.summary["rows_read"] == result.summary["rows_written"] == 2


def test_embedded_newlines_need_multiline(spark, run_job, tmp_path):
    src = write(tmp_path / "in.csv", 'id,name,city\n1,"two\nlines",Oslo\n2,plain,Bern\n')
    convert(run_job, str(src), tmp_path / "out", "--multiline")
    expect(spark, tmp_path / "out", [(1, "two\nlines", "Oslo"), (2, "plain", "Bern")])


def test_embedded_newline_without_multiline_is_malformed_not_lost(run_job, tmp_path):
    src = write(tmp_path / "in.csv", 'id,name,city\n1,"two\nlines",Oslo\n2,plain,Bern\n')
    result = run_job(
        "csv_to_parquet",
        "--input",
        str(src),
        "--schema",
        PEOPLE,
        "--output",
        str(tmp_path / "out"),
        "--on-bad-rows",
        "drop",
    )
    assert result.code == 0
    summary = result.summary
    assert summary["rows_dropped"] >= 1
    assert summary["rows_read"] == summary["rows_written"] + summary["rows_dropped"]


def test_utf8_bom_crlf_and_empty_lines(spark, run_job, tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes("\ufeffid,name,city\r\n1,Zoë,Zürich\r\n\r\n2,Åsa,Malmö\r\n\r\n".encode())
    result = convert(run_job, str(src), tmp_path / "out")
    expect(spark, tmp_path / "out", [(1, "Zoë", "Zürich"), (2, "Åsa", "Malmö")])
    assert result.summary["rows_read"] == 2


def test_non_utf8_encoding(spark, run_job, tmp_path):
    src = write(tmp_path / "in.csv", "id,name,city\n1,Zoë,Zürich\n", encoding="latin-1")
    convert(run_job, str(src), tmp_path / "out", "--encoding", "ISO-8859-1")
    expect(spark, tmp_path / "out", [(1, "Zoë", "Zürich")])


def test_gzip_input(spark, run_job, tmp_path):
    src = tmp_path / "in.csv.gz"
    src.write_bytes(gzip.compress(b"id,name,city\n1,a,b\n2,c,d\n"))
    convert(run_job, str(src), tmp_path / "out")
    expect(spark, tmp_path / "out", [(1, "a", "b"), (2, "c", "d")])


def test_many_small_files_with_empty_and_header_only(spark, run_job, tmp_path):
    folder = tmp_path / "in"
    for index in range(30):
        write(folder / f"part-{index:02}.csv", f"id,name,city\n{index},n{index},c{index}\n")
    write(folder / "empty.csv", "")
    write(folder / "header-only.csv", "id,name,city\n")
    result = convert(run_job, str(folder), tmp_path / "out")
    expect(spark, tmp_path / "out", [(i, f"n{i}", f"c{i}") for i in range(30)])
    assert result.summary["input_files"] == 32
    assert result.summary["rows_read"] == 30


def test_glob_and_comma_list_inputs(spark, run_job, tmp_path):
    a = write(tmp_path / "a" / "x.csv", "id,name,city\n1,a,b\n")
    write(tmp_path / "a" / "skip.txt", "not,csv,at all\n")
    b = write(tmp_path / "b.csv", "id,name,city\n2,c,d\n")
    result = convert(run_job, f"{tmp_path}/a/*.csv,{b}", tmp_path / "out")
    expect(spark, tmp_path / "out", [(1, "a", "b"), (2, "c", "d")])
    assert result.summary["input_files"] == 2
    assert a.exists()


def test_space_delimited_headerless_pageviews(spark, run_job, tmp_path):
    src = write(tmp_path / "pageviews", "en Main_Page 42 1000\nde Caf%C3%A9 1 20\n")
    result = run_job(
        "csv_to_parquet",
        "--input",
        str(src),
        "--schema",
        "@pageviews",
        "--delimiter",
        "space",
        "--no-header",
        "--output",
        str(tmp_path / "out"),
    )
    assert result.code == 0, result.stderr
    expected = spark.createDataFrame(
        [("en", "Main_Page", 42, 1000), ("de", "Caf%C3%A9", 1, 20)],
        "project STRING, url STRING, count INT, bytes BIGINT",
    )
    assert_df_equality(spark.read.parquet(str(tmp_path / "out")), expected, ignore_row_order=True, ignore_nullable=True)


def test_tab_delimiter(spark, run_job, tmp_path):
    src = write(tmp_path / "in.tsv", "id\tname\tcity\n1\ta b\tc,d\n")
    convert(run_job, str(src), tmp_path / "out", "--delimiter", "tab")
    expect(spark, tmp_path / "out", [(1, "a b", "c,d")])


def test_inferred_schema_warns_and_prints_ddl(spark, run_job, tmp_path):
    src = write(tmp_path / "in.csv", "id,score\n1,2.5\n2,3.0\n")
    result = run_job("csv_to_parquet", "--input", str(src), "--output", str(tmp_path / "out"))
    assert result.code == 0, result.stderr
    assert "no --schema given" in result.stderr
    assert "--schema 'id INT,score DOUBLE'" in result.stderr
    assert dict(spark.read.parquet(str(tmp_path / "out")).dtypes) == {"id": "int", "score": "double"}
