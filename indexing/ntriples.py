"""Streaming reader for DBpedia dumps in N-Triples / Turtle-line form (methods.md §2).

Reads ``.ttl`` / ``.nt`` files, plain or compressed with bzip2 (``.bz2``) or gzip (``.gz``), one
triple per line. A malformed line is counted, reported (the first few, as ``file:line: reason``)
and skipped; every valid line is yielded. A truncated or corrupt compressed file is an error.
"""

from __future__ import annotations

import bz2
import gzip
import io
import queue
import re
import threading
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, cast

from elquery.base import ElqueryError
from elquery.kb.entities import DBPEDIA_RESOURCE
# kept here for compatibility (one release): moved to elquery.kb.entities
from elquery.kb.entities import canonical_entity_id, entity_id  # noqa: F401

DUMP_SUFFIXES = (".ttl", ".nt", ".ttl.bz2", ".nt.bz2", ".ttl.gz", ".nt.gz")


class ObjectKind(Enum):
    IRI = "iri"
    LITERAL = "literal"
    BLANK = "blank"


@dataclass(frozen=True, slots=True)
class Triple:
    """One statement. Blank nodes are written ``_:label``; IRIs are unescaped, without ``<>``."""

    subject: str
    predicate: str
    object: str
    kind: ObjectKind
    lang: str | None = None
    datatype: str | None = None


# N-Triples IRIREF: any character but #x00-#x20 and <>"{}|^`\, or a \u / \U escape; a blank
# node label may hold dots, not at its end. Whitespace between terms is space or tab only.
# The repetitions are written "unrolled" (a run of plain characters, then escapes each followed by
# such a run): the same language as (plain|escape)*, matched about four times as fast.
_IRI_CHARS = r"""[^\x00-\x20<>"{}|^`\\]"""
_IRI = rf"""{_IRI_CHARS}*(?:(?:\\u[0-9A-Fa-f]{{4}}|\\U[0-9A-Fa-f]{{8}}){_IRI_CHARS}*)*"""
_BLANK = r"""[^\x00-\x20<>"{}|^`\\.](?:[^\x00-\x20<>"{}|^`\\]*[^\x00-\x20<>"{}|^`\\.])?"""
_TRIPLE = re.compile(
    rf"""(?:<(?P<s>{_IRI})>|_:(?P<sb>{_BLANK}))[ \t]*
        <(?P<p>{_IRI})>[ \t]*
        (?:<(?P<o>{_IRI})>
          |_:(?P<ob>{_BLANK})
          |"(?P<lit>[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*)"(?:@(?P<lang>[A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^<(?P<dt>{_IRI})>)?)
        [ \t]*\.[ \t]*(?:\#.*)?$""",
    re.VERBOSE,
)
# What an IRI may not hold once its escapes are resolved: the characters N-Triples forbids raw in
# IRIs, and Unicode's line and paragraph separators. DBpedia's resource IRIs never hold them (it
# percent-encodes them), and an entity id made from one could not go into a line-based file
# (spill, entity_ids.txt, TREC runs): such a statement is counted as malformed, never changed.
_NOT_IN_IRI = re.compile(r"""[\x00-\x20<>"{}|^`\\\x85\u2028\u2029]""")
_INVALID_UTF8 = re.compile("[\udc80-\udcff]")
MAX_LINE_CHARS = 1 << 20
"""The longest dump line read (1 Mi characters); DBpedia's longest abstracts are far shorter."""
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape_match(match: re.Match[str]) -> str:
    hex4, hex8, char = match.groups()
    if char is None:
        code = int(hex4 or hex8, 16)
        if code > 0x10FFFF:
            raise ValueError(f"escape \\U{hex8} is beyond Unicode")
        return chr(code)
    if char not in _SIMPLE_ESCAPES:
        raise ValueError(f"unknown escape \\{char}")
    return _SIMPLE_ESCAPES[char]


def unescape(text: str) -> str:
    """Resolve N-Triples escapes: ``\\t \\b \\n \\r \\f \\" \\' \\\\ \\uXXXX \\UXXXXXXXX``.
    UTF-16 surrogate pairs written as two ``\\u`` escapes (as Java tools do) become one character;
    an unpaired surrogate is malformed (``ValueError``): it could not be written as UTF-8."""
    if "\\" not in text:
        return text
    result = _ESCAPE.sub(_unescape_match, text)
    if _SURROGATE.search(result):
        try:
            result = result.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            raise ValueError("unpaired UTF-16 surrogate escape") from None
    return result


