#!/usr/bin/env bash
# Entry point of the s3spark image (/opt/entrypoint.sh), with the contract Spark on Kubernetes expects of an
# image's entry point (the same commands and SPARK_* variables as Apache Spark's own images):
#   driver ARGS...   the driver pod: spark-submit in client mode, bound to $SPARK_DRIVER_BIND_ADDRESS
#   executor         an executor pod: KubernetesExecutorBackend, configured by the SPARK_* variables Spark sets
#   anything else    runs as given (compose services, ./spark-submit.sh, a shell)
# Commands run under tini (signals forwarded, zombies reaped) when it is installed.
set -euo pipefail

spark_home="${SPARK_HOME:?SPARK_HOME is not set}"

# Kubernetes may run the pod as a UID the image does not know (OpenShift); the JVM and Hadoop want a user name.
uid="$(id -u)"
if ! getent passwd "$uid" >/dev/null 2>&1 && [[ -w /etc/passwd ]]; then
  echo "$uid:x:$uid:$(id -g):${SPARK_USER_NAME:-anonymous uid}:$spark_home:/bin/false" >> /etc/passwd
fi

classpath="${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}$spark_home/jars/*"
if [[ -n "${SPARK_EXTRA_CLASSPATH:-}" ]]; then classpath="$classpath:$SPARK_EXTRA_CLASSPATH"; fi
if [[ -n "${HADOOP_CONF_DIR:-}" ]]; then classpath="$HADOOP_CONF_DIR:$classpath"; fi
classpath="${SPARK_CONF_DIR:-$spark_home/conf}:$classpath"

case "${1:-}" in
  driver)
    shift
    command=("$spark_home/bin/spark-submit" --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:?}"
      --deploy-mode client "$@")
    ;;
  executor)
    shift
    # Spark hands the executor's JVM options over as SPARK_JAVA_OPT_0, SPARK_JAVA_OPT_1, ... in this order.
    java_opts=()
    while IFS= read -r name; do
      java_opts+=("${!name}")
    done < <(compgen -e | grep -E '^SPARK_JAVA_OPT_[0-9]+$' | sort -t_ -k4 -n || true)
    command=("${JAVA_HOME:?}/bin/java" ${java_opts[@]+"${java_opts[@]}"}
      "-Xms${SPARK_EXECUTOR_MEMORY:?}" "-Xmx$SPARK_EXECUTOR_MEMORY"
      -cp "$classpath${SPARK_DIST_CLASSPATH:+:$SPARK_DIST_CLASSPATH}"
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend
      --driver-url "${SPARK_DRIVER_URL:?}" --executor-id "${SPARK_EXECUTOR_ID:?}"
      --cores "${SPARK_EXECUTOR_CORES:?}" --app-id "${SPARK_APPLICATION_ID:?}"
      --hostname "${SPARK_EXECUTOR_POD_IP:?}" --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}"
      --podName "${SPARK_EXECUTOR_POD_NAME:?}")
    ;;
  "")
    echo "usage: entrypoint.sh driver ARGS | executor | COMMAND [ARGS]" >&2
    exit 2
    ;;
  *)
    command=("$@")
    ;;
esac

if command -v tini >/dev/null 2>&1; then
  exec tini -s -- "${command[@]}"
fi
exec "${command[@]}"
