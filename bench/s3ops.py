"""What the harness does on S3 outside the timed processes: warm up, presign, count Parquet rows, clean up."""

from __future__ import annotations

from pathlib import Path

from bench.common import S3Store, split_s3

PRESIGN_S = 24 * 3600


def warm_object(store: S3Store, uri: str) -> int:
    """One untimed GET of the whole object (the server's page cache); returns its bytes."""
    bucket, key = split_s3(uri)
    body = store.client().get_object(Bucket=bucket, Key=key)["Body"]
    return sum(len(part) for part in body.iter_chunks(1 << 20))


def warm_file(path: Path) -> int:
    """Read a local file once (the page cache); returns its bytes."""
    total = 0
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 22):
            total += len(chunk)
    return total


def presign(store: S3Store, uri: str) -> str:
    """A presigned GET URL (SigV4) for the plain-HTTP unit; it carries a signature, not the secret."""
    bucket, key = split_s3(uri)
    return store.client().generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=PRESIGN_S
    )


def parquet_rows(store: S3Store, uri: str) -> tuple[int, int, int]:
    """Rows (from the footers), files and bytes of the Parquet files under an S3 prefix."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    fs = store.pyarrow_fs()
    prefix = uri.split("://", 1)[1].rstrip("/")
    rows = files = size = 0
    for info in fs.get_file_info(pafs.FileSelector(prefix, recursive=True, allow_not_found=True)):
        name = info.path.rsplit("/", 1)[-1]
        if (
            info.is_file
            and name.endswith(".parquet")
            and not name.startswith(("_", "."))
            and "/__magic" not in info.path
        ):
            with fs.open_input_file(info.path) as stream:
                rows += pq.ParquetFile(stream).metadata.num_rows
            files += 1
            size += info.size
    return rows, files, size


def delete_prefix(store: S3Store, uri: str) -> int:
    """Delete every object under a prefix and abort its unfinished multipart uploads; returns objects deleted."""
    bucket, prefix = split_s3(uri)
    prefix = prefix.rstrip("/") + "/"
    client = store.client()
    deleted = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
        if keys:
            client.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
            deleted += len(keys)
    for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
        for upload in page.get("Uploads", []):
            client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
    return deleted
