#!/usr/bin/env bash
# Run a job with a profile and the pinned jars: ./spark-submit.sh [options] JOB.py [job options]. See --help.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/bootstrap.sh
source "$REPO/scripts/bootstrap.sh"

usage() {
  cat <<USAGE
usage: ./spark-submit.sh [--profile NAME|PATH] [spark-submit options] JOB.py [job options]
       ./spark-submit.sh --show-profile [--profile NAME|PATH]
       ./spark-submit.sh --doctor [--profile NAME|PATH] [s3a://bucket/prefix] [--write-test]
       ./spark-submit.sh --list-profiles | --setup | --help
       ./spark-submit.sh --dry-run [--master URL] [options] JOB.py [job options]

Runs a job of this project with spark-submit. On the first run it sets up what is missing: a virtualenv
(\$S3SPARK_VENV, default $REPO/.venv) with the pinned Python packages, the pinned jars (hadoop-aws,
the AWS SDK bundle, the S3A committer bindings, Delta) fetched once with Maven into \$S3SPARK_CACHE/jars
(default ~/.cache/s3spark/jars) and verified against their sha256, the fast path's own expressions compiled
from lib/java with javac (a JDK; without one Spark's slower built-ins are used), and for local runs a class
archive of the driver JVM (\$S3SPARK_CACHE/class-archive, about a minute to make, 2 s faster starts; S3SPARK_CLASS_ARCHIVE=0
turns it off). Later runs do no setup.

options of this script:
  --profile NAME|PATH   s3a/Spark settings from conf/profiles/NAME.conf (layered on base.conf) or a file;
                        several layer left to right: --profile minio,mytuning. Default: \$S3SPARK_PROFILE
                        or 'local'. Available: $(cd "$REPO/conf/profiles" 2>/dev/null && ls ./*.conf 2>/dev/null | sed 's|^\./||; s|\.conf$||' | tr '\n' ' ')
  --show-profile        print the effective settings of the profile (secrets redacted) and exit
  --list-profiles       list the profiles and exit
  --setup               only set up (virtualenv, jars, class archive) and exit
  --doctor              check Java, pyspark, jars, the profile, the endpoint (DNS, TCP, TLS trust),
                        credentials and the bucket (list; with --write-test also write and delete)
  --dry-run             print the command, the Python and the Spark properties (secrets redacted) that
                        a run would use, and exit
  -h, --help            this help; JOB.py --help shows the job's own options

spark-submit options pass through unchanged, e.g. --master (default local[*]), --conf KEY=VALUE,
--driver-memory 4g, --executor-memory, --num-executors. Everything after JOB.py goes to the job.

clusters: with --master spark://HOST:PORT, yarn or k8s://https://HOST:PORT the same job and profile run on
the cluster: the library ships as a zip (--py-files), the pinned jars through spark.jars, and executors run
this virtualenv's Python (standalone, YARN) or the image's (Kubernetes). \$S3SPARK_EXECUTOR_PYTHON and
\$S3SPARK_NODE_JARS change that; see README "Running on a cluster". scripts/local-cluster starts one here.

jobs:
  jobs/csv_to_parquet.py     CSV -> Parquet (with no options: the bundled sample -> ./output/)
  jobs/csv_filter_count.py   load CSV, filter, count (the classic pandas-vs-Spark experiment)

credentials: s3a reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment (or a Hadoop
credential provider, see README); they never go in profiles.
exit codes: the job's: 0 success, 2 bad usage, input or configuration, 1 other failure.
USAGE
}

profile="${S3SPARK_PROFILE:-local}"
master="${S3SPARK_MASTER:-local[*]}"
action=run
dry_run=0
job=""
spark_args=()
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --profile) [[ $# -ge 2 ]] || die "--profile needs a value"; profile="$2"; shift 2 ;;
    --profile=*) profile="${1#*=}"; shift ;;
    --master) [[ $# -ge 2 ]] || die "--master needs a value"; master="$2"; shift 2 ;;
    --master=*) master="${1#*=}"; shift ;;
    --show-profile) action=show; shift ;;
    --list-profiles) action=list; shift ;;
    --setup) action=setup; shift ;;
    --dry-run) dry_run=1; shift ;;
    --doctor)  # everything after it belongs to the doctor, except --profile
      action=doctor; shift
      doctor_args=()
      while (($#)); do
        case "$1" in
          --profile) [[ $# -ge 2 ]] || die "--profile needs a value"; profile="$2"; shift 2 ;;
          --profile=*) profile="${1#*=}"; shift ;;
          *) doctor_args+=("$1"); shift ;;
        esac
      done ;;
    --verbose|-v|--supervise|--version) spark_args+=("$1"); shift ;;
    --*=*) spark_args+=("$1"); shift ;;
    --*) [[ $# -ge 2 ]] || die "$1 needs a value"; spark_args+=("$1" "$2"); shift 2 ;;
    *) job="$1"; shift; break ;;
  esac
done

ensure_venv
case "$action" in
  show) exec "$S3SPARK_PY" -m s3spark.profiles show "$profile" ;;
  list) exec "$S3SPARK_PY" -m s3spark.profiles list ;;
  doctor) exec "$S3SPARK_PY" -m s3spark.doctor --profile "$profile" ${doctor_args[@]+"${doctor_args[@]}"} ;;
esac
check_java
if [[ "$action" == setup ]]; then
  ensure_jars
  ensure_class_archive
  echo "setup complete: $S3SPARK_VENV and $("$S3SPARK_PY" -c 'from s3spark.jars import jars_cache; print(jars_cache())')" >&2
  exit 0
fi

[[ -n "$job" ]] || { usage >&2; die "no job given: e.g. ./spark-submit.sh jobs/csv_to_parquet.py"; }
if [[ ! -f "$job" && -f "$REPO/$job" ]]; then job="$REPO/$job"; fi
[[ -f "$job" ]] || die "job not found: $job (jobs live in $REPO/jobs/)"

properties="$(mktemp "${TMPDIR:-/tmp}/s3spark-XXXXXX.properties")"
trap 'rm -f "$properties"' EXIT
# This also fetches missing jars (jars.py) and, for a local master, builds a missing class archive
# (class_archive.py): one Python start instead of three.
archive_args=()
((dry_run)) || archive_args=(--build-class-archive)
"$S3SPARK_PY" -m s3spark.session --profile "$profile" --master "$master" --write "$properties" \
  ${archive_args[@]+"${archive_args[@]}"} || exit $?

executor_python="$S3SPARK_PY"
if [[ "$master" != local && "$master" != local\[* ]]; then
  # A cluster: ship the library and the jars, pick the executors' Python (lib/s3spark/cluster.py).
  notes=()
  ((dry_run)) && notes=(--notes)
  plan="$("$S3SPARK_PY" -m s3spark.cluster prepare --master "$master" --properties "$properties" \
    --job "$job" --python "$S3SPARK_PY" ${notes[@]+"${notes[@]}"} -- ${spark_args[@]+"${spark_args[@]}"})" \
    || exit $?
  plan_lines=()
  while IFS= read -r line; do plan_lines+=("$line"); done <<< "$plan"
  executor_python="${plan_lines[0]}"
  job="${plan_lines[1]}"
  spark_args=("${plan_lines[@]:2}")
fi

export PYSPARK_PYTHON="$executor_python" PYSPARK_DRIVER_PYTHON="$S3SPARK_PY" S3SPARK_SUBMITTED_PROFILE="$profile"
submit_args=(--master "$master" --properties-file "$properties" ${spark_args[@]+"${spark_args[@]}"})
status=0
if [[ " ${spark_args[*]-} " == *" --deploy-mode cluster "* || " ${spark_args[*]-} " == *" --deploy-mode=cluster "* ]]; then
  # The driver runs on the cluster: only spark-submit itself can start it.
  command=("$S3SPARK_VENV/bin/spark-submit" "${submit_args[@]}" "$job" "$@")
  env_shown=()
else
  # Client mode: the job's Python process starts the JVM through spark-submit (PYSPARK_SUBMIT_ARGS), as
  # a notebook does. Unlike `spark-submit job.py`, which merges the driver's stderr into stdout, this keeps
  # stdout for the run summary and stderr for messages.
  export PYSPARK_SUBMIT_ARGS
  PYSPARK_SUBMIT_ARGS="$("$S3SPARK_PY" -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' \
    "${submit_args[@]}") pyspark-shell"
  command=("$S3SPARK_PY" "$job" "$@")
  env_shown=("PYSPARK_SUBMIT_ARGS=$PYSPARK_SUBMIT_ARGS")
fi
if ((dry_run)); then
  echo "# Spark properties ($properties, deleted after the run; secrets redacted):"
  "$S3SPARK_PY" -m s3spark.cluster show "$properties"
  echo "# command:"
  "$S3SPARK_PY" -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' \
    env ${env_shown[@]+"${env_shown[@]}"} "PYSPARK_PYTHON=$PYSPARK_PYTHON" "${command[@]}"
  exit 0
fi
"${command[@]}" || status=$?
exit "$status"
