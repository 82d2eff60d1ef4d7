"""Deterministic synthetic page-view data in the format of Wikipedia's hourly pageview dumps.

Lines are `project url count bytes`, space separated, no header (pageviews-YYYYMMDD-HH0000.gz). About 60% of
rows have count 1, as in the real dumps; titles are percent-encoded and of varied length.
"""

from __future__ import annotations

import argparse
import gzip
import random
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

PROJECTS = ["en", "en.m", "de", "de.m", "fr", "ja", "es", "ru", "it", "zh", "commons.m", "pl", "pt", "nl"]
WORDS = [
    "Main_Page",
    "Special:Search",
    "Python_(programming_language)",
    "Apache_Spark",
    "Object_storage",
    "Amazon_S3",
    "Berlin",
    "Zürich",
    "São_Paulo",
    "東京",
    "Москва",
    "Café",
    "Ångström",
    "Data_lake",
    "Parquet",
    "Delta_Lake",
    "Hadoop",
    "List_of_rivers",
    "2024_in_film",
    "Ceph_(software)",
    "MinIO",
    "Wikipedia:About",
    "Portal:Science",
    "Talk:Mathematics",
    "Help:Contents",
    "C++",
    "Rock_&_roll",
]


def pageview_lines(rows: int, seed: int = 0) -> Iterator[str]:
    """`rows` page-view lines; the same seed always gives the same lines."""
    rng = random.Random(seed)
    for _ in range(rows):
        title = "_".join(rng.choice(WORDS) for _ in range(rng.choice((1, 1, 1, 2, 3))))
        if rng.random() < 0.3:
            title += f"_{rng.randint(1, 99999)}"
        url = quote(title, safe="_:()!,'*")
        count = 1 if rng.random() < 0.6 else int(rng.paretovariate(1.2)) + 1
        size = count * rng.randint(2_000, 90_000)
        yield f"{rng.choice(PROJECTS)} {url} {count} {size}"


def write_pageviews(path: Path, rows: int, seed: int = 0) -> Path:
    """Write page-view lines to a file, gzip-compressed when the name ends in .gz."""
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8", newline="\n") as stream:
        for line in pageview_lines(rows, seed):
            stream.write(line + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Write synthetic page-view data (dump format).")
    parser.add_argument("path", type=Path, help="output file; .gz compresses")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_pageviews(args.path, args.rows, args.seed)


if __name__ == "__main__":
    main()
