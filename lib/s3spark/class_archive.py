"""A class-data sharing (AppCDS) archive for the driver JVM of local runs: Spark starts and warms up faster.

A local Spark run loads and verifies some 17,000 classes from jars (Spark, Scala, Hadoop, the AWS SDK,
Parquet, Delta; converting the bundled sample) before and while it does its work. Java 17 can map them
from an archive made by an earlier run instead (``-XX:SharedArchiveFile``). Measured here, 2 cores:
SparkSession start 2.3 s → 1.5 s, and csv_filter_count over 1 GiB on S3 12.1-13.3 s → 10.0-10.5 s (README,
"Tuning").

The archive is made once per machine (``ensure``: spark-submit.sh's setup and test.sh) by a training run that
does what jobs do on a small local sample: read CSV with both parsers, write Parquet and Delta, collect into
pandas, start an S3A filesystem (without contacting any server). Java checks the archive against the JVM and
every jar of the class path at start-up; its file name carries a hash of both, so a new pyspark, new jars or
a new JDK get a new archive, and an archive that does not apply is never named. Only local masters use it:
their driver runs the tasks, and their class path is known here. ``S3SPARK_CLASS_ARCHIVE=0`` turns it off.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from s3spark.paths import REPO_ROOT, cache_dir

SWITCH_ENV = "S3SPARK_CLASS_ARCHIVE"
# Bump when the training changes, so existing archives are rebuilt.
TRAINING_VERSION = "1"
BUILD_TIMEOUT_S = 600
# JVM options that hook class loading (see java_options), and the variables Java or Spark read options from.
CLASS_LOADING_HOOKS = ("-javaagent", "-agentlib", "-agentpath", "-XX:StartFlightRecording", "-XX:+FlightRecorder")
JAVA_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "SPARK_SUBMIT_OPTS")
# Java's own messages about an archive it cannot use stay off the job's output (the run goes on without it).
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def archive_dir() -> Path:
    return cache_dir() / "class-archive"


def _java_home() -> Path | None:
    """The JDK that spark-submit will run: $JAVA_HOME, else the `java` on PATH."""
    if os.environ.get("JAVA_HOME"):
        return Path(os.environ["JAVA_HOME"]).resolve()
    java = shutil.which("java")
    return Path(java).resolve().parent.parent if java else None


def _stat_line(path: Path) -> str:
    try:
        stat = path.stat()
    except OSError:
        return f"file\t{path}\tmissing"
    return f"file\t{path}\t{stat.st_size}\t{stat.st_mtime_ns}"


def _inputs(class_path: str, home: Path) -> list[str]:
    """What an archive depends on: the training, the JVM, Spark's environment and every jar of the class path."""
    from s3spark.jars import pyspark_jars_dir

    lines = [f"training {TRAINING_VERSION}", f"java {home}"]
    lines += [_stat_line(library) for library in sorted(home.glob("lib/server/libjvm.*"))]
    lines += [f"env {name}={os.environ.get(name, '')}" for name in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_CLASSPATH")]
    lines += [_stat_line(Path(entry)) for entry in class_path.split(os.pathsep) if entry]
    lines += [_stat_line(jar) for jar in sorted(pyspark_jars_dir().glob("*.jar"))]
    return lines


def archive_path(class_path: str) -> Path | None:
    """Where the archive for this driver class path (spark.driver.extraClassPath) lives; None without Java."""
    home = _java_home()
    if home is None:
        return None
    digest = hashlib.sha256("\n".join(_inputs(class_path, home)).encode()).hexdigest()[:16]
    return archive_dir() / f"driver-{digest}.jsa"


def _is_stale(archive: Path) -> bool:
    """True when a file the archive was made from has changed or gone (Java would refuse the archive)."""
    inputs = archive.with_suffix(".inputs")
    if not inputs.is_file():
        return True
    for line in inputs.read_text().splitlines():
        if line.startswith("training ") and line != f"training {TRAINING_VERSION}":
            return True
        if line.startswith("file\t") and _stat_line(Path(line.split("\t")[1])) != line:
            return True
    return False


def java_options(class_path: str, driver_options: str = "") -> str:
    """The driver JVM options that use the archive for this class path, or "" when there is none.

    None either when the JVM starts a Java agent or Flight Recorder (in the driver's options or Java's option
    variables): both hook class loading, and JDK 17 crashed here with a hook and a dynamic archive together
    (SIGSEGV in KlassFactory::check_shared_class_file_load_hook, -XX:StartFlightRecording at start-up).
    """
    if not enabled() or _hooks_class_loading(driver_options):
        return ""
    path = archive_path(class_path)
    if path is None or not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}"


def _hooks_class_loading(driver_options: str) -> bool:
    options = [driver_options, *(os.environ.get(name, "") for name in JAVA_OPTION_VARIABLES)]
    return any(option.startswith(CLASS_LOADING_HOOKS) for text in options for option in text.split())


