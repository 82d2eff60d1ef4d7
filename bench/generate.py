"""Generate a page-view CSV of a given size, deterministically, and put it on S3 once.

    .venv/bin/python -m bench.generate --size 1g            # local file + s3://s3spark/bench/pageviews-1g.csv
    .venv/bin/python -m bench.generate --size 20m --no-upload

The format of Wikipedia's hourly page-view dumps: ``project url count bytes``, space separated, no header,
about 60% of rows with count 1, percent-encoded titles of 1 to 3 words (the vocabulary of
``s3spark.sample_data``), 30% with a numeric suffix. Rows are made with numpy and Arrow in chunks of
``CHUNK_ROWS``, each from its own seed, so a smaller file is a prefix of a larger one with the same seed and
the same seed and size always give the same bytes. The file is cut at the last whole line within the size.

A stamp next to the file (``.json``) records rows, rows with count 1 and bytes: the expected answers the
harness checks every tool against. Both steps are skipped when their result is already in place (the stamp,
and an object of the same size carrying the same fingerprint in its metadata).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass
from functools import lru_cache
from itertools import product
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.common import DEFAULT_BUCKET, DEFAULT_PROFILE, data_dir, object_key, parse_size, size_label, store_from_env

GENERATOR_VERSION = 1  # bump when the bytes for a seed change
CHUNK_ROWS = 1_000_000
SHARE_COUNT_1 = 0.6
SHARE_SUFFIX = 0.3
MAX_COUNT = 10_000_000  # the Pareto tail stays well inside INT
FINGERPRINT_KEY = "s3spark-bench"  # object metadata: x-amz-meta-s3spark-bench


@dataclass(frozen=True)
class Dataset:
    """A generated file and what it holds."""

    path: Path
    label: str
    seed: int
    target: int
    bytes: int
    rows: int
    rows_count_1: int
    version: int = GENERATOR_VERSION

    @property
    def fingerprint(self) -> str:
        text = f"v{self.version} seed={self.seed} target={self.target} bytes={self.bytes}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def stamp(self) -> dict:
        data = asdict(self)
        data["path"] = str(self.path)
        return data


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[pa.Array, pa.Array, int]:
    """Every 1-, 2- and 3-word title stem, percent-encoded (Arrow array), the projects, and the word count."""
    from s3spark.sample_data import PROJECTS, WORDS

    words = [quote(word, safe="_:()!,'*") for word in WORDS]
    stems = list(words)
    for length in (2, 3):
        stems += ["_".join(combo) for combo in product(words, repeat=length)]
    return pa.array(stems), pa.array(PROJECTS), len(words)


def chunk(index: int, seed: int = 0, rows: int = CHUNK_ROWS) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Chunk ``index`` of the stream for ``seed``: its bytes, each line's end offset, and which lines have count 1."""
    stems, projects, words = _vocabulary()
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, index])))
    length = rng.choice(np.array([1, 1, 1, 2, 3]), rows)
    first = np.select([length == 1, length == 2], [0, words], words + words**2)
    span = np.select([length == 1, length == 2], [words, words**2], words**3)
    url = stems.take(pa.array(first + (rng.random(rows) * span).astype(np.int64)))
    suffix = pc.cast(pa.array(rng.integers(1, 99_999, rows, endpoint=True)), pa.string())
    url = pc.if_else(pa.array(rng.random(rows) < SHARE_SUFFIX), pc.binary_join_element_wise(url, suffix, "_"), url)
    one = rng.random(rows) < SHARE_COUNT_1
    tail = np.minimum(np.floor(rng.pareto(1.2, rows)) + 2, MAX_COUNT)
    count = np.where(one, 1, tail).astype(np.int64)
    size = count * rng.integers(2_000, 90_000, rows, endpoint=True)
    project = projects.take(pa.array(rng.integers(0, len(projects), rows)))
    text = [pc.cast(pa.array(values), pa.string()) for values in (count, size)]
    lines = pc.binary_join_element_wise(project, url, *text, " ")
    lines = pc.binary_join_element_wise(lines, pa.scalar(""), "\n")  # each line ends with a newline
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=rows + 1, offset=lines.offset * 4)
    data = lines.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]]
    return data, (offsets[1:] - offsets[0]).astype(np.int64), one


