"""The limits: the whole object with one boto3 GET, boto3's parallel download, and plain http.client."""

from __future__ import annotations

import http.client
import os
import ssl
from urllib.parse import urlsplit

from bench.tools import Source

BUFFER = 1 << 20


class _Counter:
    """A write-only sink that only counts bytes."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> int:
        self.bytes += len(data)
        return len(data)


def boto3_get(src: Source) -> int:
    """One GET, the body streamed to nowhere: bytes read."""
    bucket, key = src.bucket_key
    body = src.store.client().get_object(Bucket=bucket, Key=key)["Body"]
    total = 0
    for part in body.iter_chunks(BUFFER):
        total += len(part)
    return total


def boto3_download(src: Source) -> int:
    """boto3's managed download (ranged GETs on threads, default TransferConfig) into a counting sink."""
    bucket, key = src.bucket_key
    sink = _Counter()
    src.store.client().download_fileobj(bucket, key, sink)
    return sink.bytes


def http_get(src: Source) -> int:
    """One GET of a presigned URL ($BENCH_PRESIGNED_URL, made by the harness) with http.client only."""
    url = urlsplit(os.environ["BENCH_PRESIGNED_URL"])
    if url.scheme == "https":
        context = ssl.create_default_context(cafile=os.environ.get("S3_CA_BUNDLE") or None)
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(url.netloc, context=context)
    else:
        conn = http.client.HTTPConnection(url.netloc)
    conn.request("GET", f"{url.path}?{url.query}")
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"GET returned HTTP {response.status} {response.reason}")
    buffer = bytearray(BUFFER)
    total = 0
    while read := response.readinto(buffer):
        total += read
    conn.close()
    return total
