#!/usr/bin/env bash
# The test suite, from a fresh clone: sets up the virtualenv (with dev tools), the pinned jars and the local
# S3 server binary if missing, then runs pytest. Extra arguments go to pytest (e.g. ./test.sh -k profiles).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/bootstrap.sh
source "$REPO/scripts/bootstrap.sh"
ensure_venv dev
check_java
ensure_jars
ensure_class_archive
"$S3SPARK_PY" -m s3spark.local_s3 build >&2
cd "$REPO"
"$S3SPARK_VENV/bin/ruff" check lib jobs tests bench examples
exec "$S3SPARK_PY" -m pytest "$@"
