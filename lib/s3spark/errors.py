"""Errors a user can act on, and the translation of Spark/JVM failures into them.

`translate()` looks at the whole failure: the Python exception's text and every Java exception in its cause
chain (`java_exception`/`getCause()`), and matches it against `KNOWN_FAILURES`, a table of
(regex, one-line message). The messages name what went wrong and how to fix it; their `{placeholders}` are
filled from the failure text by `EXTRACTORS` (host, bucket, s3a path, region, ...) and, for `{endpoint}`, from
the running session's Hadoop configuration. Nothing else from the failure text is copied into a message, so
secrets in it cannot leak through.
"""

from __future__ import annotations

import os
import re
import string

# Environment variables whose values are secrets: never printed, whatever message carries them.
SECRET_VARIABLES = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "MINIO_ROOT_PASSWORD", "S3_TRUSTSTORE_PASSWORD")

CHAIN_LIMIT = 30  # Java cause chains are short; this only guards against cycles


def scrub(text: str) -> str:
    """Remove secret values taken from the environment from text."""
    for name in SECRET_VARIABLES:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "********")
    return text


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


# Network and TLS texts are not S3's own: these rows also need the failure to involve s3a or the AWS SDK, so
# that e.g. Ivy failing on a proxy's certificate or a dead py4j gateway are not blamed on the S3 endpoint.
_S3 = r"(?s)\A(?=.*(?:s3a://|com\.amazonaws\.))"
_CREDENTIALS = "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
_ENDPOINT_KEYS = "fs.s3a.endpoint (S3_ENDPOINT for the minio/onprem profiles)"
_REGION_KEYS = "fs.s3a.endpoint.region (S3_REGION for minio/onprem, AWS_REGION for aws)"
_JARS = (
    "use the pinned jars of conf/jars/ (./spark-submit.sh and s3spark.session.session() add them) and remove "
    "other hadoop-aws/aws-java-sdk jars from spark.jars, spark.jars.packages and $SPARK_HOME/jars"
)

