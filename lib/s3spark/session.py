"""Profiles → SparkSession, the same way for spark-submit.sh, notebooks and tests."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from s3spark import class_archive as archives
from s3spark import expressions
from s3spark.jars import ensure_jars
from s3spark.paths import LOG4J_CONFIG, LOG4J_VERBOSE_CONFIG, PROFILE_DIR
from s3spark.profiles import load_profile

if TYPE_CHECKING:
    # Imported where used: `python -m s3spark.session --write`, run before every job, needs no pyspark (0.12 s).
    from pyspark.sql import SparkSession

PROFILE_KEY = "spark.s3spark.profile"
# Set by spark-submit.sh for the job process: the profile is already in the JVM's Spark configuration.
SUBMITTED_PROFILE_ENV = "S3SPARK_SUBMITTED_PROFILE"
DEFAULT_PROFILE = "local"
JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
LOCAL_MASTER_LAYER = PROFILE_DIR / "snippets" / "local-master.conf"


def profile_spec(profile: str | None = None) -> str:
    """The profile to use: the argument, else $S3SPARK_PROFILE, else 'local'."""
    return profile or os.environ.get("S3SPARK_PROFILE") or DEFAULT_PROFILE


def is_local(master: str | None) -> bool:
    """True for local, local[N], local[*] and local[N,F]: the executors run inside the driver's JVM."""
    return master is not None and (master == "local" or master.startswith("local["))


def spark_properties(
    profile: str | None = None, fetch_jars: bool = True, master: str | None = None, class_archive: str = "use"
) -> dict[str, str]:
    """Every Spark property a job needs: the merged profile, the jars and the logging config.

    The jars are the pinned ones and the fast path's own expressions (``expressions``, built when missing).

    A local master also gets conf/profiles/snippets/local-master.conf (after base, before the profile's
    layers): settings that only make sense when the executors run inside the driver's JVM.

    For a local master the jars go on the driver's class path rather than spark.jars: executors in the
    same JVM then load them from there instead of fetching a copy of each (290 MB) through the driver's file
    server at their first task. Measured here: SparkSession start 3.5-4.1 s with spark.jars, 2.3-3.0 s without.

    A local master's driver also maps its classes from the class archive for its class path
    (``class_archive``): "use" it when it exists, "build" it first when it is missing, or "none".
    """
    loaded = load_profile(profile_spec(profile), after_base=[LOCAL_MASTER_LAYER] if is_local(master) else [])
    props = dict(loaded.properties)
    props[PROFILE_KEY] = loaded.spec
    jars = [str(path) for path in ensure_jars(fetch_missing=fetch_jars)]
    own_expressions = expressions.ensure_jar(build=fetch_jars)
    if own_expressions:
        jars.append(str(own_expressions))
    jars = [*filter(None, props.pop("spark.jars", "").split(",")), *jars]
    if is_local(master):
        key, separator = "spark.driver.extraClassPath", os.pathsep
    else:
        key, separator = "spark.jars", ","
    props[key] = separator.join(filter(None, [props.get(key, ""), *jars]))
    log4j = f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}"
    for key in JAVA_OPTION_KEYS:
        props[key] = " ".join(filter(None, [log4j, props.get(key, "")]))
    if is_local(master) and class_archive != "none":
        class_path, options = props["spark.driver.extraClassPath"], props["spark.driver.extraJavaOptions"]
        if class_archive == "build":
            archives.ensure(class_path, options)
        archive = archives.java_options(class_path, options)
        props["spark.driver.extraJavaOptions"] = " ".join(filter(None, [options, archive]))
    return props


def configured_elsewhere() -> bool:
    """True when Spark is already configured: started by spark-submit.sh, or a session is running."""
    from pyspark.sql import SparkSession

    return bool(os.environ.get(SUBMITTED_PROFILE_ENV)) or SparkSession.getActiveSession() is not None


def session(
    profile: str | None = None,
    *,
    master: str | None = None,
    app_name: str = "s3spark",
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession configured by a profile (default $S3SPARK_PROFILE or 'local').

    Under spark-submit.sh the profile is already in the Spark configuration and is not applied twice.
    Elsewhere (a notebook, a test, plain python) the profile, the pinned jars and the logging
    configuration are applied here, with master ``local[*]`` unless given.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in (conf or {}).items():
            active.conf.set(key, value)
        return active
    builder = SparkSession.builder.appName(app_name)
    if not configured_elsewhere():
        master = master or os.environ.get("S3SPARK_MASTER") or "local[*]"
        props = spark_properties(profile, master=master)
        builder = builder.master(master)
        for key, value in props.items():
            builder = builder.config(key, value)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


@contextlib.contextmanager
def session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Apply SQL settings for one action and restore the previous values afterwards (unset stays unset)."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def set_verbose(spark: SparkSession, verbose: bool) -> None:
    """For --verbose runs, switch logging to conf/log4j2-verbose.properties: whole stack traces, task failures."""
    if not verbose:
        return
    jvm = spark.sparkContext._jvm
    config = jvm.java.net.URI(LOG4J_VERBOSE_CONFIG.as_uri())
    jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(config)


def main(argv: list[str] | None = None) -> int:
    """Write the Spark properties of a profile (with jars and logging) for spark-submit --properties-file."""
    import argparse
    import sys
    from pathlib import Path

    from s3spark.errors import UserError
    from s3spark.profiles import write_properties

    parser = argparse.ArgumentParser(prog="python -m s3spark.session", description=main.__doc__)
    parser.add_argument("--profile", help="profile spec (default $S3SPARK_PROFILE or local)")
    parser.add_argument("--write", required=True, type=Path, help="properties file to write")
    parser.add_argument("--master", help="the master the job runs on (local masters get the jars on the class path)")
    parser.add_argument("--build-class-archive", action="store_true", help="build a missing class archive first")
    args = parser.parse_args(argv)
    archive = "build" if args.build_class_archive else "use"
    try:
        write_properties(spark_properties(args.profile, master=args.master, class_archive=archive), args.write)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
