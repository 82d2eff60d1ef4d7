"""Every ``fs.s3a.*`` key that Hadoop 3.3.4 reads, with the kind of value it accepts.

Source: the pinned ``hadoop-aws-3.3.4.jar`` (sha256 in conf/jars/hadoop-3.3.4.txt), read with
``javap``: the string constants of ``org.apache.hadoop.fs.s3a.Constants`` and of the committer, audit,
select, S3Guard and auth classes, and for each key the ``Configuration`` getter that reads it
(``getInt``, ``getLong``, ``getTimeDuration``, ``getLongBytes``, ``getBoolean``, ``getTrimmed``, ...).
Enum values come from the code that parses them; defaults from core-default.xml in
hadoop-client-api-3.3.4. ``fs.s3a.impl`` and ``fs.s3a.impl.disable.cache`` are hadoop-common keys.

The getter decides what a value may look like, which is why the kinds differ from what the names
suggest: ``fs.s3a.connection.timeout`` is read with ``getInt`` (so ``60s`` fails), while
``fs.s3a.retry.interval`` is read with ``getTimeDuration`` (so ``500ms`` works).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_INT = re.compile(r"[+-]?\d+|-?0[xX][0-9a-fA-F]+")  # Integer.parseInt / Long.parseLong, and getInt's hex
_DURATION = re.compile(r"[+-]?\d+\s*(ns|us|ms|s|m|h|d)?", re.IGNORECASE)  # Configuration.getTimeDuration
_HADOOP_SIZE = re.compile(r"[+-]?\d+[kmgtpe]?", re.IGNORECASE)  # TraditionalBinaryPrefix.string2long
_SPARK_INT = re.compile(r"[+-]?\d+")  # Scala's toInt
_SPARK_SIZE = re.compile(r"\d+(b|kb?|mb?|gb?|tb?|pb?)?", re.IGNORECASE)  # JavaUtils.byteStringAs
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?")
_CLASS = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")


@dataclass(frozen=True)
class Kind:
    """The values a key accepts. ``name``: bool, int, millis, duration, size, float, str, enum, classlist."""

    name: str
    reader: str = ""  # the Hadoop/Spark getter, named in error messages
    unit: str = ""  # int: what the number counts; duration: the unit of a number without suffix
    values: tuple[str, ...] = ()  # enum values
    case_sensitive: bool = False  # enum: whether the reader compares case-sensitively
    bits: int = 64  # int/millis: 32 for getInt
    hadoop: bool = True  # False for Spark's own parsers (different size syntax, no hex)

    def problem(self, value: str) -> str | None:
        """None if ``value`` is acceptable, else what the key expects (completes "KEY expects ...")."""
        v = value.strip()
        who = "Hadoop 3.3.4" if self.hadoop else "Spark"
        by = f" ({who} reads it with {self.reader})" if self.reader else ""
        if self.name == "str":
            return None
        if self.name == "bool":
            if v.lower() in ("true", "false"):
                return None
            return (
                f"true or false{by[:-1]}, which silently falls back to the default)"
                if self.hadoop
                else (f"true or false{by}")
            )
        if self.name in ("int", "millis"):
            syntax = _INT if self.hadoop else _SPARK_INT
            if syntax.fullmatch(v) and _fits(v, self.bits):
                return None
            if self.name == "millis":
                return f"integer milliseconds{by}"
            return f"a plain integer{f' number of {self.unit}' if self.unit else ''}{by}"
        if self.name == "duration":
            if _DURATION.fullmatch(v):
                return None
            return f"a duration: an integer with an optional ns/us/ms/s/m/h/d suffix, {self.unit} if none{by}"
        if self.name == "size":
            if self.hadoop:
                if _HADOOP_SIZE.fullmatch(v):
                    return None
                return f"a byte size: an integer with an optional k/m/g/t/p suffix such as 64M{by}"
            return None if _SPARK_SIZE.fullmatch(v) else f"a byte size such as 128m or 134217728{by}"
        if self.name == "float":
            return None if _FLOAT.fullmatch(v) else f"a number{by}"
        if self.name == "enum":
            if self.case_sensitive:
                return None if v in self.values else f"one of {', '.join(self.values)} (case-sensitive)"
            ok = v.lower() in (x.lower() for x in self.values)
            return None if ok else f"one of {', '.join(self.values)}"
        if self.name == "classlist":
            names = [c.strip() for c in v.split(",") if c.strip()]
            single = self.reader == "getClass"
            if all(_CLASS.fullmatch(c) for c in names) and (len(names) == 1 or not single):
                return None
            return "a Java class name" if single else "a comma-separated list of Java class names"
        raise ValueError(f"unknown kind {self.name}")


def java_int(value: str) -> int:
    """Parse an integer as Hadoop's getInt/getLong do: decimal with optional sign, or 0x hex."""
    low = value.strip().lower()
    if low.startswith(("0x", "-0x")):
        return -int(low[3:], 16) if low[0] == "-" else int(low[2:], 16)
    return int(low)


