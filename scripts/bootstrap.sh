# Sourced by spark-submit.sh and test.sh: set up what is missing, once, and nothing when all is in place.
#   ensure_venv [EXTRAS]  a virtualenv ($S3SPARK_VENV, default REPO/.venv) with the pinned packages, editable;
#                       EXTRAS is a comma list (dev, bench, dev,bench), added to those already installed
#   ensure_jars         the pinned jars in the cache ($S3SPARK_CACHE/jars), checksums verified, and the jar of
#                       our own expressions built from lib/java ($S3SPARK_CACHE/expressions; needs javac)
#   ensure_class_archive  the driver JVM's class archive for local runs ($S3SPARK_CACHE/class-archive)
# shellcheck shell=bash

S3SPARK_VENV="${S3SPARK_VENV:-$REPO/.venv}"
S3SPARK_PY="$S3SPARK_VENV/bin/python"

die() { echo "error: $*" >&2; exit 2; }

check_java() {
  command -v java >/dev/null 2>&1 || die "java not found: install Java 17 (apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
  local version
  version="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
  case "$version" in
    8|11|17) ;;
    *) die "Spark 3.5 runs on Java 8, 11 or 17; found Java ${version:-unknown}: install Java 17 or set JAVA_HOME" ;;
  esac
}

# A comma list of extras as a sorted set without blanks: "bench,,dev" -> "bench,dev".
extras_set() {
  printf '%s\n' "$1" | tr ',' '\n' | sed 's/[[:space:]]//g; /^$/d' | sort -u | paste -s -d , -
}

# True when every extra of the comma set $1 is in the comma set $2.
extras_within() {
  local extra
  for extra in ${1//,/ }; do
    [[ ",$2," == *",$extra,"* ]] || return 1
  done
}

ensure_venv() {
  local extras python="${S3SPARK_PYTHON:-python3}" stamp="$S3SPARK_VENV/.s3spark-installed" want
  local have_hash="" have_extras=""
  extras="$(extras_set "${1:-}")"
  # The pins and this clone's path: a virtualenv shared between clones is re-pointed at this one.
  want="$( (cat "$REPO/pyproject.toml"; echo "$REPO") | sha256sum | cut -c1-64)"
  if [[ -x "$S3SPARK_PY" && -f "$stamp" ]]; then
    read -r have_hash have_extras < "$stamp" || true
    have_extras="$(extras_set "$have_extras")"
    # Satisfied when every wanted extra is installed: `./test.sh` (dev) and a benchmark (bench) take turns
    # without reinstalling.
    if [[ "$have_hash" == "$want" ]] && extras_within "$extras" "$have_extras"; then
      return 0
    fi
  fi
  command -v "$python" >/dev/null 2>&1 || die "$python not found: install Python 3.11 or set S3SPARK_PYTHON"
  "$python" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 11)))' \
    || die "pyspark 3.5 needs Python 3.10 or 3.11; $python is $("$python" --version 2>&1): set S3SPARK_PYTHON"
  echo "setting up $S3SPARK_VENV with the pinned Python packages (first run only, a few minutes)..." >&2
  if [[ ! -x "$S3SPARK_PY" ]]; then
    "$python" -m venv "$S3SPARK_VENV" || die "could not create a virtualenv: install python3-venv"
  fi
  # Keep what is installed: the union of the wanted extras and those of the last install.
  extras="$(extras_set "$extras,$have_extras")"
  local spec="$REPO"
  [[ -n "$extras" ]] && spec="${REPO}[$extras]"
  "$S3SPARK_PY" -m pip install --quiet --disable-pip-version-check -e "$spec" >&2 \
    || die "pip install failed (see above); rerun when the package index is reachable"
  echo "$want ${extras}" > "$stamp"
}

ensure_jars() {
  "$S3SPARK_PY" -m s3spark.jars ensure > /dev/null || exit $?
  "$S3SPARK_PY" -m s3spark.expressions > /dev/null
}

ensure_class_archive() {
  "$S3SPARK_PY" -m s3spark.class_archive ensure
}
