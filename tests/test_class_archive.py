"""The driver's class archive: local runs map it (test.sh builds it), and it follows the JVM and the jars."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from s3spark import class_archive
from s3spark.session import spark_properties


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("S3SPARK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(class_archive.SWITCH_ENV, raising=False)
    return tmp_path / "cache"


def jar(path: Path, content: bytes = b"jar") -> str:
    path.write_bytes(content)
    return str(path)


def test_the_test_sessions_driver_maps_the_archive(spark):
    """test.sh builds the archive; the session of this run (local[2], pinned jars) must have mapped it."""
    conf = spark.sparkContext.getConf()
    archive = class_archive.archive_path(conf.get("spark.driver.extraClassPath"))
    assert archive is not None and archive.is_file(), "no class archive: run ./test.sh (it builds it) or setup"
    assert f"-XX:SharedArchiveFile={archive}" in conf.get("spark.driver.extraJavaOptions")
    jcmd = shutil.which("jcmd")
    if jcmd is None:
        pytest.skip("jcmd (JDK) not installed: cannot ask the JVM what it mapped")
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    info = subprocess.run([jcmd, str(pid), "VM.info"], capture_output=True, text=True, check=True).stdout
    mapped = next(line for line in info.splitlines() if line.startswith("CDS archive(s) mapped at"))
    # Only the JDK's own archive (about 13 MB) is mapped when Java refuses ours.
    assert int(mapped.split("size ")[1].split(",")[0]) >= archive.stat().st_size


def test_the_archive_follows_the_jars(cache, tmp_path):
    class_path = jar(tmp_path / "a.jar")
    first = class_archive.archive_path(class_path)
    assert first == class_archive.archive_path(class_path)
    assert first.parent == cache / "class-archive"
    jar(tmp_path / "a.jar", b"a new build of the jar")
    assert class_archive.archive_path(class_path) != first
    assert class_archive.archive_path(f"{class_path}:{jar(tmp_path / 'b.jar')}") != class_archive.archive_path(
        class_path
    )


def test_options_only_name_an_archive_that_exists_and_is_switched_on(cache, tmp_path, monkeypatch):
    class_path = jar(tmp_path / "a.jar")
    assert class_archive.java_options(class_path) == ""
    archive = class_archive.archive_path(class_path)
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    assert class_archive.java_options(class_path) == f"-XX:SharedArchiveFile={archive} {class_archive.QUIET}"
    monkeypatch.setenv(class_archive.SWITCH_ENV, "0")
    assert class_archive.java_options(class_path) == ""
    assert class_archive.ensure(class_path, "") is None


@pytest.mark.parametrize(
    "options,variable",
    [
        ("-Da=1 -XX:StartFlightRecording=filename=rec.jfr", ""),
        ("-javaagent:/opt/apm/agent.jar", ""),
        ("-agentpath:/opt/profiler/libagent.so=start", ""),
        ("-Da=1", "-javaagent:/opt/apm/agent.jar"),
    ],
)
def test_no_archive_for_a_jvm_that_hooks_class_loading(cache, tmp_path, monkeypatch, options, variable):
    """Flight Recorder or an agent with the archive crashed JDK 17 here (SIGSEGV at start-up)."""
    class_path = jar(tmp_path / "a.jar")
    archive = class_archive.archive_path(class_path)
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    assert class_archive.java_options(class_path, "-Da=1 -XX:+UseParallelGC") != ""
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", variable)
    assert class_archive.java_options(class_path, options) == ""
    monkeypatch.setattr(class_archive.subprocess, "run", lambda *args, **kwargs: pytest.fail("an archive was built"))
    assert class_archive.ensure(jar(tmp_path / "other.jar"), options) is None  # and none is built for it


def test_only_local_masters_get_the_archive(cache, monkeypatch):
    class_path = spark_properties("minio", master="local[2]", class_archive="none")["spark.driver.extraClassPath"]
    archive = class_archive.archive_path(class_path)
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    assert (
        f"-XX:SharedArchiveFile={archive}"
        in spark_properties("minio", master="local[2]")["spark.driver.extraJavaOptions"]
    )
    for master in (None, "spark://host:7077", "yarn"):
        assert "SharedArchiveFile" not in spark_properties("minio", master=master)["spark.driver.extraJavaOptions"]


def fake_training(monkeypatch, *, exit_code: int):
    """Stand in for the JVM: the training 'writes' the archive named in its options, then exits."""
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        options = command[command.index("--driver-options") + 1]
        written = next(o.split("=", 1)[1] for o in options.split() if o.startswith("-XX:ArchiveClassesAtExit="))
        Path(written).write_bytes(b"archive")
        return subprocess.CompletedProcess(command, exit_code)

    monkeypatch.setattr(class_archive.subprocess, "run", run)
    return calls


def test_a_build_replaces_stale_archives_and_keeps_current_ones(cache, tmp_path, monkeypatch, capsys):
    old_jar, other_jar = jar(tmp_path / "old.jar"), jar(tmp_path / "other.jar")
    fake_training(monkeypatch, exit_code=0)
    stale, kept = class_archive.ensure(old_jar, "-Da=1"), class_archive.ensure(other_jar, "-Da=1")
    assert stale.is_file() and kept.is_file() and stale != kept
    jar(tmp_path / "old.jar", b"replaced")  # the archive for old.jar no longer applies
    current = class_archive.ensure(jar(tmp_path / "new.jar"), "-Da=1")
    assert current.is_file() and kept.is_file() and not stale.exists()
    assert not stale.with_suffix(".inputs").exists()
    assert "class archive ready" in capsys.readouterr().err
    assert class_archive.ensure(str(tmp_path / "new.jar"), "-Da=1") == current  # present: no second build


def test_a_failed_build_warns_and_leaves_nothing(cache, tmp_path, monkeypatch, capsys):
    calls = fake_training(monkeypatch, exit_code=1)
    assert class_archive.ensure(jar(tmp_path / "a.jar"), "-Da=1") is None
    assert len(calls) == 1 and "-Da=1" in calls[0][calls[0].index("--driver-options") + 1]
    assert not list((cache / "class-archive").glob("*.jsa"))
    err = capsys.readouterr().err
    assert "warning: no class archive (the training run exited with 1" in err
    assert "runs work without it" in err
