# syntax=docker/dockerfile:1
# MinIO for the compose demo, built from source at the same pinned version as scripts/local-s3 uses
# (lib/s3spark/local_s3.py MINIO_VERSION; tests/test_docker_files.py checks that they agree).
# Build from the repository root: docker build -f docker/minio.Dockerfile -t s3spark-minio:local .
ARG MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

FROM golang:1.24-bookworm AS build
ARG MINIO_VERSION
ENV CGO_ENABLED=0 GOBIN=/out
RUN go install -trimpath -ldflags "-s -w" "github.com/minio/minio@${MINIO_VERSION}"

FROM debian:bookworm-slim
# curl for the health check (GET /minio/health/ready)
# Debian packages follow the pinned base release (security updates on rebuild), not exact versions.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 1000 minio \
    && useradd --system --uid 1000 --gid minio --home-dir /data --shell /usr/sbin/nologin minio \
    && mkdir /data && chown minio:minio /data
COPY --from=build /out/minio /usr/local/bin/minio
ENV MINIO_UPDATE=off MINIO_CALLHOME_ENABLE=off
USER 1000
EXPOSE 9000 9001
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/minio"]
CMD ["server", "/data", "--address", ":9000", "--console-address", ":9001"]
