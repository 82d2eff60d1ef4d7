"""Jar pins: matched to pyspark's Hadoop, verified by sha256, fetched with Maven only when missing."""

from __future__ import annotations

import pytest

from s3spark import jars
from s3spark.errors import UserError
from s3spark.paths import JAR_PINS_DIR

AWS = "org.apache.hadoop:hadoop-aws:{v} " + "a" * 64


def test_pyspark_bundles_hadoop_334_and_pins_exist_for_it():
    assert jars.spark_hadoop_version() == "3.3.4"
    pins = {pin.artifact: pin.version for pin in jars.pins_for("3.3.4")}
    assert pins["hadoop-aws"] == "3.3.4"
    assert pins["aws-java-sdk-bundle"] == "1.12.262"
    assert pins["spark-hadoop-cloud_2.12"] == "3.5.8"
    assert pins["delta-spark_2.12"].startswith("3.3.")


def test_refuses_hadoop_aws_that_does_not_match_spark(tmp_path):
    (tmp_path / "hadoop-3.3.4.txt").write_text(AWS.format(v="3.3.6") + "\n")
    with pytest.raises(UserError, match="hadoop-aws 3.3.6 does not match Spark's Hadoop 3.3.4"):
        jars.pins_for("3.3.4", tmp_path)


def test_refuses_unknown_hadoop_version_with_the_fix():
    with pytest.raises(UserError, match=r"no jar pins for Hadoop 9\.9\.9 .*pins exist for 3\.3\.4"):
        jars.pins_for("9.9.9", JAR_PINS_DIR)


def test_malformed_pin_line_names_file_and_line(tmp_path):
    (tmp_path / "hadoop-3.3.4.txt").write_text("# ok\norg.apache.hadoop:hadoop-aws 123\n")
    with pytest.raises(UserError, match=r"hadoop-3\.3\.4\.txt:2: expected 'group:artifact:version sha256'"):
        jars.pins_for("3.3.4", tmp_path)


def test_cached_jars_are_verified(monkeypatch, tmp_path):
    paths = jars.ensure_jars()
    assert [p.name for p in paths][0] == "hadoop-aws-3.3.4.jar"
    assert all(p.exists() and (p.parent / (p.name + ".verified")).exists() for p in paths)


def test_tampered_jar_fails_verification_and_is_fetched_again(monkeypatch, tmp_path):
    """A real fetch of the smallest pinned jar with Maven into an empty cache, then tampering."""
    monkeypatch.setenv("S3SPARK_CACHE", str(tmp_path))
    pin = next(p for p in jars.pins_for("3.3.4") if p.artifact == "delta-storage")
    target = tmp_path / "jars" / pin.filename
    target.parent.mkdir(parents=True)
    jars.fetch(pin, target)
    assert jars.sha256_of(target) == pin.sha256
    assert jars.is_verified(target, pin)
    target.write_bytes(b"tampered")
    assert not jars.is_verified(target, pin)


def test_checksum_mismatch_is_refused(tmp_path):
    pin = next(p for p in jars.pins_for("3.3.4") if p.artifact == "delta-storage")
    wrong = jars.JarPin(pin.group, pin.artifact, pin.version, "0" * 64)
    with pytest.raises(UserError, match="checksum mismatch for io.delta:delta-storage"):
        jars.fetch(wrong, tmp_path / pin.filename)
    assert not (tmp_path / pin.filename).exists()