# What a matched IRI must hold for _iri to have anything to resolve or refuse (the grammar already
# keeps the other characters of _NOT_IN_IRI out of it): an escape, invalid UTF-8, a line separator.
_IRI_SUSPECT = re.compile("[\\\\\udc80-\udcff\x85\u2028\u2029]")


def _iri(text: str) -> str:
    if _IRI_SUSPECT.search(text) is None and text != DBPEDIA_RESOURCE:
        return text
    if _INVALID_UTF8.search(text):
        raise ValueError("IRI is not valid UTF-8")
    iri = unescape(text)
    found = _NOT_IN_IRI.search(iri)
    if found:
        raise ValueError(f"IRI holds U+{ord(found.group()):04X}, which no entity id may hold")
    if iri == DBPEDIA_RESOURCE:
        raise ValueError("DBpedia resource IRI with an empty title")
    return iri


def parse_line(line: str) -> Triple | None:
    """Parse one line; ``None`` for a blank or comment line; ``ValueError`` if malformed (a line
    longer than :data:`MAX_LINE_CHARS` characters with its line end included)."""
    if len(line) > MAX_LINE_CHARS:
        raise ValueError(f"line longer than {MAX_LINE_CHARS} characters")
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    match = _TRIPLE.match(stripped)
    if match is None:
        raise ValueError("not an N-Triples statement")
    g = match.groupdict()
    subject = _iri(g["s"]) if g["s"] is not None else "_:" + g["sb"]
    predicate = _iri(g["p"])
    if g["o"] is not None:
        return Triple(subject, predicate, _iri(g["o"]), ObjectKind.IRI)
    if g["ob"] is not None:
        return Triple(subject, predicate, "_:" + g["ob"], ObjectKind.BLANK)
    datatype = _iri(g["dt"]) if g["dt"] is not None else None
    literal = g["lit"]
    if _INVALID_UTF8.search(literal):  # invalid bytes in a literal become U+FFFD (the text stays usable)
        literal = literal.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return Triple(subject, predicate, unescape(literal), ObjectKind.LITERAL, g["lang"], datatype)


# The lines most dumps are made of, as parse_line reads them: ``<s> <p> <o> .`` or ``<s> <p>
# "literal" .`` (a language tag or datatype allowed), single spaces, no escape, no comment, IRIs
# holding none of the characters _iri refuses and no bytes that are not UTF-8.
_PLAIN_IRI = r"""<([^\x00-\x20<>"{}|^`\\\x85\u2028\u2029\udc80-\udcff]*)>"""
_PLAIN = re.compile(
    rf"""{_PLAIN_IRI} {_PLAIN_IRI} (?:{_PLAIN_IRI}|"([^"\\\n\r\udc80-\udcff]*)"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^{_PLAIN_IRI})?)[ \t]*\.""")


def plain_statement(line: str) -> tuple[str, str, str, bool] | None:
    """(subject, predicate, object, object is a literal) of a line in the plain form most dump
    lines have, exactly as :func:`parse_line` reads it; None when ``parse_line`` must decide (an
    escape, a blank node, a comment, other spacing, bytes that are not UTF-8, a malformed line).
    A regex and no unescaping: the fast path of the scanners that want only a few predicates."""
    if len(line) > MAX_LINE_CHARS:
        return None
    match = _PLAIN.fullmatch(line.rstrip())
    if match is None:
        return None
    subject, predicate, iri, literal, datatype = match.groups()
    if DBPEDIA_RESOURCE in (subject, predicate, iri, datatype):
        return None
    return (subject, predicate, iri, False) if literal is None else (subject, predicate, literal, True)


def numbered_lines(handle: IO[str]) -> Iterator[tuple[int, str]]:
    """(number, line) of the lines of ``handle`` (from 1); a line longer than
    :data:`MAX_LINE_CHARS` is given as its first ``MAX_LINE_CHARS + 1`` characters (which
    :func:`parse_line` refuses) and the rest is skipped unread, a bounded piece at a time."""
    for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_CHARS + 1), ""), 1):
        if len(line) > MAX_LINE_CHARS:
            _rest_of_line(handle, line)
        yield number, line


@dataclass
class FileReport:
    """Counts for one dump file; ``errors`` keeps the first few malformed lines."""

    path: str
    triples: int = 0
    malformed: int = 0
    errors: list[str] = field(default_factory=list)

    def record_malformed(self, number: int, reason: object, max_errors: int) -> None:
        """Count a malformed line; keep ``file:line: reason`` for the first ``max_errors``."""
        self.malformed += 1
        if len(self.errors) < max_errors:
            self.errors.append(f"{self.path}:{number}: {reason}")


