"""FACC1 count files: rows ``surface form<TAB>Freebase id<TAB>count`` (methods.md §3, FACC).

A Freebase id may be written ``/m/0abc``, ``m.0abc`` or ``http://rdf.freebase.com/ns/m.0abc``; all
are read as the canonical ``/m/0abc``. Files are plain, ``.gz`` or ``.bz2`` UTF-8 text. Rows are
read in blocks: a block of well-formed rows is split with string methods that run in C, and only a
block holding a malformed row is read again line by line, to count and report that row.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

from indexing.errors import ElqueryError
from indexing.ntriples import open_text

FREEBASE_NS = "http://rdf.freebase.com/ns/"
FACC_SUFFIXES = (".tsv", ".gz", ".bz2")
BLOCK_CHARS = 1 << 20
MAX_EXAMPLES = 5

_CANONICAL_MID = re.compile(r"/m/[0-9a-z_]+")
# Prefixes rewritten to "/m/" at the start of the id field (the only field after a tab that can
# start with a letter or "/": the count field is a number).
_MID_PREFIXES = ("\t" + FREEBASE_NS + "m.", "\tm.")


def canonical_mid(text: str) -> str | None:
    """``/m/0abc``, ``m.0abc`` or ``http://rdf.freebase.com/ns/m.0abc`` -> ``/m/0abc``; else None."""
    for prefix in ("/m/", "m.", FREEBASE_NS + "m."):
        if text.startswith(prefix):
            mid = "/m/" + text[len(prefix):]
            return mid if _CANONICAL_MID.fullmatch(mid) else None
    return None


def facc_files(paths: list[Path | str]) -> list[Path]:
    """Expand directories into their FACC files (``.tsv``, ``.gz``, ``.bz2``; sorted)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(FACC_SUFFIXES))
            if not found:
                raise ElqueryError(f"{path}: no FACC count files (.tsv, .gz, .bz2) in this directory")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise ElqueryError(f"{path}: no such file or directory")
    return files


@dataclass
class FaccReport:
    """Counts of a FACC ingestion; ``examples`` keeps the first few malformed rows and unmapped ids."""

    files: int = 0
    rows: int = 0
    mapped_rows: int = 0
    malformed_rows: int = 0
    unmapped_rows: int = 0
    unmapped_count: int = 0
    empty_form_rows: int = 0
    errors: list[str] = field(default_factory=list)
    unmapped_examples: list[str] = field(default_factory=list)

    def add(self, other: FaccReport) -> None:
        for name in ("files", "rows", "mapped_rows", "malformed_rows", "unmapped_rows", "unmapped_count", "empty_form_rows"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors = (self.errors + other.errors)[:MAX_EXAMPLES]
        self.unmapped_examples = (self.unmapped_examples + other.unmapped_examples)[:MAX_EXAMPLES]

    def malformed(self, where: str, reason: str) -> None:
        self.malformed_rows += 1
        if len(self.errors) < MAX_EXAMPLES:
            self.errors.append(f"{where}: {reason}")

    def unmapped(self, mid: str, count: int) -> None:
        self.unmapped_rows += 1
        self.unmapped_count += count
        if len(self.unmapped_examples) < MAX_EXAMPLES and mid not in self.unmapped_examples:
            self.unmapped_examples.append(mid)


@dataclass(frozen=True)
class Rows:
    """Parsed rows of one block: raw surface forms, DBpedia entity ids (-1: dropped) and counts."""

    forms: list[str]
    entities: np.ndarray
    counts: np.ndarray


def text_blocks(path: Path) -> Iterator[str]:
    """Whole lines of ``path``, about ``BLOCK_CHARS`` characters at a time."""
    with open_text(path) as handle:
        rest = ""
        while chunk := handle.read(BLOCK_CHARS):
            chunk = rest + chunk
            cut = chunk.rfind("\n") + 1
            rest = chunk[cut:]
            if cut:
                yield chunk[:cut]
        if rest:
            yield rest + "\n"


def _fast_rows(block: str) -> tuple[list[str], list[str], np.ndarray] | None:
    """Forms, canonical ids and counts of a block of well-formed rows; None if any row is not."""
    for prefix in _MID_PREFIXES:
        if prefix in block:
            block = block.replace(prefix, "\t/m/")
    lines = block.count("\n")
    fields = block.replace("\n", "\t").split("\t")
    if len(fields) != 3 * lines + 1:
        return None
    try:
        counts = np.fromiter(map(int, fields[2::3]), np.int64, lines)
    except (ValueError, OverflowError):
        return None
    if lines and counts.min() <= 0:
        return None
    return fields[0 : 3 * lines : 3], fields[1::3], counts


def _slow_rows(block: str, where: str, first_line: int, report: FaccReport) -> tuple[list[str], list[str], np.ndarray]:
    """Line by line: well-formed rows are returned, malformed ones counted and reported."""
    forms: list[str] = []
    mids: list[str] = []
    counts: list[int] = []
    for number, line in enumerate(block.split("\n"), first_line):
        if not line.strip():
            continue
        report.rows += 1
        parts = line.split("\t")
        if len(parts) != 3:
            report.malformed(f"{where}:{number}", f"expected 3 tab-separated fields, found {len(parts)}")
            continue
        form, raw_mid, raw_count = parts
        mid = canonical_mid(raw_mid)
        if mid is None:
            report.malformed(f"{where}:{number}", f"not a Freebase id: {raw_mid!r}")
            continue
        try:
            count = int(raw_count)
        except ValueError:
            count = 0
        if not 0 < count < 1 << 62:
            report.malformed(f"{where}:{number}", f"count is not a positive integer: {raw_count.strip()!r}")
            continue
        forms.append(form)
        mids.append(mid)
        counts.append(count)
    return forms, mids, np.array(counts, dtype=np.int64)


def read_facc(path: Path, mids: dict[str, int], report: FaccReport) -> Iterator[Rows]:
    """Stream the rows of one count file, with Freebase ids mapped to entity ids through ``mids``;
    rows with an unmapped id get entity -1 and are counted in ``report``."""
    report.files += 1
    line = 1
    try:
        for block in text_blocks(path):
            parsed = _fast_rows(block)
            if parsed is None:
                forms, row_mids, counts = _slow_rows(block, str(path), line, report)
            else:
                forms, row_mids, counts = parsed
                report.rows += len(forms)
            first_line, line = line, line + block.count("\n")
            entities = np.fromiter(map(mids.get, row_mids, repeat(-1)), np.int64, len(row_mids))
            for index in np.flatnonzero(entities < 0).tolist():
                mid = row_mids[index]
                if _CANONICAL_MID.fullmatch(mid):
                    report.unmapped(mid, int(counts[index]))
                else:  # only the fast path lets a malformed id through
                    report.malformed(f"{path}:{first_line + index}", f"not a Freebase id: {mid!r}")
            report.mapped_rows += int(np.count_nonzero(entities >= 0))
            yield Rows(forms, entities, counts)
    except FileNotFoundError as exc:
        raise ElqueryError(f"{path}: no such file") from exc
    except (EOFError, OSError, zlib.error) as exc:
        raise ElqueryError(f"{path}: truncated or corrupt file ({exc})") from exc
