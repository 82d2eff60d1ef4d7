"""What a job takes to a cluster: the library as a zip, the pinned jars and one Python for driver and executors.

``./spark-submit.sh`` runs ``python -m s3spark.cluster prepare`` for every master that is not ``local[...]``.
The profile itself needs nothing here: it is in the Spark properties, which reach the executors with the
job, and schemas are parsed on the driver. What changes per master:

=====================  =====================  ======================================  ==========================
master                 library (s3spark)      pinned jars                             Python on the executors
=====================  =====================  ======================================  ==========================
spark://HOST:PORT      ``--py-files`` zip     spark.jars, served by the driver        this virtualenv's path
yarn                   ``--py-files`` zip     spark.jars, uploaded by YARN            this virtualenv's path
k8s://, client mode    ``--py-files`` zip     the image's, on the executors' class    the image's
                                              path; this cache's on the driver's
k8s://, cluster mode   the image's copy       the image's, driver and executors       the image's (driver too)
=====================  =====================  ======================================  ==========================

``S3SPARK_EXECUTOR_PYTHON`` names another interpreter for the executors (it must exist on every node).
``S3SPARK_NODE_JARS=DIR`` says the pinned jars already sit in DIR on every node: the executors put them on
their class path from there (spark.executor.extraClassPath) instead of each fetching ~290 MB from the driver.
The jar of our own expressions (``expressions``, a few KB) ships with spark.jars from this machine in every
case but one: a driver in a Kubernetes pod takes the image's, which its setup built from the same sources.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from s3spark.errors import UserError
from s3spark.expressions import expressions_dir
from s3spark.jars import jars_cache
from s3spark.paths import REPO_ROOT, cache_dir
from s3spark.profiles import read_properties, redact, write_properties
from s3spark.session import PROFILE_KEY, SUBMITTED_PROFILE_ENV

LOCAL, STANDALONE, YARN, KUBERNETES = "local", "standalone", "yarn", "kubernetes"
PACKAGE_DIR = REPO_ROOT / "lib" / "s3spark"
# The job image's layout (docker/Dockerfile): the repository, its virtualenv and its jar cache.
IMAGE_REPO = "/opt/s3spark"
IMAGE_PYTHON = f"{IMAGE_REPO}/.venv/bin/python"
IMAGE_JARS = f"{IMAGE_REPO}/cache/jars"
IMAGE_EXPRESSIONS = f"{IMAGE_REPO}/cache/expressions"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources give the same zip, byte for byte
STALE_ZIP_S = 86_400
JAVA_OPTIONS = {"driver": "spark.driver.extraJavaOptions", "executor": "spark.executor.extraJavaOptions"}


def master_kind(master: str) -> str:
    """local, standalone, yarn or kubernetes; a UserError for anything else."""
    if master == "local" or master.startswith(("local[", "local-cluster[")):
        return LOCAL
    if master.startswith("spark://"):
        return STANDALONE
    if master == "yarn":
        return YARN
    if master.startswith("k8s://"):
        return KUBERNETES
    raise UserError(
        f"unknown --master {master!r}: use local[*], spark://HOST:PORT (standalone), yarn, or k8s://https://HOST:PORT"
    )


def library_files(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    return sorted(
        p for p in package_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def library_zip(package_dir: Path = PACKAGE_DIR, dest_dir: Path | None = None) -> Path:
    """The library as a zip for --py-files, named by a hash of its content and built only when missing.

    A new name for new content means an executor never runs a stale copy cached under the old name.
    """
    files = library_files(package_dir)
    if not files:
        raise UserError(f"no library sources in {package_dir}")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(package_dir.parent).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    dest_dir = dest_dir or cache_dir() / "pyfiles"
    target = dest_dir / f"{package_dir.name}-{digest.hexdigest()[:16]}.zip"
    if target.is_file():
        return target
    dest_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            info = zipfile.ZipInfo(path.relative_to(package_dir.parent).as_posix(), ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    os.replace(tmp, target)  # atomic: a concurrent run sees the old state or the whole zip
    for old in dest_dir.glob(f"{package_dir.name}-*.zip"):  # older versions, unused for a day
        with contextlib.suppress(OSError):
            if old != target and old.stat().st_mtime < time.time() - STALE_ZIP_S:
                old.unlink()
    return target


@dataclass
class Plan:
    """How to submit to one cluster: the properties to write, the spark-submit options, the job and Python."""

    kind: str
    deploy_mode: str
    properties: dict[str, str]
    spark_args: list[str]
    job: str
    executor_python: str
    notes: list[str] = field(default_factory=list)


def _option(args: list[str], name: str) -> str | None:
    """The last value of a spark-submit option given as `--name value` or `--name=value`."""
    value = None
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1 :]
    return value


def _confs(args: list[str]) -> dict[str, str]:
    """The --conf KEY=VALUE settings among spark-submit options."""
    out = {}
    for i, arg in enumerate(args):
        pair = None
        if arg in ("--conf", "-c") and i + 1 < len(args):
            pair = args[i + 1]
        elif arg.startswith("--conf="):
            pair = arg.removeprefix("--conf=")
        if pair and "=" in pair:
            key, value = pair.split("=", 1)
            out[key.strip()] = value
    return out


def _without_option(args: list[str], name: str) -> list[str]:
    out, skip = [], False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == name and i + 1 < len(args):
            skip = True
        elif not arg.startswith(name + "="):
            out.append(arg)
    return out


def _jars_on_nodes(props: dict[str, str], node_dir: str, driver_dir: str) -> None:
    """Put the pinned jars on the JVM class paths from folders that hold them instead of shipping them.

    The executors take them from node_dir, the driver from driver_dir. Explicit files, not `dir/*`: a cache
    may also hold other versions' jars.
    """
    cache = str(jars_cache())
    pinned, others = [], []
    for jar in filter(None, (j.strip() for j in props.get("spark.jars", "").split(","))):
        (pinned if str(Path(jar).parent) == cache else others).append(jar)
    if others:
        props["spark.jars"] = ",".join(others)
    else:
        props.pop("spark.jars", None)
    for key, folder in (("spark.executor.extraClassPath", node_dir), ("spark.driver.extraClassPath", driver_dir)):
        entries = [f"{folder.rstrip('/')}/{Path(jar).name}" for jar in pinned]
        props[key] = ":".join(filter(None, [*entries, props.get(key, "")]))


def _repo_paths_as_image(value: str) -> str:
    """Paths into this repository (e.g. the log4j2 configuration) as the image sees them."""
    return value.replace(str(REPO_ROOT), IMAGE_REPO)


def prepare(
    master: str,
    properties: Mapping[str, str],
    job: str,
    python: str,
    spark_args: list[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Plan:
    """The plan for submitting `job` to `master` with these Spark properties and spark-submit options.

    `python` is this virtualenv's interpreter, which runs the driver in client mode.
    """
    env = os.environ if env is None else env
    args = list(spark_args or [])
    props = dict(properties)
    confs = _confs(args)
    kind = master_kind(master)
    deploy_mode = _option(args, "--deploy-mode") or "client"  # as spark-submit.sh decides who starts the driver
    if deploy_mode not in ("client", "cluster"):
        raise UserError(f"--deploy-mode {deploy_mode!r}: use client or cluster")
    plan = Plan(kind, deploy_mode, props, args, job, python)
    if kind == LOCAL:
        return plan

    if kind == STANDALONE and deploy_mode == "cluster":
        raise UserError(
            "a standalone master runs Python drivers in client mode only (a Spark limit): drop --deploy-mode cluster; "
            "the driver then runs here and the executors on the cluster"
        )
    if kind == YARN and not (env.get("HADOOP_CONF_DIR") or env.get("YARN_CONF_DIR")):
        raise UserError(
            "--master yarn needs HADOOP_CONF_DIR (or YARN_CONF_DIR): the folder of the cluster's *-site.xml"
        )
    image_side = kind == KUBERNETES
    in_image = image_side and deploy_mode == "cluster"  # the driver runs in a pod of the image
    if image_side and not (
        confs.get("spark.kubernetes.container.image") or props.get("spark.kubernetes.container.image")
    ):
        raise UserError(
            "--master k8s:// needs the job image: --conf spark.kubernetes.container.image=REGISTRY/s3spark:TAG "
            "(built from docker/Dockerfile; see docs/kubernetes.md)"
        )

    # A driver started by spark-submit on the cluster must know that the profile is already applied, as
    # ./spark-submit.sh tells a driver it starts here (S3SPARK_SUBMITTED_PROFILE; see s3spark.session).
    if deploy_mode == "cluster":
        env_prefix = "spark.kubernetes.driverEnv." if kind == KUBERNETES else "spark.yarn.appMasterEnv."
        props[env_prefix + SUBMITTED_PROFILE_ENV] = props.get(PROFILE_KEY) or "submitted"

    # Python: one interpreter for the executors (and for the driver when it runs on the cluster).
    executor_python = (
        confs.get("spark.pyspark.python")
        or env.get("S3SPARK_EXECUTOR_PYTHON")
        or (IMAGE_PYTHON if image_side else python)
    )
    plan.executor_python = executor_python
    props["spark.pyspark.python"] = executor_python
    if in_image:
        props["spark.pyspark.driver.python"] = confs.get("spark.pyspark.driver.python") or executor_python
    plan.notes.append(f"executors run {executor_python}")

    # Jars: shipped from here (spark.jars), or already on the nodes: the image has them.
    node_jars = env.get("S3SPARK_NODE_JARS") or (IMAGE_JARS if image_side else None)
    if node_jars:
        _jars_on_nodes(props, node_jars, node_jars if in_image else str(jars_cache()))
        plan.notes.append(
            f"executors load the pinned jars from {node_jars} on their node (extraClassPath), not shipped"
        )
    else:
        shipper = "YARN uploads them" if kind == YARN else "the driver serves them"
        plan.notes.append(f"the pinned jars ship with spark.jars ({shipper})")
    if in_image:
        # Our own expressions' jar: the image's setup built it from the same sources (the same name).
        props["spark.jars"] = ",".join(
            f"local://{IMAGE_EXPRESSIONS}/{Path(jar).name}" if Path(jar).parent == expressions_dir() else jar
            for jar in filter(None, props.get("spark.jars", "").split(","))
        )
        if not props["spark.jars"]:
            props.pop("spark.jars")

    # Paths into this repository in JVM options (log4j2 configuration) as the image sees them.
    if image_side:
        for side in ("executor", "driver") if in_image else ("executor",):
            key = JAVA_OPTIONS[side]
            if props.get(key):
                props[key] = _repo_paths_as_image(props[key])

    # The library: a zip next to the user's own --py-files, unless the driver runs in the image, which has it.
    if in_image:
        plan.notes.append(f"the library is the image's copy in {IMAGE_REPO}/lib (rebuild the image after changing it)")
        job_path = Path(job).resolve()
        if job_path.is_relative_to(REPO_ROOT):
            plan.job = f"local://{IMAGE_REPO}/{job_path.relative_to(REPO_ROOT).as_posix()}"
        elif not (confs.get("spark.kubernetes.file.upload.path") or props.get("spark.kubernetes.file.upload.path")):
            raise UserError(
                f"{job} is not in the image: put it under {REPO_ROOT}/jobs and rebuild the image, or set "
                "spark.kubernetes.file.upload.path to a place spark-submit can upload it to (e.g. an s3a:// prefix)"
            )
    else:
        zipped = library_zip()
        theirs = _option(args, "--py-files")
        plan.spark_args = [
            *_without_option(args, "--py-files"),
            "--py-files",
            ",".join(filter(None, [str(zipped), theirs])),
        ]
        plan.notes.append(f"the library ships as {zipped} (--py-files)")
    return plan


def main(argv: list[str] | None = None) -> int:
    """`prepare` (for spark-submit.sh) and `show` (a properties file, redacted, for --dry-run)."""
    parser = argparse.ArgumentParser(prog="python -m s3spark.cluster", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_prepare = sub.add_parser(
        "prepare",
        help="adjust the properties file for the master and print: the executors' Python, the job, then the "
        "spark-submit options, one per line",
    )
    p_prepare.add_argument("--master", required=True)
    p_prepare.add_argument("--properties", required=True, type=Path, help="properties file, rewritten in place")
    p_prepare.add_argument("--job", required=True)
    p_prepare.add_argument("--python", required=True, help="the driver's Python (this virtualenv's)")
    p_prepare.add_argument("--notes", action="store_true", help="also say on stderr what goes where")
    p_prepare.add_argument("spark_args", nargs=argparse.REMAINDER, help="-- then the spark-submit options")
    p_show = sub.add_parser("show", help="print a properties file with secrets redacted")
    p_show.add_argument("properties", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "show":
            for key, value in sorted(redact(read_properties(args.properties)).items()):
                print(f"{key} {value}")
            return 0
        spark_args = args.spark_args[1:] if args.spark_args[:1] == ["--"] else args.spark_args
        plan = prepare(args.master, read_properties(args.properties), args.job, args.python, spark_args)
        if any("\n" in item for item in [plan.executor_python, plan.job, *plan.spark_args]):
            raise UserError("a spark-submit option holds a line break: not supported")
        write_properties(plan.properties, args.properties)
        if args.notes:
            for note in plan.notes:
                print(f"{plan.kind} ({plan.deploy_mode} mode): {note}", file=sys.stderr)
        print("\n".join([plan.executor_python, plan.job, *plan.spark_args]))
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
