"""Errors a user can act on, and the translation of Spark/JVM failures into them."""

from __future__ import annotations

import re


class UserError(Exception):
    """A problem the user can fix (bad usage, input or configuration): one line, exit code 2."""

    exit_code = 2


def java_message(error: BaseException) -> str:
    """The first meaningful line of a Spark or py4j error, without Java class noise or stack frames."""
    java = getattr(error, "java_exception", None)
    text = str(java.toString()) if java is not None else str(error)
    # pyspark's captured exceptions keep the message; py4j's put "An error occurred while calling ..." first.
    text = re.sub(r"^An error occurred while calling [^\n]*\n?", "", text.strip())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("at ")]
    message = " ".join(lines[:2]) if lines else type(error).__name__
    message = re.sub(r"^(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error):\s*", "", message)
    message = re.sub(r"\s*JVM stacktrace:.*", "", message)
    return message.strip()


# (pattern in the Java/Python error text, one-line cause and fix). First match wins; order matters.
KNOWN_FAILURES: list[tuple[str, str]] = [
    (
        r"ClassNotFoundException: Class org\.apache\.hadoop\.fs\.s3a\.S3AFileSystem",
        "the s3a connector jar (hadoop-aws) is not on the classpath; run the job through ./spark-submit.sh "
        "or s3spark.session(), which add the pinned jars",
    ),
    (
        r"NoSuchMethodError",
        "a jar does not match Spark's Hadoop version (hadoop-aws must equal the Hadoop bundled with pyspark); "
        "use the pinned jars from conf/jars/ and remove other hadoop-aws/aws-sdk jars from the classpath",
    ),
    (
        r"PATH_NOT_FOUND\]|Path does not exist",
        "input not found; check the path (files, directories and globs are accepted)",
    ),
]


def translate(error: BaseException) -> UserError | None:
    """A known Spark/JVM failure as a one-line UserError; None when it is not one we recognise."""
    from s3spark.bad_rows import malformed_row_in

    text = str(error)
    java = getattr(error, "java_exception", None)
    if java is not None:
        text += "\n" + str(java.toString())
    bad_row = malformed_row_in(text)
    if bad_row:
        file, record = bad_row
        shown = record if len(record) <= 200 else record[:200] + "..."
        return UserError(
            f"malformed row in {file}: {shown!r}; fix the input, or rerun with --on-bad-rows drop "
            "or --on-bad-rows quarantine --quarantine URI"
        )
    for pattern, message in KNOWN_FAILURES:
        if re.search(pattern, text):
            return UserError(message)
    return None