@dataclass
class ParseReport:
    """Per-file counts of a reading job, and the first ``max_errors`` malformed lines of each."""

    max_errors: int = 5
    files: dict[str, FileReport] = field(default_factory=dict)

    @property
    def triples(self) -> int:
        return sum(f.triples for f in self.files.values())

    @property
    def malformed(self) -> int:
        return sum(f.malformed for f in self.files.values())

    def file(self, path: Path | str) -> FileReport:
        """The report of one file, created on first use."""
        return self.files.setdefault(str(path), FileReport(str(path)))

    def summary_lines(self) -> list[str]:
        lines = [f"{f.path}: {f.triples} triples, {f.malformed} malformed lines" for f in self.files.values()]
        lines += [e for f in self.files.values() for e in f.errors]
        return lines


def open_text(path: Path) -> IO[str]:
    """Open a plain, ``.bz2`` or ``.gz`` file as UTF-8 text: a byte order mark is dropped, lines
    end at CR, LF or CR LF (the N-Triples EOL), and invalid bytes stay visible (as lone
    surrogates): an IRI holding them is malformed (an entity id is never changed), a literal gets
    U+FFFD in their place."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", errors="surrogateescape", newline=None)


def open_binary(path: Path) -> bz2.BZ2File | gzip.GzipFile | io.BufferedReader:
    """Open a plain, ``.bz2`` or ``.gz`` file for reading its (decompressed) bytes."""
    name = path.name
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


_END = object()
CHUNK_BYTES = 1 << 20


def dump_bytes(path: Path | str, chunk_bytes: int = CHUNK_BYTES, ahead: int = 4) -> Iterator[bytes]:
    """The decompressed bytes of a dump file, in pieces of ``chunk_bytes``, read (and
    decompressed) by a thread up to ``ahead`` pieces ahead of the caller: bz2/zlib decompression
    releases the GIL, so it runs while the caller works on the previous piece (in Java, say). A
    missing, truncated or corrupt file is the :class:`ElqueryError` that :func:`read_triples`
    raises for it."""
    path = Path(path)
    pieces: queue.Queue[object] = queue.Queue(ahead)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                pieces.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            with open_binary(path) as handle:
                for piece in iter(lambda: handle.read(chunk_bytes), b""):
                    if not put(piece):
                        return
            put(_END)
        except FileNotFoundError:
            put(ElqueryError(f"{path}: no such file"))
        except (EOFError, OSError, zlib.error) as exc:
            put(ElqueryError(f"{path}: truncated or corrupt file ({exc})"))

    reader = threading.Thread(target=read, name=f"read {path.name}", daemon=True)
    reader.start()
    try:
        while (item := pieces.get()) is not _END:
            if isinstance(item, ElqueryError):
                raise item
            yield cast(bytes, item)  # the reader puts bytes, an ElqueryError or _END
    finally:
        stop.set()
        reader.join()


def read_triples(path: Path | str, report: ParseReport | None = None) -> Iterator[Triple]:
    """Stream the triples of one dump file, counting and skipping malformed lines."""
    path = Path(path)
    report = report if report is not None else ParseReport()
    file_report = report.file(path)
    try:
        with open_text(path) as handle:
            for number, line in numbered_lines(handle):
                try:
                    triple = parse_line(line)
                except ValueError as exc:
                    file_report.record_malformed(number, exc, report.max_errors)
                    continue
                if triple is not None:
                    file_report.triples += 1
                    yield triple
    except FileNotFoundError as exc:
        raise ElqueryError(f"{path}: no such file") from exc
    except (EOFError, OSError, zlib.error) as exc:
        raise ElqueryError(f"{path}: truncated or corrupt file ({exc})") from exc


def _rest_of_line(handle: IO[str], start: str) -> None:
    """Skip the rest of an over-long line, a bounded piece at a time."""
    piece = start
    while piece and not piece.endswith(("\n", "\r")):
        piece = handle.readline(MAX_LINE_CHARS)


def expand_files(paths: Iterable[Path | str], suffixes: tuple[str, ...], kind: str, recursive: bool = False) -> list[Path]:
    """Files as given, and directories expanded into their files ending in one of ``suffixes``
    (``recursive``: in subdirectories too; sorted, for deterministic order); a missing path or a
    directory without any is an error."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in (path.rglob("*") if recursive else path.iterdir())
                           if p.is_file() and p.name.endswith(suffixes))
            if not found:
                raise ElqueryError(f"{path}: no {kind} in this directory")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise ElqueryError(f"{path}: no such file or directory")
    return files


def dump_files(paths: Iterable[Path | str]) -> list[Path]:
    """Dump files, directories expanded (sorted, for deterministic order)."""
    return expand_files(paths, DUMP_SUFFIXES, ".ttl/.nt dump files (plain, .bz2 or .gz)")
