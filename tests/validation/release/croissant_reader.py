"""Reads a release's croissant.json with mlcroissant and prints every record set's rows as JSON.

Run in its own process (``python -m tests.validation.release.croissant_reader FOLDER``): mlcroissant
logs through absl, which rebinds Python's logging to whatever stderr it first meets; inside the test
process that is a test's captured stream, closed when the test ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    return value


def main(folder: str) -> None:
    import mlcroissant as mlc

    metadata = json.loads((Path(folder) / "croissant.json").read_text(encoding="utf-8"))
    dataset = mlc.Dataset(jsonld=str(Path(folder) / "croissant.json"))  # validates the whole document
    out = {
        record_set["name"]: [_plain(row) for row in dataset.records(record_set=record_set["name"])]
        for record_set in metadata["recordSet"]
    }
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