def ensure(class_path: str, driver_options: str) -> Path | None:
    """Build the archive for this class path when it is missing; None when off or when the build failed.

    A failed build never fails the caller: runs go on without the archive, one line on stderr says why.
    """
    if not enabled() or _hooks_class_loading(driver_options):  # such a JVM would not use it (java_options)
        return None
    home, path = _java_home(), archive_path(class_path)
    if home is None or path is None or path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    log = path.with_suffix(".log")
    print(
        f"building the driver's class archive (once, about a minute): faster start-up for local runs; log {log}",
        file=sys.stderr,
    )
    started = time.monotonic()
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".building-", suffix=".jsa")
    os.close(fd)
    os.unlink(temporary)  # the JVM writes it at exit
    options = f"{driver_options} -XX:ArchiveClassesAtExit={temporary} {QUIET}".strip()
    command = [
        sys.executable,
        "-m",
        "s3spark.class_archive",
        "train",
        "--class-path",
        class_path,
        "--driver-options",
        options,
    ]
    # A clean environment for the training's own session: not the job's spark-submit arguments or profile.
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS", "S3SPARK_SUBMITTED_PROFILE")}
    try:
        with log.open("w") as out:
            result = subprocess.run(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=REPO_ROOT,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
        if result.returncode != 0 or not Path(temporary).is_file():
            raise RuntimeError(f"the training run exited with {result.returncode}")
        path.with_suffix(".inputs").write_text("\n".join(_inputs(class_path, home)) + "\n")
        os.replace(temporary, path)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
        Path(temporary).unlink(missing_ok=True)
        print(
            f"warning: no class archive ({error}; see {log}); runs work without it, only slower to start",
            file=sys.stderr,
        )
        return None
    for old in path.parent.glob("driver-*.jsa"):
        if old != path and _is_stale(old):
            old.unlink(missing_ok=True)
            old.with_suffix(".inputs").unlink(missing_ok=True)
    size = path.stat().st_size / 2**20
    print(f"class archive ready in {time.monotonic() - started:.0f}s: {path} ({size:.0f} MiB)", file=sys.stderr)
    return path


def train(class_path: str, driver_options: str) -> None:
    """The training run: what jobs do, on a small local sample, in a JVM that writes the archive at exit."""
    from s3spark.handoff import read_table, to_pandas
    from s3spark.pipeline import ReadRequest, convert, filter_count
    from s3spark.reader import CsvFormat
    from s3spark.sample_data import write_pageviews
    from s3spark.session import session
    from s3spark.summary import RunSummary
    from s3spark.writer import OutputSpec

    spark = session(
        profile="local",
        master="local[2]",
        app_name="s3spark-class-archive",
        conf={
            "spark.driver.extraClassPath": class_path,
            "spark.driver.extraJavaOptions": driver_options,
            "spark.ui.showConsoleProgress": "false",  # a plain log
        },
    )
    with tempfile.TemporaryDirectory(prefix="s3spark-class-archive-") as scratch:
        csv = write_pageviews(Path(scratch) / "pageviews.csv", 20_000)
        for parser in ("split", "csv"):
            fmt = CsvFormat(delimiter=" ", header=False, parser=parser)
            request = ReadRequest(inputs=[str(csv)], schema="@pageviews", csv=fmt, filter="count = 1")
            filter_count(spark, request, RunSummary(job="training"))
        request = ReadRequest(inputs=[str(csv)], schema="@pageviews", csv=CsvFormat(delimiter=" ", header=False))
        for fmt in ("parquet", "delta"):
            output = str(Path(scratch) / fmt)
            convert(spark, request, OutputSpec(uri=output, format=fmt, mode="overwrite"), RunSummary(job="training"))
            to_pandas(read_table(output, fmt), max_rows=0, max_bytes=0)
        _start_s3a(spark)
    # The JVM writes the archive when it exits, which it does when its stdin closes: wait for that.
    jvm_process = spark.sparkContext._gateway.proc
    spark.stop()
    jvm_process.stdin.close()
    jvm_process.wait(timeout=BUILD_TIMEOUT_S)


def _start_s3a(spark) -> None:
    """Start and close an S3A filesystem: loads the connector and the AWS SDK's client without a request."""
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration(spark.sparkContext._jsc.hadoopConfiguration())
    for key, value in {
        "fs.s3a.endpoint": "http://127.0.0.1:9",
        "fs.s3a.access.key": "training",
        "fs.s3a.secret.key": "training",
        "fs.s3a.bucket.probe": "0",
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }.items():
        conf.set(key, value)
    jvm.org.apache.hadoop.fs.FileSystem.newInstance(jvm.java.net.URI("s3a://training/"), conf).close()


def default_class_path() -> tuple[str, str]:
    """The driver class path and options of a local run with the default profile's jars."""
    from s3spark.session import spark_properties

    props = spark_properties("local", master="local[*]", class_archive="none")
    return props["spark.driver.extraClassPath"], props["spark.driver.extraJavaOptions"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m s3spark.class_archive", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("ensure", help="build the archive for local runs if it is missing")
    commands.add_parser("path", help="print the archive's path for local runs (it may not exist yet)")
    training = commands.add_parser("train", help="(internal) the training run")
    training.add_argument("--class-path", required=True)
    training.add_argument("--driver-options", required=True)
    args = parser.parse_args(argv)
    if args.command == "train":
        train(args.class_path, args.driver_options)
        return 0
    class_path, options = default_class_path()
    if args.command == "path":
        print(archive_path(class_path))
        return 0
    ensure(class_path, options)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
