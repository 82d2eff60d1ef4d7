"""The scheduling examples stay in step with the job: valid syntax, and only flags the job knows."""

from __future__ import annotations

import ast
import re
import shlex

from s3spark.paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "scheduling"


def job_flags() -> set[str]:
    source = (REPO_ROOT / "jobs" / "csv_to_parquet.py").read_text() + (REPO_ROOT / "lib/s3spark/cli.py").read_text()
    return set(re.findall(r'"(--[a-z-]+)"', source)) | {"--header", "--no-header"}


def flags_in(command: str) -> set[str]:
    words = shlex.split(command.replace("\\\n", " "))
    job = next(index for index, word in enumerate(words) if word.endswith(".py"))
    return {word for word in words[job + 1 :] if word.startswith("--")}


def test_airflow_dag_is_valid_python_with_a_dag():
    tree = ast.parse((EXAMPLES / "airflow_dag.py").read_text())
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert {"DAG", "BashOperator", "PythonOperator"} <= calls


def test_examples_use_only_flags_the_job_knows():
    known = job_flags()
    crontab = next(line for line in (EXAMPLES / "crontab").read_text().splitlines() if line and line[0] != "#")
    service = (EXAMPLES / "s3spark-pageviews.service").read_text()
    exec_start = service.split("ExecStart=", 1)[1].split("\n#", 1)[0]
    dag = ast.parse((EXAMPLES / "airflow_dag.py").read_text())
    convert = next(node for node in ast.walk(dag) if isinstance(node, ast.Assign) and node.targets[0].id == "CONVERT")
    dag_command = "".join(part.value for part in ast.walk(convert.value) if isinstance(part, ast.Constant))
    for command in (crontab.split("flock -n /tmp/s3spark-pageviews.lock ", 1)[1], exec_start, dag_command):
        assert "--incremental" in command
        assert flags_in(command) <= known, flags_in(command) - known


def test_systemd_timer_and_service_are_paired():
    timer = (EXAMPLES / "s3spark-pageviews.timer").read_text()
    service = (EXAMPLES / "s3spark-pageviews.service").read_text()
    assert "OnCalendar=" in timer and "[Install]" in timer
    assert "Type=oneshot" in service and "RestartPreventExitStatus=2" in service