def _fits(v: str, bits: int) -> bool:
    return -(2 ** (bits - 1)) <= java_int(v) < 2 ** (bits - 1)


BOOL = Kind("bool", "getBoolean")
INT = Kind("int", "getInt", bits=32)
LONG = Kind("int", "getLong")
MILLIS_INT = Kind("millis", "getInt", bits=32)
MILLIS_LONG = Kind("millis", "getLong")
SECONDS_LONG = Kind("int", "getLong", unit="seconds")
BYTES_INT = Kind("int", "getInt", unit="bytes", bits=32)
DURATION_MS = Kind("duration", "getTimeDuration", unit="milliseconds")
DURATION_S = Kind("duration", "getTimeDuration", unit="seconds")
SIZE = Kind("size", "getLongBytes")
FLOAT = Kind("float", "getFloat")
STR = Kind("str")
CLASS = Kind("classlist", "getClass")
CLASSES = Kind("classlist", "getClasses")


def enum(*values: str, case_sensitive: bool = False) -> Kind:
    """An enumeration, compared as the Hadoop code that parses it does."""
    return Kind("enum", values=values, case_sensitive=case_sensitive)


S3A_KEYS: dict[str, Kind] = {
    # hadoop-common: the FileSystem binding
    "fs.s3a.impl": CLASS,
    "fs.s3a.impl.disable.cache": BOOL,
    # credentials and authentication (access.key, secret.key, session.token are refused in profiles)
    "fs.s3a.access.key": STR,
    "fs.s3a.secret.key": STR,
    "fs.s3a.session.token": STR,
    "fs.s3a.aws.credentials.provider": CLASSES,
    "fs.s3a.security.credential.provider.path": STR,
    "fs.s3a.assumed.role.arn": STR,
    "fs.s3a.assumed.role.credentials.provider": CLASSES,
    "fs.s3a.assumed.role.policy": STR,
    "fs.s3a.assumed.role.session.duration": DURATION_S,
    "fs.s3a.assumed.role.session.name": STR,
    "fs.s3a.assumed.role.sts.endpoint": STR,
    "fs.s3a.assumed.role.sts.endpoint.region": STR,
    "fs.s3a.delegation.token.binding": CLASS,
    "fs.s3a.custom.signers": STR,
    "fs.s3a.signing-algorithm": STR,
    "fs.s3a.s3.signing-algorithm": STR,
    # 3.3.4 builds these two without the dot ("fs.s3a." + "ddb" + "signing-algorithm"): sic
    "fs.s3a.ddbsigning-algorithm": STR,
    "fs.s3a.stssigning-algorithm": STR,
    # endpoint and connection
    "fs.s3a.endpoint": STR,
    "fs.s3a.endpoint.region": STR,
    "fs.s3a.path.style.access": BOOL,
    "fs.s3a.accesspoint.arn": STR,  # only read per bucket: fs.s3a.bucket.NAME.accesspoint.arn
    "fs.s3a.accesspoint.required": BOOL,
    "fs.s3a.bucket.probe": INT,
    "fs.s3a.connection.maximum": INT,
    "fs.s3a.connection.ssl.enabled": BOOL,
    "fs.s3a.connection.establish.timeout": MILLIS_INT,
    "fs.s3a.connection.timeout": MILLIS_INT,
    "fs.s3a.connection.request.timeout": DURATION_S,
    "fs.s3a.socket.send.buffer": BYTES_INT,
    "fs.s3a.socket.recv.buffer": BYTES_INT,
    "fs.s3a.ssl.channel.mode": enum("default_jsse", "default_jsse_with_gcm", "default", "openssl"),
    "fs.s3a.user.agent.prefix": STR,
    "fs.s3a.proxy.host": STR,
    "fs.s3a.proxy.port": INT,
    "fs.s3a.proxy.username": STR,
    "fs.s3a.proxy.password": STR,
    "fs.s3a.proxy.domain": STR,
    "fs.s3a.proxy.workstation": STR,
    # retries
    "fs.s3a.attempts.maximum": INT,
    "fs.s3a.retry.limit": INT,
    "fs.s3a.retry.interval": DURATION_MS,
    "fs.s3a.retry.throttle.limit": INT,
    "fs.s3a.retry.throttle.interval": DURATION_MS,
    "fs.s3a.experimental.aws.s3.throttling": BOOL,
    # thread pools
    "fs.s3a.threads.max": INT,
    "fs.s3a.threads.keepalivetime": SECONDS_LONG,
    "fs.s3a.max.total.tasks": INT,
    "fs.s3a.executor.capacity": INT,
    # writing
    "fs.s3a.fast.upload": BOOL,  # deprecated: uploads are always block-based
    "fs.s3a.fast.upload.buffer": enum("disk", "array", "bytebuffer", case_sensitive=True),
    "fs.s3a.fast.upload.active.blocks": INT,
    "fs.s3a.fast.buffer.size": STR,  # declared in Constants, not read by 3.3.4
    "fs.s3a.multipart.size": SIZE,
    "fs.s3a.multipart.threshold": SIZE,
    "fs.s3a.multipart.purge": BOOL,
    "fs.s3a.multipart.purge.age": SECONDS_LONG,
    "fs.s3a.internal.upload.part.count.limit": LONG,
    "fs.s3a.buffer.dir": STR,
    "fs.s3a.acl.default": STR,
    "fs.s3a.downgrade.syncable.exceptions": BOOL,
    "fs.s3a.multiobjectdelete.enable": BOOL,
    "fs.s3a.bulk.delete.page.size": INT,
    "fs.s3a.directory.marker.retention": enum("delete", "keep", "authoritative"),
    # reading and listing
    "fs.s3a.block.size": SIZE,
    "fs.s3a.readahead.range": SIZE,
    "fs.s3a.experimental.input.fadvise": enum("normal", "sequential", "random"),
    "fs.s3a.paging.maximum": INT,
    "fs.s3a.list.version": INT,
    "fs.s3a.etag.checksum.enabled": BOOL,
    "fs.s3a.change.detection.mode": enum("server", "client", "warn", "none"),
    "fs.s3a.change.detection.source": enum("etag", "versionid", "none"),
    "fs.s3a.change.detection.version.required": BOOL,
    # encryption (the old server-side-encryption names are deprecated aliases)
    "fs.s3a.encryption.algorithm": STR,
    "fs.s3a.encryption.key": STR,
    "fs.s3a.server-side-encryption-algorithm": STR,
    "fs.s3a.server-side-encryption.key": STR,
    # plug-ins
    "fs.s3a.s3.client.factory.impl": CLASS,
    # auditing
    "fs.s3a.audit.enabled": BOOL,
    "fs.s3a.audit.service.classname": CLASS,
    "fs.s3a.audit.request.handlers": CLASSES,
    "fs.s3a.audit.referrer.enabled": BOOL,
    "fs.s3a.audit.referrer.filter": STR,
    "fs.s3a.audit.reject.out.of.span.operations": BOOL,
    # committers (CommitConstants)
    "fs.s3a.committer.name": enum("file", "directory", "partitioned", "magic", "staging", case_sensitive=True),
    "fs.s3a.committer.magic.enabled": BOOL,
    "fs.s3a.committer.threads": INT,
    "fs.s3a.committer.abort.pending.uploads": BOOL,
    "fs.s3a.committer.generate.uuid": BOOL,
    "fs.s3a.committer.require.uuid": BOOL,
    "fs.s3a.committer.uuid": STR,
    "fs.s3a.committer.uuid.source": STR,
    "fs.s3a.committer.staging.conflict-mode": enum("fail", "append", "replace"),
    "fs.s3a.committer.staging.tmp.path": STR,
    "fs.s3a.committer.staging.unique-filenames": BOOL,
    "fs.s3a.committer.staging.abort.pending.uploads": BOOL,
    # S3 Select
    "fs.s3a.select.enabled": BOOL,
    "fs.s3a.select.errors.include.sql": BOOL,
    "fs.s3a.select.sql": STR,
    "fs.s3a.select.input.format": STR,
    "fs.s3a.select.input.compression": STR,
    "fs.s3a.select.input.csv.comment.marker": STR,
    "fs.s3a.select.input.csv.field.delimiter": STR,
    "fs.s3a.select.input.csv.header": STR,
    "fs.s3a.select.input.csv.quote.character": STR,
    "fs.s3a.select.input.csv.quote.escape.character": STR,
    "fs.s3a.select.input.csv.record.delimiter": STR,
    "fs.s3a.select.output.format": STR,
    "fs.s3a.select.output.csv.field.delimiter": STR,
    "fs.s3a.select.output.csv.quote.character": STR,
    "fs.s3a.select.output.csv.quote.escape.character": STR,
    "fs.s3a.select.output.csv.quote.fields": STR,
    "fs.s3a.select.output.csv.record.delimiter": STR,
    # S3Guard (deprecated in 3.3.x, still read)
    "fs.s3a.authoritative.path": STR,
    "fs.s3a.metadatastore.impl": CLASS,
    "fs.s3a.metadatastore.authoritative": BOOL,
    "fs.s3a.metadatastore.fail.on.write.error": BOOL,
    "fs.s3a.metadatastore.metadata.ttl": DURATION_MS,
    "fs.s3a.s3guard.cli.prune.age": MILLIS_LONG,
    "fs.s3a.s3guard.consistency.retry.interval": DURATION_MS,
    "fs.s3a.s3guard.consistency.retry.limit": INT,
    "fs.s3a.s3guard.disabled.warn.level": STR,
    "fs.s3a.s3guard.local.max_records": INT,
    "fs.s3a.s3guard.local.ttl": MILLIS_INT,
    "fs.s3a.s3guard.ddb.background.sleep": DURATION_MS,
    "fs.s3a.s3guard.ddb.client.factory.impl": CLASS,
    "fs.s3a.s3guard.ddb.max.retries": INT,
    "fs.s3a.s3guard.ddb.region": STR,
    "fs.s3a.s3guard.ddb.table": STR,
    "fs.s3a.s3guard.ddb.table.capacity.read": LONG,
    "fs.s3a.s3guard.ddb.table.capacity.write": LONG,
    "fs.s3a.s3guard.ddb.table.create": BOOL,
    "fs.s3a.s3guard.ddb.table.sse.cmk": STR,
    "fs.s3a.s3guard.ddb.table.sse.enabled": BOOL,
    "fs.s3a.s3guard.ddb.throttle.retry.interval": DURATION_MS,
    # fault injection (InconsistentAmazonS3Client, for tests)
    "fs.s3a.failinject.inconsistency.key.substring": STR,
    "fs.s3a.failinject.inconsistency.msec": MILLIS_LONG,
    "fs.s3a.failinject.inconsistency.probability": FLOAT,
    "fs.s3a.failinject.throttle.probability": FLOAT,
}

