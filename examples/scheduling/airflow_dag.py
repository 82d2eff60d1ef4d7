"""Airflow DAG: the hourly incremental page-view conversion, through spark-submit.sh.

Copy into your DAGs folder and set S3SPARK_HOME to the clone. Credentials come from an Airflow connection or
the worker's environment, not from this file. The job is idempotent: a retried or backfilled run converts
only files it has not converted before (the checkpoint), so retries are safe. Exit code 2 (bad input or
configuration) will fail again on retry; 1 (anything else, e.g. the store was down) may not.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta

from airflow import DAG
from airflow.exceptions import AirflowFailException
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

S3SPARK_HOME = os.environ.get("S3SPARK_HOME", "/opt/s3spark")
SUMMARY = "/tmp/s3spark-pageviews-{{ ts_nodash }}.json"

CONVERT = (
    f"{S3SPARK_HOME}/spark-submit.sh --profile minio jobs/csv_to_parquet.py --incremental"
    " --input s3a://raw/pageviews/ --schema @pageviews --delimiter space --no-header"
    " --output s3a://lake/pageviews --checkpoint s3a://lake/_checkpoints/pageviews"
    " --on-bad-rows quarantine --quarantine s3a://lake/_quarantine/pageviews"
    f" --summary-json {SUMMARY}"
)


def check_summary(path: str) -> None:
    """Fail the task (without retries) when rows were quarantined: someone should look at them."""
    with open(path, encoding="utf-8") as stream:
        summary = json.load(stream)
    if summary["rows_quarantined"]:
        raise AirflowFailException(
            f"{summary['rows_quarantined']} malformed rows quarantined in {summary['quarantine']}"
        )


with DAG(
    dag_id="s3spark_pageviews",
    start_date=datetime(2026, 1, 1),
    schedule="5 * * * *",
    catchup=False,
    max_active_runs=1,  # runs never overlap; the checkpoint lock would refuse a second one anyway
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
) as dag:
    convert = BashOperator(
        task_id="convert",
        bash_command=CONVERT,
        cwd=S3SPARK_HOME,
    )
    check = PythonOperator(task_id="check_summary", python_callable=check_summary, op_args=[SUMMARY])
    convert >> check
