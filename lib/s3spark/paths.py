"""Where the project's files and caches live."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CONF_DIR = REPO_ROOT / "conf"
PROFILE_DIR = CONF_DIR / "profiles"
SCHEMA_DIR = CONF_DIR / "schemas"
JAR_PINS_DIR = CONF_DIR / "jars"
JAVA_SOURCE_DIR = REPO_ROOT / "lib" / "java"
LOG4J_CONFIG = CONF_DIR / "log4j2.properties"
LOG4J_VERBOSE_CONFIG = CONF_DIR / "log4j2-verbose.properties"


def cache_dir() -> Path:
    """The download and build cache, outside the repo: $S3SPARK_CACHE or ~/.cache/s3spark."""
    return Path(os.environ.get("S3SPARK_CACHE") or Path.home() / ".cache" / "s3spark")
