"""Provenance records of the artefacts (docs/formats.md, "Provenance"): what an artefact was built
from and how, so two results can be traced to the same data.

Every builder (entity index, surface-form store, TAGME artefact) writes one record into its
artefact before publishing it: the elquery version, the input files it read (path, size,
modification time, SHA-256), the options that shape the output, its build report and its start and
end times. A folder artefact holds it as ``provenance.json``; the surface-form store (one SQLite
file) as the ``provenance`` row of its ``meta`` table. The record and its reading
(:class:`Provenance`, :func:`read_provenance`, :func:`run_metadata`) live in
:mod:`elquery.kb.provenance` and are imported from there; this module writes records.

The *identity* of a record is its kind, elquery version, options and the (name, size, SHA-256)
of each input: two artefacts with the same identity were built from the same data the same way,
and :attr:`Provenance.id` is a digest of it. ``elquery build`` skips a stage whose artefact's
identity equals the one it would build now (:meth:`BuildPlan.matches`). Hashing a full dump is
slow, so a checksum is reused when a file's path, size and modification time equal those recorded
(the size + mtime test ``make`` relies on) or were already hashed in this process.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm import tqdm

from elquery.files import sha256_of
from elquery.kb.provenance import (FORMAT, ID_LENGTH, META_KEY, PROVENANCE_FILE, InputFile, Provenance, elquery_version,
                                   plain, read_provenance, run_metadata)

__all__ = ["FORMAT", "ID_LENGTH", "META_KEY", "PROVENANCE_FILE", "InputFile", "Provenance", "elquery_version",
           "read_provenance", "run_metadata", "fingerprints", "BuildPlan", "write_provenance"]

_checksums: dict[tuple[str, int, int], str] = {}
"""SHA-256 by (resolved path, size, mtime_ns), hashed in this process or read from a record (one
``elquery build`` reads the same dumps in three stages, and checks each before building it)."""


def _iso(seconds: float) -> str:
    """A POSIX time as ISO 8601 UTC, to the second."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _recorded(known: Provenance | None) -> dict[tuple[str, int, int], str]:
    return {} if known is None else {(f.path, f.size, f.mtime_ns): f.sha256 for f in known.inputs}


def fingerprints(paths: Sequence[Path], known: Provenance | None = None) -> tuple[InputFile, ...]:
    """Size, modification time and SHA-256 of each file; a checksum is taken from ``known`` (or
    this process's earlier ones) when path, size and mtime match, else streamed from the file
    (a progress bar on a terminal)."""
    _checksums.update(_recorded(known))
    recorded = _checksums
    stats = [(str(p.resolve()), p.stat()) for p in paths]
    todo = [(path, s) for path, s in stats if (path, s.st_size, s.st_mtime_ns) not in recorded]
    with tqdm(total=sum(s.st_size for _, s in todo), desc="checksums", unit="B", unit_scale=True,
              disable=None if todo else True) as bar:
        for path, s in todo:
            recorded[path, s.st_size, s.st_mtime_ns] = sha256_of(path, bar.update)
    return tuple(InputFile(path, s.st_size, s.st_mtime_ns, recorded[path, s.st_size, s.st_mtime_ns])
                 for path, s in stats)


@dataclass(frozen=True)
class BuildPlan:
    """What a builder is about to read and with which options: the part of its record known
    before it runs. Each builder makes its plan with one function that ``elquery build`` calls too."""

    kind: str
    inputs: tuple[Path, ...]
    options: dict[str, Any]
    started: float = field(default_factory=time.time, compare=False)

    def expected(self, known: Provenance | None = None) -> Provenance:
        """The record a build would write now, without its report and times."""
        return Provenance(self.kind, elquery_version(), fingerprints(self.inputs, known), plain(self.options),
                          {}, "", "", 0.0)

    def difference(self, recorded: Provenance | None) -> str | None:
        """Why an artefact with record ``recorded`` is not what this plan builds (None: it is)."""
        if recorded is None:
            return "no provenance record"
        expected = self.expected(recorded)
        if recorded.kind != expected.kind or recorded.elquery_version != expected.elquery_version:
            return f"built by elquery {recorded.elquery_version}, this is {expected.elquery_version}"
        if plain(recorded.options) != expected.options:
            changed = sorted(k for k in {*recorded.options, *expected.options}
                             if recorded.options.get(k) != expected.options.get(k))
            return f"options changed: {', '.join(changed)}"
        before = {(f.name, f.size, f.sha256) for f in recorded.inputs}
        now = {(f.name, f.size, f.sha256) for f in expected.inputs}
        if before != now:
            names = sorted({name for name, _, _ in before ^ now})
            return f"inputs changed: {', '.join(names)}"
        return None

    def record(self, report: Mapping[str, Any]) -> Provenance:
        """The complete record, at the end of a build."""
        expected = self.expected()
        finished = time.time()
        return Provenance(self.kind, expected.elquery_version, expected.inputs, expected.options, plain(dict(report)),
                          _iso(self.started), _iso(finished), round(finished - self.started, 3))


def write_provenance(artefact: Path, record: Provenance) -> None:
    """Store ``record`` in the artefact being built: ``provenance.json`` in a folder, a ``meta``
    row in an SQLite file."""
    text = json.dumps(record.to_json(), indent=1, sort_keys=True)
    if artefact.is_dir():
        (artefact / PROVENANCE_FILE).write_text(text + "\n", encoding="utf-8")
        return
    with sqlite3.connect(artefact) as db:
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, text))
    db.close()
