"""Prepare an S3 server for the compose demo: wait until it answers, create buckets, upload a folder.

Standard library only (SigV4 signing, path-style URLs), so it runs in the job image without extra packages:

    python docker/s3_bootstrap.py --bucket raw --bucket lake --upload data/pageviews s3://raw/pageviews/

Endpoint from --endpoint or $S3_ENDPOINT; keys from $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY (and
$AWS_SESSION_TOKEN); region from --region, $S3_REGION or us-east-1. Existing buckets of the same owner are fine,
uploads overwrite: running it twice gives the same result. Exit 0 when done, 1 with one `error:` line otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import hmac
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path


class S3Error(Exception):
    pass


def _sign(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


class S3:
    """Just enough of the S3 API: PUT bucket and PUT object, signed with AWS Signature Version 4."""

    def __init__(self, endpoint: str, access_key: str, secret_key: str, region: str, token: str | None = None):
        self.endpoint = endpoint.rstrip("/")
        self.host = urllib.parse.urlsplit(self.endpoint).netloc
        self.access_key, self.secret_key, self.region, self.token = access_key, secret_key, region, token

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        now = datetime.datetime.now(datetime.UTC)
        amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        payload = hashlib.sha256(body).hexdigest()
        uri = urllib.parse.quote(path, safe="/-_.~")
        headers = {"host": self.host, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
        if self.token:
            headers["x-amz-security-token"] = self.token
        names = sorted(headers)
        canonical = "\n".join([method, uri, "", *(f"{n}:{headers[n]}" for n in names), "", ";".join(names), payload])
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = _sign(_sign(_sign(_sign(("AWS4" + self.secret_key).encode(), day), self.region), "s3"), "aws4_request")
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
            f"SignedHeaders={';'.join(names)}, Signature={signature}"
        )
        del headers["host"]  # urllib sends the same value itself
        req = urllib.request.Request(self.endpoint + uri, data=body if method == "PUT" else None, method=method)
        for name, value in headers.items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def wait_ready(self, seconds: float) -> None:
        """Wait until the server answers HTTP at all (any status): it may still be starting."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.request("GET", "/")
                return
            except OSError as error:
                if time.monotonic() > deadline:
                    raise S3Error(f"{self.endpoint} did not answer within {seconds:.0f} s: {error}") from None
                time.sleep(1)

    def create_bucket(self, bucket: str) -> str:
        status, body = self.request("PUT", f"/{bucket}")
        if status == 200:
            return "created"
        if status == 409 and b"BucketAlreadyOwnedByYou" in body:
            return "exists"
        raise S3Error(f"creating bucket {bucket!r} failed: HTTP {status} {_code(body)}")

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        status, answer = self.request("PUT", f"/{bucket}/{key}", body)
        if status != 200:
            raise S3Error(f"uploading s3://{bucket}/{key} failed: HTTP {status} {_code(answer)}")


def _code(body: bytes) -> str:
    text = body.decode(errors="replace")
    start = text.find("<Code>")
    return text[start + 6 : text.find("</Code>")] if start >= 0 else text[:100]


def upload_folder(s3: S3, folder: Path, target: str) -> int:
    """Upload the files of a folder (not recursive) under s3://bucket/prefix/; returns how many."""
    parsed = urllib.parse.urlsplit(target)
    if parsed.scheme not in ("s3", "s3a") or not parsed.netloc:
        raise S3Error(f"upload target {target!r}: write it as s3://bucket/prefix/")
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    if not files:
        raise S3Error(f"nothing to upload in {folder}")
    prefix = parsed.path.lstrip("/")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    for path in files:
        s3.put_object(parsed.netloc, prefix + path.name, path.read_bytes())
    return len(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", default=os.environ.get("S3_ENDPOINT"), help="default: $S3_ENDPOINT")
    parser.add_argument("--region", default=os.environ.get("S3_REGION") or "us-east-1")
    parser.add_argument("--bucket", action="append", default=[], help="bucket to create (repeatable)")
    parser.add_argument(
        "--upload", nargs=2, action="append", default=[], metavar=("FOLDER", "S3_URI"), help="upload a folder's files"
    )
    parser.add_argument("--wait", type=float, default=60, help="seconds to wait for the server (default: 60)")
    args = parser.parse_args(argv)
    access_key, secret_key = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    try:
        if not args.endpoint:
            raise S3Error("no endpoint: pass --endpoint or set S3_ENDPOINT")
        if not (access_key and secret_key):
            raise S3Error("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        s3 = S3(args.endpoint, access_key, secret_key, args.region, os.environ.get("AWS_SESSION_TOKEN"))
        s3.wait_ready(args.wait)
        for bucket in args.bucket:
            print(f"bucket {bucket}: {s3.create_bucket(bucket)}")
        for folder, target in args.upload:
            print(f"uploaded {upload_folder(s3, Path(folder), target)} file(s) from {folder} to {target}")
    except S3Error as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
