"""notebooks/pageviews_on_s3.ipynb: committed without outputs, and executed headless against the local S3 server."""

from __future__ import annotations

import os
import re

import nbformat
from nbclient import NotebookClient

from s3spark.paths import REPO_ROOT

NOTEBOOK = REPO_ROOT / "notebooks" / "pageviews_on_s3.ipynb"
# A Python warning as the kernel prints it on stderr: "path:line: SomeWarning: message".
PYTHON_WARNING = re.compile(r"\b\w*Warning: ")


def test_committed_notebook_has_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code
    assert [cell.outputs for cell in code] == [[] for _ in code]
    assert [cell.execution_count for cell in code] == [None for _ in code]
    assert nb.metadata.kernelspec.name == "python3"


def kernel_env(bucket: str) -> dict[str, str]:
    """The test server's env (credentials, S3_ENDPOINT), without this process's Spark gateway variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_GATEWAY", "SPARK_"))}
    env.pop("PYARROW_IGNORE_TIMEZONE", None)  # the notebook must not depend on it being set outside
    env.update(S3SPARK_PROFILE="minio", S3SPARK_DEMO_BUCKET=bucket, S3SPARK_MASTER="local[2]")
    return env


def outputs(nb, kind: str) -> list[dict]:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs if out.output_type == kind]


def test_notebook_runs_against_local_s3(s3_server, s3, bucket, tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}, allow_errors=False
    )
    client.execute(env=kernel_env(bucket))

    text = "\n".join(
        [out.get("text", "") for out in outputs(nb, "stream")]
        + [out.get("data", {}).get("text/plain", "") for out in outputs(nb, "execute_result")]
    )
    assert f"endpoint: {s3_server.endpoint}" in text
    assert "20,000 rows read from 2 files, 20,000 written to" in text
    assert "Delta table version 0" in text
    assert "20,000 rows" in text
    images = [out for out in outputs(nb, "display_data") if "image/png" in out.get("data", {})]
    assert len(images) == 1
    stderr = "".join(out.get("text", "") for out in outputs(nb, "stream") if out.get("name") == "stderr")
    assert not PYTHON_WARNING.search(stderr), stderr
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert "lake/pageviews/_delta_log/00000000000000000000.json" in keys
    assert sum(k.startswith("raw/pageviews/") for k in keys) == 2