# (regex searched in the whole failure text, one-line cause and fix). First match wins, so the specific
# rows come before the general ones. {placeholders} are filled by EXTRACTORS and configured_endpoint().
KNOWN_FAILURES: list[tuple[str, str]] = [
    # --- jars -------------------------------------------------------------------------------------
    (
        r"fs\.s3a\.aws\.credentials\.provider java\.lang\.ClassNotFoundException",
        "fs.s3a.aws.credentials.provider names {missing}, a class not on the classpath: fix the name, or, if it "
        "is one of Hadoop's defaults, hadoop-aws does not match Spark's Hadoop version; " + _JARS,
    ),
    (
        r"ClassNotFoundException: Class org\.apache\.hadoop\.fs\.s3a\.S3AFileSystem not found",
        "the s3a connector jar (hadoop-aws) is not on the classpath; run the job through ./spark-submit.sh "
        "or s3spark.session.session(), which add the pinned jars (`python -m s3spark.jars list` shows them)",
    ),
    (
        r"NoClassDefFoundError: com/amazonaws/|ClassNotFoundException: com\.amazonaws\.",
        "the AWS SDK jar (aws-java-sdk-bundle) that hadoop-aws needs is not on the classpath (missing {missing}); "
        + _JARS,
    ),
    (
        r"NoSuchMethodError|AbstractMethodError|IncompatibleClassChangeError"
        r"|NoClassDefFoundError: org/apache/hadoop/|ClassNotFoundException: (?:Class )?org\.apache\.hadoop\.fs\.s3a\.",
        "jar version mismatch (missing {missing}): a jar was built for other versions than the ones here "
        "(hadoop-aws must equal the Hadoop version bundled with pyspark, aws-java-sdk-bundle the one hadoop-aws "
        "was built with); " + _JARS,
    ),
    # --- credentials --------------------------------------------------------------------------------
    (
        r"No AWS Credentials provided by",
        "no AWS credentials found (tried {providers}); export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
        "(and AWS_SESSION_TOKEN for temporary ones), or name a Hadoop credential file in "
        "fs.s3a.security.credential.provider.path",
    ),
    (
        r"Error Code: (?:ExpiredToken|InvalidToken|TokenRefreshRequired)",
        "access denied to {uri} by {endpoint}: the session token is expired or invalid; "
        "refresh AWS_SESSION_TOKEN together with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
    ),
    (
        r"Error Code: SignatureDoesNotMatch",
        "access denied to {uri} by {endpoint}: the request signature does not match (SignatureDoesNotMatch), "
        "so the secret key is wrong for this access key id; " + _CREDENTIALS,
    ),
    (
        r"Error Code: InvalidAccessKeyId",
        "access denied to {uri} by {endpoint}: the access key id is unknown there (InvalidAccessKeyId); "
        + _CREDENTIALS
        + " and that fs.s3a.endpoint is the store these keys belong to",
    ),
    # --- TLS ------------------------------------------------------------------------------------------
    (
        _S3 + r".*?(?:PKIX path building failed|unable to find valid certification path)",
        "the TLS certificate of {endpoint} is not trusted by the JVM (PKIX path building failed); use --profile "
        "onprem with S3_TRUSTSTORE set to a truststore holding the store's CA (build it with keytool -importcert "
        "-file ca.crt -keystore truststore.p12 -storetype PKCS12) and S3_TRUSTSTORE_PASSWORD",
    ),
    (
        _S3 + r".*?(?:No subject alternative (?:DNS )?names? matching|doesn't match any of the subject alternative)",
        "the TLS certificate of {endpoint} does not name the host s3a connects to; use the host name the "
        "certificate was issued for in " + _ENDPOINT_KEYS + ", or reissue the certificate with that name",
    ),
    (
        _S3 + r".*?(?:Unsupported or unrecognized SSL message|Unrecognized SSL message, plaintext connection)",
        "{endpoint} does not speak TLS (HTTPS): use an http:// endpoint (the minio profile) or the server's "
        "HTTPS port in " + _ENDPOINT_KEYS,
    ),
    # --- connecting -------------------------------------------------------------------------------------
    (
        _S3 + r".*?Timeout waiting for connection from pool",
        "timed out waiting for a free HTTP connection in s3a's pool; raise fs.s3a.connection.maximum "
        "(keep it above fs.s3a.threads.max) or open fewer s3a streams at once (fewer concurrent tasks)",
    ),
    (
        _S3 + r".*?(?:UnknownHostException|Name or service not known|nodename nor servname provided)",
        "unknown host {host}: the S3 endpoint's name does not resolve; check " + _ENDPOINT_KEYS + " and DNS",
    ),
    (
        _S3 + r".*?(?:Connect to \S+ (?:\[[^\]]*\] )?failed: Connection refused|ConnectException: Connection refused)",
        "connection refused by {host}: nothing listens there; check the host and port in "
        + _ENDPOINT_KEYS
        + " and that the S3 server is running",
    ),
    (
        _S3 + r".*?(?:connect timed out|ConnectTimeoutException)",
        "no answer from {host} within fs.s3a.connection.establish.timeout; check " + _ENDPOINT_KEYS + ", "
        "and the firewall or proxy between here and the store",
    ),
    # --- wrong region or endpoint ----------------------------------------------------------------------
    (
        r"Error Code: AuthorizationHeaderMalformed|the region '[^']*' is wrong",
        "wrong signing region for {endpoint}, which expects {region} (AuthorizationHeaderMalformed); "
        "set " + _REGION_KEYS + " to {region}",
    ),
    (
        r"Status Code: 301|PermanentRedirect|Moved Permanently|Received permanent redirect",
        "bucket {bucket} is not served by {endpoint} (HTTP 301 redirect{redirect}): it is in another region; "
        "set AWS_REGION (aws profile) or fs.s3a.endpoint to the bucket's region, or fs.s3a.bucket.{bucket}.endpoint",
    ),
    (
        r"Error Code: 400 Bad Request",
        "{endpoint} rejected the request for {uri} as malformed (HTTP 400), most often a wrong signing region; "
        "set " + _REGION_KEYS + " to the bucket's region and check fs.s3a.endpoint",
    ),
    # --- buckets and paths --------------------------------------------------------------------------
    (
        r"Error Code: NoSuchBucket|UnknownStoreException|[Bb]ucket \S+ does not exist",
        "bucket {bucket} does not exist on {endpoint}; check the bucket name in the s3a:// URI and "
        + _ENDPOINT_KEYS
        + ", or create the bucket",
    ),
    (
        r"Status Code: 403|Error Code: AccessDenied|AccessDeniedException: s3a://",
        "access denied (HTTP 403) to {uri} by {endpoint}: the keys are wrong or lack permission on bucket "
        "{bucket}; " + _CREDENTIALS + " (and AWS_SESSION_TOKEN) and the bucket policy",
    ),
    (
        r"FileNotFoundException: No such file or directory: s3a://",
        "not found: {uri}; check the path, and that nothing deleted or replaced it during the run",
    ),
    (
        r"PATH_NOT_FOUND\]|Path does not exist",
        "input not found: {path}; check the path (files, directories and globs are accepted)",
    ),
]

