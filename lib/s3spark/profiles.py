"""Profiles: layered Spark properties files under conf/profiles, validated at load time.

A spec such as ``minio`` or ``minio,./my.conf`` means: base.conf, then each layer left to right; later
keys override earlier ones, except the JVM option keys in ``APPEND_KEYS``, which accumulate. Values may
use ``${VAR}`` and ``${VAR:-default}`` (default when VAR is unset or empty). Every problem is a
``UserError`` naming ``file:line``.

CLI: ``python -m s3spark.profiles show SPEC | write SPEC OUTFILE | list``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from s3spark import s3a_keys
from s3spark.errors import UserError
from s3spark.paths import PROFILE_DIR, REPO_ROOT

BASE = "base"
HADOOP_PREFIX = "spark.hadoop."
APPEND_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
SECRET_KEYS = ("fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token")
REDACTED = "********"

_SECRET_NAME = re.compile(r"secret|password|token|access[._-]?key|credential|encryption[._-]key", re.IGNORECASE)
_SECRET_JVM_OPTION = re.compile(r"""(-D[^=\s]*(?:password|secret|token)[^=\s]*=)("[^"]*"|'[^']*'|\S+)""", re.IGNORECASE)
_TRUSTSTORE = re.compile(r"""-Djavax\.net\.ssl\.trustStore=("[^"]*"|'[^']*'|\S+)""")
# ${NAME} / ${NAME:-default}; ${hadoop.tmp.dir}-style references (dots) are left for Hadoop to expand.
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_ENV_UNCLOSED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?$")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass
class Profile:
    """The merged settings of a profile spec: ordered properties and the ``file:line`` each came from."""

    spec: str
    properties: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)

    def hadoop_options(self) -> dict[str, str]:
        """The ``spark.hadoop.*`` settings as Hadoop keys (prefix removed)."""
        n = len(HADOOP_PREFIX)
        return {k[n:]: v for k, v in self.properties.items() if k.startswith(HADOOP_PREFIX)}


@dataclass
class _Setting:
    key: str
    value: str
    origin: str


# --- Java properties format -------------------------------------------------------------------------


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join continuation lines as java.util.Properties does; skip blanks and comments."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, line = i + 1, lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if _continues(line):
            line = line[:-1]
        out.append((start, line))
    return out