# Families whose suffix is free-form: any key under these prefixes is a string.
S3A_PREFIXES: tuple[str, ...] = ("fs.s3a.s3guard.ddb.table.tag.",)

# Keys Hadoop reads only in their per-bucket form fs.s3a.bucket.NAME.<rest>.
BUCKET_ONLY: frozenset[str] = frozenset({"fs.s3a.accesspoint.arn"})

# Defaults that matter to cross-key checks (core-default.xml of Hadoop 3.3.4).
HADOOP_DEFAULTS: dict[str, str] = {"fs.s3a.threads.max": "64", "fs.s3a.connection.maximum": "96"}

BUCKET_PREFIX = "fs.s3a.bucket."

# Spark keys outside fs.s3a whose kind is checked (their existence is not).
SPARK_KINDS: dict[str, Kind] = {
    "spark.sql.shuffle.partitions": Kind("int", "intConf", bits=32, hadoop=False),
    "spark.sql.files.maxPartitionBytes": Kind("size", "bytesConf", hadoop=False),
    "spark.sql.execution.arrow.pyspark.enabled": Kind("bool", "booleanConf", hadoop=False),
    "spark.ui.showConsoleProgress": Kind("bool", "booleanConf", hadoop=False),
}


def kind_of(key: str) -> Kind | None:
    """The kind of a global ``fs.s3a.*`` key (no bucket form), or None if Hadoop 3.3.4 does not know it."""
    if key in S3A_KEYS:
        return S3A_KEYS[key]
    return STR if key.startswith(S3A_PREFIXES) else None