def generate(path: Path, target: int, seed: int = 0, label: str | None = None) -> Dataset:
    """Write about ``target`` bytes of page-view lines to ``path`` (atomically) and its stamp; return what it holds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    written = rows = ones = 0
    with tmp.open("wb") as out:
        index, last = 0, False
        while written < target and not last:
            data, ends, one = chunk(index, seed)
            index += 1
            room = target - written
            if len(data) > room:  # the last chunk: whole lines only
                keep = int(np.searchsorted(ends, room, side="right"))
                data, one, last = data[: int(ends[keep - 1])] if keep else b"", one[:keep], True
            out.write(data)
            written += len(data)
            rows += len(one)
            ones += int(one.sum())
    os.replace(tmp, path)
    dataset = Dataset(path, label or size_label(str(target)), seed, target, written, rows, ones)
    stamp_path(path).write_text(json.dumps(dataset.stamp(), indent=1) + "\n")
    return dataset


def stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def load_stamp(path: Path) -> Dataset | None:
    """The dataset a stamp describes, if the stamp is current and the file still matches it."""
    try:
        data = json.loads(stamp_path(path).read_text())
        data["path"] = Path(data["path"])
        dataset = Dataset(**data)
    except (OSError, ValueError, TypeError):
        return None
    if dataset.version != GENERATOR_VERSION or not path.exists() or path.stat().st_size != dataset.bytes:
        return None
    return dataset


def ensure_local(size: str, seed: int = 0, directory: Path | None = None) -> Dataset:
    """The local file for a size and seed: generated unless a matching one is there."""
    label = size_label(size)
    name = f"pageviews-{label}.csv" if seed == 0 else f"pageviews-{label}-seed{seed}.csv"
    path = (directory or data_dir()) / name
    dataset = load_stamp(path)
    target = parse_size(size)
    if dataset and dataset.seed == seed and dataset.target == target:
        return dataset
    print(f"generating {path} ({label})...", file=sys.stderr, flush=True)
    return generate(path, target, seed, label)


def s3_key(dataset: Dataset) -> str:
    return object_key(dataset.label if dataset.seed == 0 else f"{dataset.label}-seed{dataset.seed}")


def ensure_uploaded(dataset: Dataset, bucket: str, profile: str = DEFAULT_PROFILE, key: str | None = None) -> str:
    """Upload the file to ``s3://bucket/key`` (multipart) unless the same content is there; return the URI."""
    from boto3.s3.transfer import TransferConfig
    from botocore.exceptions import ClientError

    key = key or s3_key(dataset)
    client = store_from_env(profile).client()
    try:
        client.head_bucket(Bucket=bucket)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket"):
            raise
        client.create_bucket(Bucket=bucket)
    try:
        head = client.head_object(Bucket=bucket, Key=key)
        same = head["ContentLength"] == dataset.bytes
        if same and head.get("Metadata", {}).get(FINGERPRINT_KEY) == dataset.fingerprint:
            return f"s3://{bucket}/{key}"
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey"):
            raise
    print(f"uploading {dataset.path} to s3://{bucket}/{key}...", file=sys.stderr, flush=True)
    config = TransferConfig(multipart_threshold=64 * 1024**2, multipart_chunksize=64 * 1024**2, max_concurrency=4)
    client.upload_file(
        str(dataset.path), bucket, key, ExtraArgs={"Metadata": {FINGERPRINT_KEY: dataset.fingerprint}}, Config=config
    )
    return f"s3://{bucket}/{key}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--size", required=True, help="file size: 20m, 200m, 1g, 4g (powers of 1024)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, help="where the file goes (default $S3SPARK_CACHE/bench)")
    parser.add_argument("--bucket", default=DEFAULT_BUCKET, help=f"S3 bucket (default {DEFAULT_BUCKET})")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="profile whose endpoint to use without $S3_ENDPOINT")
    parser.add_argument("--no-upload", action="store_true", help="only the local file")
    args = parser.parse_args(argv)
    dataset = ensure_local(args.size, args.seed, args.dir)
    summary = dataset.stamp()
    if not args.no_upload:
        summary["uri"] = ensure_uploaded(dataset, args.bucket, args.profile)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
