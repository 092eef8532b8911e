"""Provenance records of the artefacts (docs/formats.md, "Provenance"): what an artefact was built
from and how, so two results can be traced to the same data.

Every builder (entity index, surface-form store, TAGME artefact) writes one record into its
artefact before publishing it: the elquery version, the input files it read (path, size,
modification time, SHA-256), the options that shape the output, its build report and its start and
end times. A folder artefact holds it as ``provenance.json``; the surface-form store (one SQLite
file) as the ``provenance`` row of its ``meta`` table. :func:`read_provenance` reads either.

The *identity* of a record is its kind, elquery version, options and the (name, size, SHA-256)
of each input: two artefacts with the same identity were built from the same data the same way,
and :attr:`Provenance.id` is a digest of it. ``elquery build`` skips a stage whose artefact's
identity equals the one it would build now (:meth:`BuildPlan.matches`). Hashing a full dump is
slow, so a checksum is reused when a file's path, size and modification time equal those recorded
(the size + mtime test ``make`` relies on) or were already hashed in this process.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from tqdm import tqdm

from elquery.base import ElqueryError
from elquery.files import atomic_output, sha256_of

FORMAT = "elquery-provenance/1"
PROVENANCE_FILE = "provenance.json"
META_KEY = "provenance"
ID_LENGTH = 16

_checksums: dict[tuple[str, int, int], str] = {}
"""SHA-256 by (resolved path, size, mtime_ns), hashed in this process or read from a record (one
``elquery build`` reads the same dumps in three stages, and checks each before building it)."""


def elquery_version() -> str:
    return metadata.version("elquery")


def _iso(seconds: float) -> str:
    """A POSIX time as ISO 8601 UTC, to the second."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _plain(value: Any) -> Any:
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
        return {"kind": self.kind, "elquery_version": self.elquery_version, "options": _plain(self.options),
                "inputs": sorted([f.name, f.size, f.sha256] for f in self.inputs)}

    @property
    def id(self) -> str:
        """A digest of :meth:`identity` (the first :data:`ID_LENGTH` hex digits of its SHA-256)."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]

    def to_json(self) -> dict[str, Any]:
        return _plain({"format": self.format, "id": self.id, **{k: v for k, v in asdict(self).items() if k != "format"}})

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
        return Provenance(self.kind, elquery_version(), fingerprints(self.inputs, known), _plain(self.options),
                          {}, "", "", 0.0)

    def difference(self, recorded: Provenance | None) -> str | None:
        """Why an artefact with record ``recorded`` is not what this plan builds (None: it is)."""
        if recorded is None:
            return "no provenance record"
        expected = self.expected(recorded)
        if recorded.kind != expected.kind or recorded.elquery_version != expected.elquery_version:
            return f"built by elquery {recorded.elquery_version}, this is {expected.elquery_version}"
        if _plain(recorded.options) != expected.options:
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
        return Provenance(self.kind, expected.elquery_version, expected.inputs, expected.options, _plain(dict(report)),
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
