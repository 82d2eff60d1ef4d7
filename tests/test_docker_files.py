"""docker/: what can be checked without a Docker engine.

The compose file parses and wires its services with health checks and a start order; every file its commands
name exists in the repository and is copied into the image; the Dockerfiles copy files that exist, lay the
image out where lib/s3spark/cluster.py expects it, and get the jars through the project's own pinned, checked
setup; the entry point follows Spark on Kubernetes' contract; the bucket bootstrap works against a real S3
server. Building the images and running the compose stack are not exercised here (no engine).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from s3spark import cluster, local_s3
from s3spark.paths import REPO_ROOT

DOCKER = REPO_ROOT / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
VENV = REPO_ROOT / ".venv"


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def instructions(dockerfile: Path) -> list[tuple[str, str, int]]:
    """(INSTRUCTION, arguments, stage index) with continuation lines joined and comments dropped."""
    out, stage, current = [], -1, ""
    for line in dockerfile.read_text().splitlines():
        if line.lstrip().startswith("#") and not current:
            continue
        current += line.rstrip("\\").strip() + " "
        if line.endswith("\\"):
            continue
        word, _, rest = current.strip().partition(" ")
        current = ""
        if not word:
            continue
        if word.upper() == "FROM":
            stage += 1
        out.append((word.upper(), rest.strip(), stage))
    return out


def copies(dockerfile: Path) -> list[tuple[list[str], str, dict[str, str], int]]:
    """COPY instructions: (sources, destination, --flags, stage)."""
    out = []
    for word, rest, stage in instructions(dockerfile):
        if word == "COPY":
            parts = rest.split()
            flags = dict(p[2:].split("=", 1) for p in parts if p.startswith("--"))
            paths = [p for p in parts if not p.startswith("--")]
            out.append((paths[:-1], paths[-1], flags, stage))
    return out


def image_files() -> dict[str, Path]:
    """Paths inside the job image that come from the repository, and their source in the repository."""
    stages: dict[int, dict[str, Path]] = {}
    workdir = "/opt/s3spark"
    for sources, dest, flags, stage in copies(DOCKER / "Dockerfile"):
        files = stages.setdefault(stage, {})
        target = dest if dest.startswith("/") else f"{workdir}/{dest}"
        if "from" in flags:  # another stage's folder, e.g. the build stage's /opt/s3spark
            for source in sources:
                earlier = stages[0]
                files.update({p.replace(source, target, 1): src for p, src in earlier.items() if p.startswith(source)})
            continue
        for source in sources:
            src = REPO_ROOT / source
            if src.is_dir():
                for path in src.rglob("*"):
                    if path.is_file() and "__pycache__" not in path.parts:
                        files[f"{target.rstrip('/')}/{path.relative_to(src).as_posix()}"] = path
            elif dest.endswith("/") or dest == "./":
                files[f"{target.rstrip('/').removesuffix('/.')}/{src.name}"] = src
            else:
                files[target] = src
    return stages[max(stages)]


# --- compose ------------------------------------------------------------------------------------------


def test_compose_has_the_services_with_health_checks_and_start_order():
    services = compose()["services"]
    assert set(services) == {"minio", "create-buckets", "spark-master", "spark-worker-1", "spark-worker-2", "job"}
    for name in ("minio", "spark-master", "spark-worker-1", "spark-worker-2"):
        check = services[name]["healthcheck"]
        assert check["test"][0] == "CMD" and check["retries"] >= 10, name
    assert services["create-buckets"]["depends_on"] == {"minio": {"condition": "service_healthy"}}
    assert services["job"]["depends_on"] == {
        "create-buckets": {"condition": "service_completed_successfully"},
        "spark-master": {"condition": "service_healthy"},
    }
    assert services["job"]["restart"] == services["create-buckets"]["restart"] == "no"
    # The master is healthy only with both workers registered, each with one core.
    master_check = services["spark-master"]["healthcheck"]["test"]
    assert master_check[master_check.index("--workers") + 1] == "2"
    master = services["spark-master"]["command"]
    master_url = f"spark://{master[master.index('--host') + 1]}:{master[master.index('--port') + 1]}"
    for name in ("spark-worker-1", "spark-worker-2"):
        command = services[name]["command"]
        assert command[1] == local_cluster_class("Worker") and command[-1] == master_url
        assert command[command.index("--cores") + 1] == "1"
    assert master[1] == local_cluster_class("Master")
    for service in services.values():
        build = service.get("build")
        if build:
            assert (COMPOSE.parent / build["context"] / build["dockerfile"]).is_file()


def local_cluster_class(role: str) -> str:
    from s3spark import local_cluster

    return {"Master": local_cluster.MASTER_CLASS, "Worker": local_cluster.WORKER_CLASS}[role]


def test_the_job_runner_submits_as_users_do():
    job = compose()["services"]["job"]
    command = job["command"]
    assert command[:5] == ["./spark-submit.sh", "--master", "spark://spark-master:7077", "--profile", "minio"]
    assert (REPO_ROOT / "conf" / "profiles" / "minio.conf").is_file()
    schema = command[command.index("--schema") + 1]
    assert (REPO_ROOT / "conf" / "schemas" / f"{schema.removeprefix('@')}.ddl").is_file()
    assert job["environment"]["S3_ENDPOINT"] == "http://minio:9000"
    # The workers run the same image, so the jars they load are where S3SPARK_NODE_JARS says.
    assert job["environment"]["S3SPARK_NODE_JARS"] == cluster.IMAGE_JARS
    for name in ("spark-worker-1", "spark-worker-2"):
        assert compose()["services"][name]["image"] == job["image"]
    bootstrap = compose()["services"]["create-buckets"]["command"]
    upload = bootstrap[bootstrap.index("--upload") + 2]
    assert command[command.index("--input") + 1] == upload.replace("s3://", "s3a://")


def test_compose_commands_name_files_that_are_in_the_image():
    in_image = image_files()
    named = []
    services = compose()["services"]
    for service in services.values():
        words = list(service.get("command", [])) + list(service.get("healthcheck", {}).get("test", []))
        for word in words:
            if "://" in word or not re.fullmatch(r"[\w./-]+", word) or "/" not in word:
                continue
            if word.startswith("/") and not word.startswith("/opt/s3spark/"):
                continue
            named.append(word if word.startswith("/") else f"/opt/s3spark/{word.removeprefix('./')}")
    assert named, "no file names found in the compose commands"
    for path in named:
        if path.startswith("/opt/s3spark/.venv/"):  # made by ./spark-submit.sh --setup in the build stage
            assert (VENV / path.removeprefix("/opt/s3spark/.venv/")).exists(), path
        else:
            matches = [p for p in in_image if p == path or p.startswith(path.rstrip("/") + "/")]
            assert matches, f"{path} is not copied into the image by docker/Dockerfile"
            assert all(in_image[p].exists() for p in matches)


def test_compose_writes_no_secret():
    text = COMPOSE.read_text()
    for match in re.finditer(r"^\s*(\w*(?:SECRET|PASSWORD|KEY)\w*):\s*(.+)$", text, re.MULTILINE):
        name, value = match.groups()
        assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]*\}", value.strip()), f"{name} must come from the environment"


# --- Dockerfiles ----------------------------------------------------------------------------------------


def test_dockerfile_copies_exist_and_the_layout_is_what_spark_submit_expects():
    dockerfile = DOCKER / "Dockerfile"
    for sources, _dest, flags, _stage in copies(dockerfile):
        if "from" not in flags:
            for source in sources:
                assert (REPO_ROOT / source).exists(), source
    steps = instructions(dockerfile)
    env = {}
    for word, rest, stage in steps:
        if word == "ENV" and stage == 1:
            env.update(dict(re.findall(r"(\w+)=(\S+)", rest)))
    assert env["S3SPARK_CACHE"] + "/jars" == cluster.IMAGE_JARS
    assert env["PYSPARK_PYTHON"] == cluster.IMAGE_PYTHON
    assert env["SPARK_HOME"].startswith(f"{cluster.IMAGE_REPO}/.venv/lib/python3.11/")
    assert [rest for word, rest, stage in steps if word == "WORKDIR"] == [cluster.IMAGE_REPO] * 2
    user = [rest for word, rest, stage in steps if word == "USER"]
    assert user and user[-1] not in ("root", "0")
    assert [rest for word, rest, _ in steps if word == "ENTRYPOINT"] == ['["/opt/entrypoint.sh"]']
    assert (["docker/entrypoint.sh"], "/opt/entrypoint.sh") in [(s, d) for s, d, _, _ in copies(dockerfile)]
    # The base image's Python is one pyproject.toml allows, and the one SPARK_HOME and the tests' machines use.
    base = next(rest for word, rest, _ in steps if word == "ARG" and rest.startswith("PYTHON_IMAGE="))
    assert base == "PYTHON_IMAGE=python:3.11-slim-bookworm"
    requires = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert "3.11" in SpecifierSet(requires)
    # The entry point's Kubernetes executor needs Java at $JAVA_HOME; scripts run from the workdir.
    assert env["JAVA_HOME"] == "/opt/java"


def test_image_gets_its_jars_from_the_pinned_checked_setup():
    """The build stage runs the same setup as a laptop: conf/jars pins, Maven, sha256 check; nothing else."""
    dockerfile = DOCKER / "Dockerfile"
    build = [(word, rest) for word, rest, stage in instructions(dockerfile) if stage == 0]
    copied = [src for sources, _, flags, stage in copies(dockerfile) if stage == 0 for src in sources]
    assert {"conf/", "lib/", "scripts/", "spark-submit.sh", "pyproject.toml"} <= set(copied)
    assert ("RUN", next(rest for word, rest in build if word == "RUN" and "--setup" in rest)) in build
    assert next(rest for word, rest in build if word == "RUN" and "--setup" in rest).startswith(
        "./spark-submit.sh --setup"
    )
    text = dockerfile.read_text()
    assert not re.search(r"curl|wget|spark\.jars\.packages|\bADD\b|\.jar\b", text)
    # and that setup resolves the pins file for the pyspark the image installs (the one pinned here)
    pyspark_pin = re.search(r'"pyspark==([\d.]+)"', (REPO_ROOT / "pyproject.toml").read_text()).group(1)
    import pyspark

    assert pyspark.__version__ == pyspark_pin
    from s3spark.jars import pins_for, spark_hadoop_version

    assert any(pin.artifact == "hadoop-aws" for pin in pins_for(spark_hadoop_version()))


def test_minio_image_is_the_pinned_version_local_s3_uses():
    steps = instructions(DOCKER / "minio.Dockerfile")
    args = [rest for word, rest, _ in steps if word == "ARG" and rest.startswith("MINIO_VERSION=")]
    assert args == [f"MINIO_VERSION={local_s3.MINIO_VERSION}"]
    assert any(word == "RUN" and f"{local_s3.MINIO_MODULE}@${{MINIO_VERSION}}" in rest for word, rest, _ in steps)
    assert [rest for word, rest, _ in steps if word == "USER"] == ["1000"]


def test_lint_clean_where_the_linters_are_installed():
    ran = 0
    if shutil.which("shellcheck"):
        scripts = [DOCKER / "entrypoint.sh", REPO_ROOT / "scripts" / "local-cluster"]
        result = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout
        ran += 1
    if shutil.which("hadolint"):
        dockerfiles = [DOCKER / "Dockerfile", DOCKER / "minio.Dockerfile"]
        result = subprocess.run(["hadolint", *map(str, dockerfiles)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout
        ran += 1
    if not ran:
        pytest.skip("neither shellcheck nor hadolint is installed")


# --- entry point and bootstrap ---------------------------------------------------------------------------


def echo_tool(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    path.chmod(0o755)


def entrypoint(*args: str, env: dict[str, str]) -> list[str]:
    base = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [str(DOCKER / "entrypoint.sh"), *args], env={**base, **env}, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_entrypoint_starts_kubernetes_executors_and_drivers_as_spark_expects(tmp_path):
    echo_tool(tmp_path / "java" / "bin" / "java")
    echo_tool(tmp_path / "spark" / "bin" / "spark-submit")
    home = {"SPARK_HOME": str(tmp_path / "spark"), "JAVA_HOME": str(tmp_path / "java")}
    executor_env = {
        **home,
        "SPARK_JAVA_OPT_0": "-Dspark.driver.port=7078",
        "SPARK_JAVA_OPT_1": "-Dtwo=a b",
        "SPARK_JAVA_OPT_10": "-Dten",
        "SPARK_EXECUTOR_MEMORY": "1g",
        "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@driver-svc:7078",
        "SPARK_EXECUTOR_ID": "3",
        "SPARK_EXECUTOR_CORES": "2",
        "SPARK_APPLICATION_ID": "spark-0123",
        "SPARK_EXECUTOR_POD_IP": "10.1.2.3",
        "SPARK_RESOURCE_PROFILE_ID": "0",
        "SPARK_EXECUTOR_POD_NAME": "job-exec-3",
    }
    assert entrypoint("executor", env=executor_env) == [
        "-Dspark.driver.port=7078",
        "-Dtwo=a b",
        "-Dten",
        "-Xms1g",
        "-Xmx1g",
        "-cp",
        f"{tmp_path}/spark/conf:{tmp_path}/spark/jars/*",
        "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend",
        *("--driver-url", "spark://CoarseGrainedScheduler@driver-svc:7078", "--executor-id", "3", "--cores", "2"),
        *("--app-id", "spark-0123", "--hostname", "10.1.2.3", "--resourceProfileId", "0", "--podName", "job-exec-3"),
    ]
    driver = entrypoint(
        "driver",
        "--properties-file",
        "/opt/spark/conf/spark.properties",
        "local:///opt/s3spark/jobs/csv_to_parquet.py",
        env={**home, "SPARK_DRIVER_BIND_ADDRESS": "10.1.2.4"},
    )
    assert driver == [
        "--conf",
        "spark.driver.bindAddress=10.1.2.4",
        "--deploy-mode",
        "client",
        "--properties-file",
        "/opt/spark/conf/spark.properties",
        "local:///opt/s3spark/jobs/csv_to_parquet.py",
    ]
    assert entrypoint("echo", "anything else runs as given", env=home) == ["anything else runs as given"]


def test_bucket_bootstrap_creates_buckets_and_uploads_the_sample(s3_server, s3):
    raw, lake = f"raw-{uuid.uuid4().hex[:8]}", f"lake-{uuid.uuid4().hex[:8]}"
    command = [
        sys.executable,
        str(DOCKER / "s3_bootstrap.py"),
        *("--bucket", raw, "--bucket", lake, "--upload", str(REPO_ROOT / "data" / "pageviews"), f"s3://{raw}/pv/"),
    ]
    env = {"PATH": "/usr/bin:/bin", **s3_server.env()}
    for _ in range(2):  # a second run finds the buckets and overwrites the objects
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
    assert "bucket" in result.stdout and "exists" in result.stdout
    sample = sorted((REPO_ROOT / "data" / "pageviews").iterdir())
    listed = s3.list_objects_v2(Bucket=raw, Prefix="pv/")["Contents"]
    assert sorted(o["Key"] for o in listed) == [f"pv/{p.name}" for p in sample]
    assert s3.get_object(Bucket=raw, Key=f"pv/{sample[0].name}")["Body"].read() == sample[0].read_bytes()
    assert s3.head_bucket(Bucket=lake)["ResponseMetadata"]["HTTPStatusCode"] == 200

    wrong = subprocess.run(
        command, env={**env, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}, capture_output=True, text=True, timeout=60
    )
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        f"error: creating bucket '{raw}' failed: HTTP 403 SignatureDoesNotMatch"
    ]


# --- Kubernetes samples (docs/k8s) --------------------------------------------------------------------


def test_kubernetes_samples_load_and_agree(monkeypatch):
    from s3spark.profiles import load_profile

    k8s = REPO_ROOT / "docs" / "k8s"
    monkeypatch.setenv("S3_ENDPOINT", "http://minio.storage.svc.cluster.local:9000")
    props = load_profile(f"minio,{k8s / 'kubernetes.conf'}").properties
    secret = yaml.safe_load((k8s / "s3-credentials.yaml").read_text())
    rbac = {doc["kind"]: doc for doc in yaml.safe_load_all((k8s / "spark-rbac.yaml").read_text())}
    namespace = props["spark.kubernetes.namespace"]
    assert secret["metadata"]["namespace"] == rbac["ServiceAccount"]["metadata"]["namespace"] == namespace
    assert rbac["Namespace"]["metadata"]["name"] == namespace
    assert (
        props["spark.kubernetes.authenticate.driver.serviceAccountName"] == rbac["ServiceAccount"]["metadata"]["name"]
    )
    refs = {k: v for k, v in props.items() if ".secretKeyRef." in k}
    assert {k.rsplit(".", 1)[1] for k in refs} == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
    assert {k.split(".")[2] for k in refs} == {"driver", "executor"}
    for ref in refs.values():
        name, key = ref.split(":")
        assert name == secret["metadata"]["name"] and key in secret["stringData"]
    assert all(value.startswith("REPLACE_WITH_") for value in secret["stringData"].values())
    # The documented submission works out as docs/kubernetes.md says (image paths, no secret in the output).
    plan = cluster.prepare(
        "k8s://https://api.k8s.example.com:6443",
        props,
        str(REPO_ROOT / "jobs" / "csv_to_parquet.py"),
        sys.executable,
        ["--deploy-mode", "cluster"],
        env={},
    )
    assert plan.job == "local:///opt/s3spark/jobs/csv_to_parquet.py"
    assert plan.properties["spark.pyspark.python"] == cluster.IMAGE_PYTHON
