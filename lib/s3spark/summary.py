"""The run summary: one JSON line at the end of every run, optionally also written to a file."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class RunSummary:
    """What a run read, wrote, filtered, dropped and quarantined.

    rows_read = rows_written (or rows_matched, for jobs that only count) + rows_filtered_out
    + rows_dropped + rows_quarantined: nothing is lost without being counted.
    """

    job: str
    inputs: list[str] = field(default_factory=list)
    output: str | None = None
    profile: str | None = None
    status: str = "running"
    input_files: int | None = 0
    bytes_read: int = 0
    rows_read: int = 0
    rows_filtered_out: int = 0
    rows_written: int = 0
    rows_matched: int | None = None
    rows_quarantined: int = 0
    rows_dropped: int = 0
    bytes_written: int = 0
    quarantine: str | None = None
    batches: int | None = None
    # How the CSV was parsed: "split" (the fast path for unquoted lines) or "csv" (Spark's CSV parser).
    parser: str | None = None
    # Delta outputs only (left out of the JSON otherwise): the table version this run committed.
    table_version: int | None = None
    note: str | None = None
    seconds: float = 0.0
    rows_per_s: float = 0.0
    error: str | None = None
    started: float = field(default_factory=time.monotonic, repr=False)

    def finish(self, status: str, error: str | None = None) -> None:
        self.status = status
        self.error = error
        self.seconds = round(time.monotonic() - self.started, 3)
        self.rows_per_s = round(self.rows_read / self.seconds, 1) if self.seconds else 0.0

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("started")
        if data["table_version"] is None:
            data.pop("table_version")
        return data

    def emit(self, json_path: str | None = None) -> None:
        """Print the summary as one JSON line on stdout and, if asked, write it to a file."""
        line = json.dumps(self.to_dict(), sort_keys=False)
        print(line, flush=True)
        if json_path:
            path = Path(json_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(line + "\n", encoding="utf-8")

    def human(self) -> str:
        """A one-line account for people, printed to stderr."""
        files = f" from {self.input_files:,} files" if self.input_files is not None else ""
        parts = [f"{self.rows_read:,} rows read{files}"]
        if self.rows_filtered_out:
            parts.append(f"{self.rows_filtered_out:,} filtered out")
        if self.rows_dropped:
            parts.append(f"{self.rows_dropped:,} malformed dropped")
        if self.rows_quarantined:
            parts.append(f"{self.rows_quarantined:,} malformed quarantined to {self.quarantine}")
        if self.rows_matched is not None:
            parts.append(f"{self.rows_matched:,} matched")
        else:
            parts.append(f"{self.rows_written:,} written to {self.output}")
        if self.table_version is not None:
            parts.append(f"Delta table version {self.table_version}")
        if self.note:
            parts.append(self.note)
        return f"{self.job}: " + ", ".join(parts) + f" in {self.seconds:.1f}s ({self.rows_per_s:,.0f} rows/s)"


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