def _continues(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split(line: str) -> tuple[str, str]:
    """Split a logical line into (raw key, raw value) the way Properties.load does."""
    i, n = 0, len(line)
    while i < n and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:]
    stripped = rest.lstrip(" \t\f")
    if stripped[:1] in ("=", ":"):
        stripped = stripped[1:].lstrip(" \t\f")
    return key, stripped


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 == len(s):
            out.append(c)
            i += 1
            continue
        nxt = s[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2 : i + 6]):
            out.append(chr(int(s[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    # \uXXXX pairs may encode a surrogate pair (characters outside the BMP)
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for i, c in enumerate(s):
        if c == "\\":
            out.append("\\\\")
        elif c in "\t\n\r\f":
            out.append("\\" + "tnrf"["\t\n\r\f".index(c)])
        elif c == " " and (is_key or i == 0):
            out.append("\\ ")
        elif c in "=:#!" and (is_key or i == 0):
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        else:  # ASCII-only output reads back the same whether read as UTF-8 or ISO-8859-1
            out.extend(f"\\u{u:04x}" for u in _utf16_units(c))
    return "".join(out)


def _utf16_units(c: str) -> list[int]:
    b = c.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(b[j : j + 2], "big") for j in range(0, len(b), 2)]


def read_properties(path: Path) -> dict[str, str]:
    """Read a Java/Spark properties file as Spark does (values trimmed); no validation, no env expansion."""
    props: dict[str, str] = {}
    for _, line in _logical_lines(Path(path).read_text(encoding="utf-8")):
        key, value = _split(line)
        props[_unescape(key)] = _unescape(value).strip()
    return props


def write_properties(props: Mapping[str, str], path: Path) -> None:
    """Write ``props`` in order as a properties file for ``spark-submit --properties-file`` (mode 0600)."""
    text = "".join(f"{_escape(k, True)}={_escape(v, False)}\n" for k, v in props.items())
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # it may hold expanded values such as a truststore password
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write("# Spark properties generated by s3spark (profiles merged, env expanded); do not edit.\n")
        f.write(text)


# --- loading ----------------------------------------------------------------------------------------


def available_profiles() -> list[str]:
    """Names of the profiles in conf/profiles that a spec can name (base is always applied, so not listed)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.conf") if p.stem != BASE)


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _resolve(item: str) -> Path:
    if item.endswith(".conf") or "/" in item or os.sep in item:
        path = Path(item).expanduser()
        if not path.is_file():
            raise UserError(f"profile file '{item}' not found (a spec item with '/' or '.conf' is a path)")
        return path
    path = PROFILE_DIR / f"{item}.conf"
    if not _NAME.fullmatch(item) or not path.is_file():
        raise UserError(
            f"unknown profile '{item}': no {_display(PROFILE_DIR)}/{item}.conf; available: "
            f"{', '.join(available_profiles())} (or pass a path to a .conf file)"
        )
    return path


def _layers(spec: str, after_base: Sequence[Path] = ()) -> list[Path]:
    items = [s.strip() for s in spec.split(",")] if spec.strip() else []
    if any(not s for s in items):
        raise UserError(f"profile spec '{spec}' has an empty item; use names or paths separated by commas")
    paths = [PROFILE_DIR / f"{BASE}.conf", *after_base] + [_resolve(s) for s in items]
    unique: list[Path] = []
    for p in paths:  # base named again, or a layer named twice, applies once (keeps appends sane)
        if p.resolve() not in [u.resolve() for u in unique]:
            unique.append(p)
    return unique


def _expand(value: str, environ: Mapping[str, str], where: str) -> str:
    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        got = environ.get(name)
        if got:
            return got
        if default is not None:
            return default
        if got is None:
            raise UserError(
                f"{where}: environment variable {name} is not set (used as ${{{name}}} with no "
                f"default); export it, or write ${{{name}:-default}}"
            )
        return got

    for m in re.finditer(r"\$\{", value):
        if _ENV_UNCLOSED.match(value, m.start()):
            raise UserError(f"{where}: unterminated '${{' in value {value!r}; write ${{VAR}} or ${{VAR:-default}}")
    return _ENV_REF.sub(sub, value)


def _parse_layer(path: Path, environ: Mapping[str, str]) -> list[_Setting]:
    shown = _display(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read profile {shown}: {e}") from e
    settings = []
    for lineno, line in _logical_lines(text):
        where = f"{shown}:{lineno}"
        raw_key, raw_value = _split(line)
        key, value = _unescape(raw_key), _unescape(raw_value).strip()
        if not value:
            raise UserError(
                f"{where}: '{key}' has no value; write 'key value' on one line (or remove the line to keep the default)"
            )
        if re.search(r"\s#", value):
            raise UserError(
                f"{where}: '{key}' has a '#' after its value; properties files have no "
                "inline comments (the text would become part of the value): put the comment "
                "on its own line"
            )
        value = _expand(value, environ, where)
        _check_setting(key, value, where)
        settings.append(_Setting(key, value, where))
    return settings


# --- validation -------------------------------------------------------------------------------------


def _bucket_split(key: str) -> list[tuple[str, str]]:
    """For fs.s3a.bucket.B.REST: every (bucket, fs.s3a.REST) reading; bucket names may contain dots."""
    parts = key[len(s3a_keys.BUCKET_PREFIX) :].split(".")
    return [(".".join(parts[:i]), "fs.s3a." + ".".join(parts[i:])) for i in range(1, len(parts))]


def _s3a_target(key: str) -> tuple[str | None, str]:
    """(bucket or None, the global fs.s3a key it is validated as); for unknown keys, the likeliest reading."""
    if not key.startswith(s3a_keys.BUCKET_PREFIX):
        return None, key
    readings = _bucket_split(key)
    for bucket, rest in readings:
        if s3a_keys.kind_of(rest) is not None:
            return bucket, rest
    return readings[0] if readings else (None, key)


def _suggest(key: str) -> str:
    """A ' did you mean ...?' clause for an unknown fs.s3a key (per-bucket keys get per-bucket advice)."""
    best: tuple[float, str] = (0.0, "")
    readings = _bucket_split(key) if key.startswith(s3a_keys.BUCKET_PREFIX) else []
    for bucket, rest in readings or [("", key)]:
        for cand in difflib.get_close_matches(rest, s3a_keys.S3A_KEYS, n=1, cutoff=0.75):
            score = difflib.SequenceMatcher(None, rest, cand).ratio()
            full = f"{s3a_keys.BUCKET_PREFIX}{bucket}.{cand[len('fs.s3a.') :]}" if bucket else cand
            best = max(best, (score, full))
    return f"; did you mean '{best[1]}'?" if best[1] else " (Hadoop 3.3.4's hadoop-aws does not read it)"


def _check_setting(key: str, value: str, where: str) -> None:
    if not key.startswith("spark."):
        hint = (
            f"; in a Spark properties file Hadoop keys need the prefix: '{HADOOP_PREFIX}{key}'"
            if key.startswith(("fs.", "mapreduce.", "hadoop."))
            else "; spark-submit ignores keys that do not start with 'spark.'"
        )
        raise UserError(f"{where}: '{key}' is not a Spark property{hint}")
    hkey = key[len(HADOOP_PREFIX) :] if key.startswith(HADOOP_PREFIX) else None
    if hkey is not None and hkey.startswith("fs.s3a."):
        bucket, target = _s3a_target(hkey)
        if target in SECRET_KEYS:
            raise UserError(
                f"{where}: {hkey} must not be set in a profile (profiles are shared and printed); put "
                "credentials in the environment as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and "
                "AWS_SESSION_TOKEN), or in a Hadoop credential provider (JCEKS) named by "
                "fs.s3a.security.credential.provider.path"
            )
        kind = s3a_keys.kind_of(target)
        if kind is None:
            raise UserError(f"{where}: unknown S3A key '{hkey}'{_suggest(hkey)}")
        if bucket is None and target in s3a_keys.BUCKET_ONLY:
            rest = target[len("fs.s3a.") :]
            raise UserError(
                f"{where}: {target} is only read per bucket; write {HADOOP_PREFIX}{s3a_keys.BUCKET_PREFIX}BUCKET.{rest}"
            )
        problem = kind.problem(value)
        if problem:
            raise UserError(f"{where}: {hkey} expects {problem}, got {value!r}")
    elif key in s3a_keys.SPARK_KINDS:
        problem = s3a_keys.SPARK_KINDS[key].problem(value)
        if problem:
            raise UserError(f"{where}: {key} expects {problem}, got {value!r}")
    if key in APPEND_KEYS:
        for m in _TRUSTSTORE.finditer(value):
            store = m.group(1).strip("'\"")
            if not Path(store).is_file():
                raise UserError(
                    f"{where}: truststore '{store}' (javax.net.ssl.trustStore in {key}) does not exist; "
                    "point it (S3_TRUSTSTORE for onprem) at a JKS/PKCS12 file that holds your CA, e.g. "
                    "built with: keytool -importcert -noprompt -alias s3-ca -file ca.pem "
                    "-keystore truststore.jks -storepass changeit"
                )


def _check_pools(props: Mapping[str, str], origins: Mapping[str, str], order: Mapping[str, int]) -> None:
    """fs.s3a.connection.maximum must exceed fs.s3a.threads.max, globally and for each bucket."""
    threads_key, conns_key = HADOOP_PREFIX + "fs.s3a.threads.max", HADOOP_PREFIX + "fs.s3a.connection.maximum"
    scopes = {""}
    for k in props:
        if k.startswith(HADOOP_PREFIX + s3a_keys.BUCKET_PREFIX):
            bucket, target = _s3a_target(k[len(HADOOP_PREFIX) :])
            if bucket and target in ("fs.s3a.threads.max", "fs.s3a.connection.maximum"):
                scopes.add(bucket)
    for bucket in sorted(scopes):

        def effective(global_key: str, b: str = bucket) -> tuple[str | None, int]:
            per = global_key.replace("fs.s3a.", f"fs.s3a.bucket.{b}.", 1) if b else global_key
            for k in (per, global_key):
                if k in props:
                    return k, s3a_keys.java_int(props[k])
            return None, int(s3a_keys.HADOOP_DEFAULTS[global_key[len(HADOOP_PREFIX) :]])

        tk, threads = effective(threads_key)
        ck, conns = effective(conns_key)
        if (tk is None and ck is None) or conns > threads:
            continue
        last = max((k for k in (tk, ck) if k), key=lambda k: order[k])
        scope = f" for bucket '{bucket}'" if bucket else ""
        raise UserError(
            f"{origins[last]}: fs.s3a.connection.maximum ({conns}) must be above fs.s3a.threads.max "
            f"({threads}){scope}: otherwise the S3A thread pool starves, uploads and reads wait for free "
            f'HTTP connections ("Timeout waiting for connection from pool"); set connection.maximum to '
            f"at least threads.max + 16 ({threads + 16}) or lower threads.max"
            + ("" if tk and ck else " (the other value is Hadoop's default)")
        )


# --- public API -------------------------------------------------------------------------------------


def load_profile(spec: str, environ: Mapping[str, str] | None = None, after_base: Sequence[Path] = ()) -> Profile:
    """Load base, then ``after_base`` (files the caller adds, such as the local-master snippet), then the
    layers of ``spec`` (names or .conf paths, comma-separated); expand and validate."""
    env = os.environ if environ is None else environ
    profile = Profile(spec=spec)
    order: dict[str, int] = {}  # key -> sequence number of the setting that set it last
    settings = [s for path in _layers(spec, after_base) for s in _parse_layer(path, env)]
    for seq, s in enumerate(settings):
        old = profile.properties.get(s.key)
        if s.key in APPEND_KEYS and old:
            profile.properties[s.key] = f"{old} {s.value}"
            profile.origins[s.key] = f"{profile.origins[s.key]}, {s.origin}"
        else:
            profile.properties[s.key] = s.value
            profile.origins[s.key] = s.origin
        order[s.key] = seq
    _check_pools(profile.properties, profile.origins, order)
    return profile


def redact(props: Mapping[str, str]) -> dict[str, str]:
    """A copy safe to print: secret-looking keys masked, and ``-D...password=`` values in JVM options."""
    out = {}
    for k, v in props.items():
        if _SECRET_NAME.search(k):
            out[k] = REDACTED
        elif k.endswith("JavaOptions"):
            out[k] = _SECRET_JVM_OPTION.sub(lambda m: m.group(1) + REDACTED, v)
        else:
            out[k] = v
    return out


def _first_comment(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("#"):
            return line.lstrip().lstrip("#").strip()
    return ""


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: show, write or list profiles; ``error: ...`` and exit 2 on a UserError."""
    parser = argparse.ArgumentParser(prog="python -m s3spark.profiles", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the effective settings, redacted, with their origin")
    show.add_argument("spec")
    write = sub.add_parser("write", help="write the merged properties file for spark-submit")
    write.add_argument("spec")
    write.add_argument("outfile", type=Path)
    sub.add_parser("list", help="list profiles with their description")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for name in [BASE, *available_profiles()]:
                note = " (always applied first)" if name == BASE else ""
                print(f"{name:<10} {_first_comment(PROFILE_DIR / f'{name}.conf')}{note}")
        elif args.command == "show":
            profile = load_profile(args.spec)
            shown = redact(profile.properties)
            lines = [(f"{k} {shown[k]}", profile.origins[k]) for k in sorted(shown)]
            width = max((len(a) for a, _ in lines if len(a) <= 80), default=0)
            for text, origin in lines:
                print(f"{text:<{width}}   # from {origin}")
        else:
            write_properties(load_profile(args.spec).properties, args.outfile)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
