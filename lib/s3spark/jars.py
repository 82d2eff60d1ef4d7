"""The pinned jars that give Spark s3a, the S3A committers and Delta: resolve, fetch once, verify.

Pins live in conf/jars/hadoop-<version>.txt, keyed by the Hadoop version bundled with the installed
pyspark, so a new Spark/Hadoop line is added as a data file, not code. Jars are fetched with Maven into
the cache (``$S3SPARK_CACHE/jars``) only when missing and checked against their sha256 before use.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from s3spark.errors import UserError
from s3spark.paths import JAR_PINS_DIR, cache_dir

MAVEN_COPY_GOAL = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy"


@dataclass(frozen=True)
class JarPin:
    """One pinned Maven artifact with its expected sha256."""

    group: str
    artifact: str
    version: str
    sha256: str

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def filename(self) -> str:
        return f"{self.artifact}-{self.version}.jar"


def pyspark_jars_dir() -> Path:
    """The jars folder of the Spark in use: $SPARK_HOME/jars, else the installed pyspark's."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"]) / "jars"
    # Found, not imported: importing pyspark takes 0.1 s, and this runs before every job.
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise UserError("pyspark is not installed: run ./spark-submit.sh --setup")
    return Path(spec.origin).parent / "jars"


def spark_hadoop_version(jars_dir: Path | None = None) -> str:
    """The Hadoop version bundled with the installed pyspark, read from its hadoop-client-api jar."""
    jars_dir = jars_dir or pyspark_jars_dir()
    for jar in jars_dir.glob("hadoop-client-api-*.jar"):
        match = re.fullmatch(r"hadoop-client-api-(.+)\.jar", jar.name)
        if match:
            return match.group(1)
    raise UserError(f"no hadoop-client-api jar in {jars_dir}: is pyspark installed with its bundled Hadoop?")


def parse_pins(path: Path) -> list[JarPin]:
    """Read a pins file: `group:artifact:version sha256` per line, # comments."""
    pins = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        coordinate = fields[0].split(":")
        if len(fields) != 2 or len(coordinate) != 3 or not re.fullmatch(r"[0-9a-f]{64}", fields[1]):
            raise UserError(f"{path}:{number}: expected 'group:artifact:version sha256', got {line!r}")
        pins.append(JarPin(*coordinate, fields[1]))
    return pins


def pins_for(hadoop_version: str, pins_dir: Path = JAR_PINS_DIR) -> list[JarPin]:
    """The pins for a Hadoop version; refuses when hadoop-aws would not match Spark's Hadoop."""
    path = pins_dir / f"hadoop-{hadoop_version}.txt"
    if not path.exists():
        known = sorted(p.stem.removeprefix("hadoop-") for p in pins_dir.glob("hadoop-*.txt"))
        raise UserError(
            f"no jar pins for Hadoop {hadoop_version} (the version bundled with the installed pyspark); "
            f"pins exist for {', '.join(known) or 'none'}: install a matching pyspark or add {path}"
        )
    pins = parse_pins(path)
    for pin in pins:
        if pin.artifact == "hadoop-aws" and pin.version != hadoop_version:
            raise UserError(
                f"{path}: hadoop-aws {pin.version} does not match Spark's Hadoop {hadoop_version}; "
                f"a mismatch fails at run time with NoSuchMethodError: pin hadoop-aws {hadoop_version}"
            )
    if not any(pin.artifact == "hadoop-aws" for pin in pins):
        raise UserError(f"{path}: no hadoop-aws pin; add org.apache.hadoop:hadoop-aws:{hadoop_version}")
    return pins


def jars_cache() -> Path:
    return cache_dir() / "jars"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def is_verified(path: Path, pin: JarPin) -> bool:
    """True when the jar exists and its checksum was verified since it last changed."""
    if not path.exists():
        return False
    stat = path.stat()
    expected = f"{pin.sha256} {stat.st_size} {stat.st_mtime_ns}"
    stamp = _stamp(path)
    if stamp.exists() and stamp.read_text().strip() == expected:
        return True
    if sha256_of(path) != pin.sha256:
        return False
    stamp.write_text(expected + "\n")
    return True


def fetch(pin: JarPin, dest: Path) -> None:
    """Fetch one artifact with Maven (no transitive dependencies) and move it into place once verified."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise UserError(
            f"Maven (mvn) is needed once to fetch {pin.coordinate}: install it (apt-get install maven) "
            f"or copy {pin.filename} into {dest.parent}"
        )
    print(f"fetching {pin.coordinate} (first run only)", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        result = subprocess.run(
            [mvn, "-q", "-B", MAVEN_COPY_GOAL, f"-Dartifact={pin.coordinate}", f"-DoutputDirectory={tmp}"],
            capture_output=True,
            text=True,
        )
        fetched = Path(tmp) / pin.filename
        if result.returncode != 0 or not fetched.exists():
            tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
            raise UserError(f"could not fetch {pin.coordinate} with Maven: {' | '.join(tail)}")
        actual = sha256_of(fetched)
        if actual != pin.sha256:
            raise UserError(
                f"checksum mismatch for {pin.coordinate}: expected {pin.sha256}, got {actual}; "
                "refusing to use it (check your Maven mirror)"
            )
        fetched.replace(dest)
    is_verified(dest, pin)


def ensure_jars(fetch_missing: bool = True) -> list[Path]:
    """Paths of the verified pinned jars for the installed pyspark, fetching what is missing."""
    pins = pins_for(spark_hadoop_version())
    cache = jars_cache()
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    for pin in pins:
        path = cache / pin.filename
        if not is_verified(path, pin):
            if path.exists():
                print(f"{path} fails its checksum; fetching it again", file=sys.stderr)
                path.unlink()
            if not fetch_missing:
                raise UserError(f"missing jar {path}: run ./spark-submit.sh --setup to fetch the pinned jars")
            fetch(pin, path)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m s3spark.jars", description="Fetch and verify the pinned s3a/committer/Delta jars."
    )
    parser.add_argument(
        "command",
        choices=["ensure", "list"],
        help="ensure: fetch missing jars and print them comma-separated; list: show pins and cache state",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "ensure":
            print(",".join(str(p) for p in ensure_jars()))
        else:
            hadoop = spark_hadoop_version()
            print(f"pyspark bundles Hadoop {hadoop}; cache {jars_cache()}")
            for pin in pins_for(hadoop):
                path = jars_cache() / pin.filename
                state = "verified" if is_verified(path, pin) else "missing"
                print(f"{pin.coordinate:50} {state}")
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
