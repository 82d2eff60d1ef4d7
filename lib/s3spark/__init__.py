"""s3spark: Spark jobs for CSV on S3-compatible object storage."""
