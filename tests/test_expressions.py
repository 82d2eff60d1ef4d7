"""Our own Catalyst expressions (lib/java): built once from source, loaded by the session, equal to Spark's own."""

from __future__ import annotations

import re
import shutil
import zipfile

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, IntegerType, LongType, ShortType

from s3spark import expressions
from s3spark.line_split import split_pattern

LINES = [
    b"en Main_Page 1 100",
    b"",
    b" ",
    b"a  b ",
    b"en Z\xc3\xbcrich 3 4",  # UTF-8
    b"en bad\xff\xfe 1 2",  # not UTF-8: split() decodes it with U+FFFD, so must we
    b"en \xe6\x9d 1",  # a cut multi-byte sequence
    b"\xc3 x",
    b"tab\there 1",
    b"end ",
]
INTEGER_TEXTS = [
    "0", "1", "-1", "9", "10", "-10", "127", "128", "-128", "-129", "32767", "32768", "-32768", "-32769",
    "2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
    "-9223372036854775807", "-9223372036854775808", "-9223372036854775809", "99999999999999999999",
    "", "-", "+1", "01", "-0", "00", " 1", "1 ", "1.0", "1e3", "0x1", "١", "abc", "1-", "--1",
]  # fmt: skip
RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
INTEGER_TYPES = {"tinyint": ByteType(), "smallint": ShortType(), "int": IntegerType(), "bigint": LongType()}
CODEGEN_MODES = {
    "generated": {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "CODEGEN_ONLY"},
    "interpreted": {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"},
}


@pytest.fixture(params=list(CODEGEN_MODES))
def codegen(request, spark):
    """Runs a test with generated code and with the interpreted path (eval)."""
    from s3spark.session import session_conf

    with session_conf(spark, CODEGEN_MODES[request.param]):
        yield request.param


# Without a JDK the fast path runs on Spark's built-ins (tested too); with one, ours must be in use.
HAS_JAVAC = expressions.find_javac() is not None
needs_javac = pytest.mark.skipif(not HAS_JAVAC, reason="no javac here: the fast path uses Spark's built-ins")


def test_the_test_session_uses_them_when_there_is_a_jdk(spark):
    # A silent fall-back to Spark's split() where javac exists would hide a broken build.
    assert expressions.usable(spark, " ", "") == HAS_JAVAC
    assert expressions.usable(spark, "\t", '"') == HAS_JAVAC
    assert not expressions.usable(spark, "§", "")  # not one byte in UTF-8
    assert not expressions.usable(spark, ",", "«")
    assert not expressions.usable(spark, ",", ",")


@needs_javac
def test_split_on_byte_gives_what_split_gives(spark, codegen):
    frame = spark.createDataFrame([(bytearray(line),) for line in LINES], "raw binary")
    line = F.col("raw").cast("string")
    for delimiter in (" ", "\t"):
        rows = frame.select(
            expressions.split_on_byte(spark, line, delimiter, "").alias("own"),
            F.split(line, split_pattern(delimiter), -1).alias("builtin"),
        ).collect()
        assert [row.own for row in rows] == [row.builtin for row in rows]
    assert rows[0].own == ["en Main_Page 1 100"] and rows[5].own == ["en bad\ufffd\ufffd 1 2"]
    quoted = spark.createDataFrame([('en "a b" 1',), ("en a 1",), ("x\u0000y",), (None,)], "line string")
    rows = quoted.select(expressions.split_on_byte(spark, F.col("line"), " ", '"').alias("f")).collect()
    assert [row.f for row in rows] == [[], ["en", "a", "1"], ["x\u0000y"], None]
    nul = quoted.select(expressions.split_on_byte(spark, F.col("line"), " ", "").alias("f")).collect()
    assert [row.f for row in nul] == [["en", '"a', 'b"', "1"], ["en", "a", "1"], [], None]


def _canonical(text: str, bits: int) -> int | None:
    if not re.fullmatch(r"-?[0-9]+", text) or str(int(text)) != text:
        return None
    value = int(text)
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return value if low < value <= high or (bits < 64 and value == low) else None


@needs_javac
@pytest.mark.parametrize("type_name", list(RANGES))
def test_canonical_integer_reads_exactly_the_printed_form(spark, codegen, type_name):
    frame = spark.createDataFrame([(text,) for text in [*INTEGER_TEXTS, None]], "text string")
    parsed = frame.select(expressions.canonical_integer(spark, F.col("text"), INTEGER_TYPES[type_name]).alias("v"))
    assert parsed.schema["v"].dataType.simpleString() == type_name
    values = [row.v for row in parsed.collect()]
    assert values == [_canonical(text, RANGES[type_name]) for text in INTEGER_TEXTS] + [None]
    assert values[INTEGER_TEXTS.index("-1")] == -1 and values[INTEGER_TEXTS.index("01")] is None


@needs_javac
def test_the_jar_is_built_once_per_source(tmp_path, monkeypatch, capsys):
    sources = tmp_path / "java"
    shutil.copytree(expressions.JAVA_SOURCE_DIR, sources)
    monkeypatch.setattr(expressions, "JAVA_SOURCE_DIR", sources)
    monkeypatch.setenv("S3SPARK_CACHE", str(tmp_path / "cache"))
    assert expressions.ensure_jar(build=False) is None
    jar = expressions.ensure_jar()
    assert jar is not None and jar.parent == tmp_path / "cache" / "expressions"
    assert {"s3spark/SplitOnByte.class", "s3spark/CanonicalInteger.class"} <= set(zipfile.ZipFile(jar).namelist())
    built = jar.stat().st_mtime_ns
    assert expressions.ensure_jar() == jar and jar.stat().st_mtime_ns == built
    changed = sources / "s3spark" / "SplitOnByte.java"
    changed.write_text(changed.read_text() + "\n// changed\n")
    assert expressions.jar_path() != jar
    broken = sources / "s3spark" / "Broken.java"
    broken.write_text("package s3spark; class Broken { int x = ; }\n")
    assert expressions.ensure_jar() is None  # the job still runs, on Spark's split()
    assert "javac could not build" in capsys.readouterr().err


def test_without_javac_there_is_no_jar_and_a_note_says_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("S3SPARK_CACHE", str(tmp_path))
    monkeypatch.setattr(expressions, "find_javac", lambda: None)
    assert expressions.ensure_jar() is None
    assert "no javac found" in capsys.readouterr().err
    assert not list((tmp_path / "expressions").glob("*.jar"))
    assert expressions.ensure_jar() is None
    assert capsys.readouterr().err == ""  # said once, not on every job run
