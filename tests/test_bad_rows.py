"""Malformed rows: fail naming file and record, drop with a count, or quarantine with the raw text."""

from __future__ import annotations

from conftest import write

SCHEMA = "id INT, amount DOUBLE, note STRING"
# 5 good rows; 3 malformed: a value that does not cast, too few fields, too many fields.
DATA = "id,amount,note\n1,1.5,a\n2,2.5,b\nthree,3.5,c\n4,4.5,d\n5,5.5\n6,6.5,f,extra\n7,7.5,g\n8,8.5,h\n"


def run(run_job, tmp_path, *extra):
    src = write(tmp_path / "in" / "data.csv", DATA)
    return run_job("csv_to_parquet", "--input", str(src), "--schema", SCHEMA, "--output", str(tmp_path / "out"), *extra)


def test_fail_is_default_names_file_and_record_and_writes_nothing(run_job, tmp_path):
    result = run(run_job, tmp_path)
    assert result.code == 2
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1
    assert "malformed row in file:" in error_lines[0] and "data.csv" in error_lines[0]
    assert "'three,3.5,c'" in error_lines[0] or "'5,5.5'" in error_lines[0] or "'6,6.5,f,extra'" in error_lines[0]
    assert "--on-bad-rows" in error_lines[0]
    assert "\tat " not in result.stderr  # no Java stack trace without --verbose
    assert not (tmp_path / "out").exists()
    assert result.summary["status"] == "failed"


def test_drop_counts_exactly(spark, run_job, tmp_path):
    result = run(run_job, tmp_path, "--on-bad-rows", "drop")
    assert result.code == 0, result.stderr
    s = result.summary
    assert (s["rows_read"], s["rows_written"], s["rows_dropped"], s["rows_quarantined"]) == (8, 5, 3, 0)
    ids = sorted(row.id for row in spark.read.parquet(str(tmp_path / "out")).collect())
    assert ids == [1, 2, 4, 7, 8]


def test_quarantine_keeps_raw_text_and_source(spark, run_job, tmp_path):
    quarantine = tmp_path / "bad"
    result = run(run_job, tmp_path, "--on-bad-rows", "quarantine", "--quarantine", str(quarantine))
    assert result.code == 0, result.stderr
    s = result.summary
    assert (s["rows_read"], s["rows_written"], s["rows_quarantined"], s["rows_dropped"]) == (8, 5, 3, 0)
    assert s["quarantine"] == str(quarantine)
    bad = spark.read.schema("source_file STRING, record STRING").json(str(quarantine)).collect()
    assert sorted(row.record for row in bad) == ["5,5.5", "6,6.5,f,extra", "three,3.5,c"]
    assert all(row.source_file.endswith("/in/data.csv") for row in bad)


def test_quarantine_requires_a_location(run_job, tmp_path):
    result = run(run_job, tmp_path, "--on-bad-rows", "quarantine")
    assert result.code == 2
    assert "--quarantine URI" in result.stderr


def test_bad_value_in_an_unselected_column_is_still_malformed(spark, run_job, tmp_path):
    result = run(run_job, tmp_path, "--on-bad-rows", "drop", "--select", "note")
    assert result.code == 0, result.stderr
    assert result.summary["rows_dropped"] == 3
    assert sorted(r.note for r in spark.read.parquet(str(tmp_path / "out")).collect()) == ["a", "b", "d", "g", "h"]


def test_filter_count_counts_add_up(run_job, tmp_path):
    src = write(tmp_path / "in" / "data.csv", DATA)
    result = run_job(
        "csv_filter_count", "--input", str(src), "--schema", SCHEMA, "--filter", "amount > 4", "--on-bad-rows", "drop"
    )
    assert result.code == 0, result.stderr
    s = result.summary
    assert s["rows_matched"] == 3  # 4.5, 7.5, 8.5
    assert s["rows_read"] == s["rows_matched"] + s["rows_filtered_out"] + s["rows_dropped"] == 8


def test_fail_names_a_long_record_with_quotes_and_non_ascii_text_exactly(run_job, tmp_path):
    record = "x" * 90 + ',"Zürich, ""east""",' + "ü" * 40
    src = write(tmp_path / "in dir" / "naïve data.csv", f"1,1.5,a\n{record}\n")
    result = run_job(
        "csv_to_parquet", "--input", str(src), "--schema", SCHEMA, "--no-header", "--output", str(tmp_path / "out")
    )
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.code == 2 and len(error_lines) == 1
    assert "in%20dir/naïve%20data.csv" in error_lines[0] and repr(record) in error_lines[0]  # the file as a URI