# Values the messages name, pulled from the failure text: the first regex (in order) that matches gives
# group 1. Only these short, shape-checked fragments of the text ever reach a message.
EXTRACTORS: dict[str, tuple[str, ...]] = {
    "uri": (r"(s3a://[^\s'\"`,;()\[\]]+)",),
    "bucket": (
        r"s3a://([^/\s'\"`:,;()\[\]]+)",
        r"[Bb]ucket '?([a-z0-9][a-z0-9.-]+)'? does not exist",
        r"(?:Purging multipart uploads|[Bb]ucket) on ([a-z0-9][a-z0-9.-]+)",  # failures at filesystem start
        r"UnknownStoreException: `([a-z0-9][a-z0-9.-]+)'",
    ),
    "host": (
        r"Connect to ([^\s\[\]/]+)",
        r"UnknownHostException: ([^\s:]+)",
        r"Unable to execute HTTP request: ([^\s:]+): (?:Name or service not known|nodename nor servname)",
    ),
    "region": (r"expecting '([\w.-]+)'", r"AmazonS3Exception: '([\w.-]+)'\.", r"x-amz-bucket-region: ([\w-]+)"),
    "redirect": (r"redirect response to endpoint ([\w.-]+?)\.?\s",),
    "missing": (
        r"(?:NoSuchMethodError|AbstractMethodError|IncompatibleClassChangeError): '?(?:[\w.$\[\]]+ )?([\w.$<>]+)",
        r"NoClassDefFoundError: ([\w/$]+)",
        r"ClassNotFoundException: (?:Class )?([\w.$]+)",
    ),
    "providers": (r"No AWS Credentials provided by ([\w ]+?)\s*:",),
    "path": (r"Path does not exist: (\S+?)\.?(?:\s|$)", r"(s3a://[^\s'\"`,;()\[\]]+)"),
}
# What a message says when the text does not have the value.
DEFAULTS = {
    "uri": "the s3a path",
    "bucket": "the bucket",
    "host": "the endpoint's host",
    "region": "the bucket's region",
    "redirect": "",
    "missing": "a class",
    "providers": "the configured providers",
    "path": "the input",
}
_TRAILING = ":.,'`"  # punctuation that ends a message fragment, not the value


def failure_text(error: BaseException) -> str:
    """The whole text of a failure: the Python exceptions (with their __cause__/__context__) and every Java
    exception of each one's cause chain, one per line."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < CHAIN_LIMIT:
        seen.add(id(current))
        try:
            parts.append(str(current))  # a Py4JJavaError asks the JVM for its stack trace here
        except Exception:
            parts.append(repr(current))
        stack = getattr(current, "stackTrace", None)  # pyspark's captured exceptions keep the JVM trace here
        if isinstance(stack, str):
            parts.append(stack)
        java = getattr(current, "java_exception", None)
        if java is None:
            java = getattr(current, "_origin", None)  # pyspark's captured exceptions
        for _ in range(CHAIN_LIMIT):
            if java is None:
                break
            try:
                parts.append(str(java.toString()))
                cause = java.getCause()
            except Exception:  # a JVM that is gone, or not a Java object after all
                break
            java = cause
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def extract(name: str, text: str) -> str | None:
    """The value of EXTRACTORS[name] in the text, or None."""
    for pattern in EXTRACTORS.get(name, ()):
        match = re.search(pattern, text)
        if match and match.group(1).rstrip(_TRAILING):
            return match.group(1).rstrip(_TRAILING)
    return None


def configured_endpoint(bucket: str | None) -> str | None:
    """fs.s3a.endpoint for the bucket (per-bucket setting first) in the running Spark driver, if any."""
    try:
        from pyspark import SparkContext

        context = SparkContext._active_spark_context
        if context is None:
            return None
        conf = context._jsc.hadoopConfiguration()
        for key in ([f"fs.s3a.bucket.{bucket}.endpoint"] if bucket else []) + ["fs.s3a.endpoint"]:
            value = conf.getTrimmed(key)
            if value:
                return str(value)
    except Exception:  # no pyspark, no JVM: the message just names no endpoint
        return None
    return None


def _fields(template: str, text: str) -> dict[str, str]:
    names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    values = {name: extract(name, text) for name in names | {"bucket"} if name != "endpoint"}
    if values.get("missing"):
        values["missing"] = values["missing"].replace("/", ".")  # NoClassDefFoundError writes a/b/C
    fields = {name: value or DEFAULTS.get(name, "") for name, value in values.items()}
    if "redirect" in names and values.get("redirect"):
        fields["redirect"] = f" to {values['redirect']}"
    if "endpoint" in names:
        endpoint = configured_endpoint(values.get("bucket"))
        fields["endpoint"] = f"the S3 endpoint {endpoint}" if endpoint else "the S3 endpoint"
    return fields


def known_failure(text: str) -> str | None:
    """The one-line message of the first KNOWN_FAILURES row matching the text, or None."""
    for pattern, template in KNOWN_FAILURES:
        if re.search(pattern, text):
            message = template.format_map(_fields(template, text))
            return " ".join(message.split())  # one line, whatever the values held
    return None


def translate(error: BaseException) -> UserError | None:
    """A known Spark/JVM failure as a one-line UserError; None when it is not one we recognise."""
    from s3spark.bad_rows import malformed_row_in

    text = failure_text(error)
    bad_row = malformed_row_in(text)
    if bad_row:
        file, record = bad_row
        shown = record if len(record) <= 200 else record[:200] + "..."
        return UserError(
            f"malformed row in {file}: {shown!r}; fix the input, or rerun with --on-bad-rows drop "
            "or --on-bad-rows quarantine --quarantine URI"
        )
    message = known_failure(text)
    return UserError(message) if message is not None else None
