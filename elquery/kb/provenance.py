"""Reading the provenance records of the artefacts (docs/formats.md, "Provenance"): what an
artefact was built from and how, so two results can be traced to the same data.

A folder artefact holds its record as ``provenance.json``; the surface-form store (one SQLite
file) as the ``provenance`` row of its ``meta`` table. :func:`read_provenance` reads either, and
:func:`run_metadata` names the records of the artefacts a run used. The build pipelines write the
records (``elquery.indexing.provenance``: ``write_provenance``, ``BuildPlan``).

The *identity* of a record is its kind, elquery version, options and the (name, size, SHA-256)
of each input: two artefacts with the same identity were built from the same data the same way,
and :attr:`Provenance.id` is a digest of it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError

FORMAT = "elquery-provenance/1"
PROVENANCE_FILE = "provenance.json"
META_KEY = "provenance"
ID_LENGTH = 16


def elquery_version() -> str:
    return metadata.version("elquery")


def plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples become lists, paths strings), so options compare
    equal whether just computed or read from a record."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


@dataclass(frozen=True)
class InputFile:
    """One input file as it was when read."""

    path: str
    size: int
    mtime_ns: int
    sha256: str

    @property
    def name(self) -> str:
        return Path(self.path).name


@dataclass(frozen=True)
class Provenance:
    """The provenance record of one artefact."""

    kind: str
    elquery_version: str
    inputs: tuple[InputFile, ...]
    options: dict[str, Any]
    report: dict[str, Any]
    started: str
    finished: str
    seconds: float
    format: str = FORMAT

    def identity(self) -> dict[str, Any]:
        """What makes two builds the same: kind, version, options and each input's (name, size,
        SHA-256) -- not where the inputs were, nor when they were read."""
        return {"kind": self.kind, "elquery_version": self.elquery_version, "options": plain(self.options),
                "inputs": sorted([f.name, f.size, f.sha256] for f in self.inputs)}

    @property
    def id(self) -> str:
        """A digest of :meth:`identity` (the first :data:`ID_LENGTH` hex digits of its SHA-256)."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]

    def to_json(self) -> dict[str, Any]:
        return plain({"format": self.format, "id": self.id, **{k: v for k, v in asdict(self).items() if k != "format"}})

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> Provenance:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ElqueryError(f"{where}: not an elquery provenance record (format {FORMAT})")
        try:
            return cls(data["kind"], data["elquery_version"], tuple(InputFile(**f) for f in data["inputs"]),
                       dict(data["options"]), dict(data["report"]), data["started"], data["finished"],
                       float(data["seconds"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ElqueryError(f"{where}: malformed provenance record ({exc})") from None

    def lines(self) -> list[str]:
        """The record, human-readable (``elquery info``)."""
        lines = [f"kind: {self.kind}", f"id: {self.id}", f"elquery version: {self.elquery_version}",
                 f"built: {self.started} .. {self.finished} ({self.seconds:.1f} s)",
                 "options: " + json.dumps(self.options, sort_keys=True), f"inputs: {len(self.inputs)} files"]
        lines += [f"  {f.path}  {f.size} bytes  sha256 {f.sha256}" for f in self.inputs]
        lines.append("report: " + json.dumps(self.report, sort_keys=True))
        return lines


def read_provenance(artefact: Path | str) -> Provenance | None:
    """The record of an artefact (folder or surface-form store); None when it has none (built
    before records were kept); a one-line error when it is not there."""
    artefact = Path(artefact)
    if artefact.is_dir():
        path = artefact / PROVENANCE_FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ElqueryError(f"{path}: not valid JSON ({exc})") from None
        return Provenance.from_json(data, str(path))
    if not artefact.is_file():
        raise ElqueryError(f"{artefact}: no such artefact")
    try:
        with sqlite3.connect(artefact.resolve().as_uri() + "?mode=ro", uri=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
        db.close()
    except sqlite3.DatabaseError:
        raise ElqueryError(f"{artefact}: not an elquery artefact (a folder or a surface-form store)") from None
    return None if row is None else Provenance.from_json(json.loads(row[0]), f"{artefact} (meta {META_KEY})")


def run_metadata(command: str, artefacts: Mapping[str, Path | str | None]) -> dict[str, Any]:
    """The provenance ``elquery link`` and ``rank`` write with their results: the command,
    elquery's version and the id of each artefact used (null for one without a record)."""
    ids: dict[str, str | None] = {}
    for name, path in artefacts.items():
        if path is not None:
            record = read_provenance(path)
            ids[name] = None if record is None else record.id
    return {"command": command, "elquery_version": elquery_version(), "artefacts": ids}
