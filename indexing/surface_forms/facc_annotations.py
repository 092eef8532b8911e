"""Raw FACC1 annotations -> commonness counts ``form<TAB>Freebase mid<TAB>count`` (methods.md §3).

FACC1 (Freebase Annotations of the ClueWeb Corpora, v1; lemurproject.org/clueweb09/FACC1 and
clueweb12/FACC1) is published as one line per annotation, eight tab-separated columns::

    clueweb09-en0000-00-04720  UTF-8  Food and Drug Administration  21312  21340  0.9998256  0.00057182228  /m/032mx

the ClueWeb document id, the document's encoding, the mention as it appears in the page, its
begin and end byte offsets in the page, the posterior probability of the annotation given the
mention and its context, the probability of the entity given the context alone, and the Freebase
mid. The files come plain, ``.gz`` or ``.bz2``, and inside ``.tar``/``.tar.gz``/``.tgz``
archives (the form the collections are distributed in); directories are searched recursively.

Counting: each (normalized mention, mid) pair is counted once per annotation; with
``min_posterior`` > 0, only annotations whose posterior (column 6) is at least that value. The
mention goes through the store's one normalization (:func:`elquery.kb.normalize.normalize`);
a mention that normalizes to nothing is counted as ``empty_form`` and dropped. Lines end at
``\\n`` (a ``\\r`` just before it is dropped). A line is *malformed* when it is longer than
:data:`MAX_LINE_BYTES` (it is then skipped as it is read, never held whole), holds another carriage
return, does not have eight columns, its offsets are not digits, its posterior is not a number in
[0, 1], its mid is not ``/m/[0-9a-z_]+``, or its mention is not UTF-8 (any other bytes are
allowed: a binary file is only malformed lines). Malformed lines are counted per file and skipped,
and the first few are quoted with their line numbers (numbered within each member of an archive).
:func:`annotation_pair` is these rules for one line (for other engines, e.g. Spark);
:func:`count_file` applies them a block at a time.

A file or archive member that cannot be read to its end (truncated, not the compression its name
says, a damaged archive) is an :class:`~elquery.base.ElqueryError` naming it (and the member): the
file is refused as a whole, the lines read before the damage are not kept, and the job writes
nothing, so that a counts file never holds part of an input.

Memory is bounded whatever the input size: each worker (one per file, ``workers`` at a time)
sums raw (mention, mid) byte pairs with pyarrow's hash aggregation (:func:`count_file`), holding
about ``memory_mb`` of rows and distinct pairs (pairs estimated at :data:`BYTES_PER_PAIR` each);
when that is full, the distinct mentions are normalized (ASCII ones by pyarrow at once,
:func:`_forms`), the pairs summed and written sorted to a run file (Arrow IPC batches), and the
sums are dropped. Reading and parsing take about 250 MB more per worker. The runs of every file
are merged (k-way, a step of many rows at a time, :func:`_merged`, within ``memory_mb``; in rounds
of :data:`MERGE_FAN_IN` runs when there are more) into the output, sorted by line. Gzip is
inflated by ISA-L (:mod:`isal.igzip`).
"""

from __future__ import annotations

import bisect
import bz2
import enum
import functools
import io
import os
import re
import sys
import tarfile
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
from isal import igzip, isal_zlib
from tqdm import tqdm

from elquery.base import ElqueryError, check_workers, default_workers
from elquery.files import atomic_output
from elquery.indexing.ntriples import expand_files
from elquery.kb.normalize import fold, normalize
from elquery.indexing.surface_forms.arrow_arrays import int64_array, string_array
from elquery.indexing.surface_forms.memory import DEFAULT_MEMORY_MB
from elquery.workers import ordered_map, worker_pool

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

ANNOTATION_SUFFIXES = (".tsv", ".gz", ".bz2", ".tar", ".tgz")
COLUMNS = 8
BYTES_PER_PAIR = 300
"""Estimated memory of one distinct (mention, mid) pair while it is summed and spilled (the
arrow columns and hash table, then the Python strings and dictionary of a run)."""
MAX_EXAMPLES = 5
MERGE_FAN_IN = 64
"""Run files merged at once; with more, they are merged in rounds (in the worker processes), so
the open files stay far below the usual limit of 1,024 whatever the input size."""
MAX_LINE_BYTES = 1 << 20
"""The longest annotation line read: 1 MiB before its ``\\n`` (FACC1's lines are about 100
bytes). A longer line is malformed, skipped as it is read."""
BLOCK_BYTES = 1 << 22
"""Whole lines parsed at once (about 4 MiB)."""
# The checked fields (column index: pattern); the same patterns, anchored, for pyarrow's RE2.
_DIGITS = r"[0-9]+"
_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_MID = r"/m/[0-9a-z_]+"
_CHECKS = [(3, re.compile(_DIGITS.encode())), (4, re.compile(_DIGITS.encode())), (5, re.compile(_NUMBER.encode())),
           (7, re.compile(_MID.encode()))]


def _whole(pattern: str) -> str:
    return f"^(?:{pattern})$"


class Rejected(enum.Enum):
    """Why an annotation line counts for no (form, mid) pair (the :class:`FileCounts` fields)."""

    MALFORMED = "malformed"
    BELOW_POSTERIOR = "below_posterior"
    EMPTY_FORM = "empty_form"


def annotation_pair(line: bytes | str, min_posterior: float = 0.0) -> tuple[str, str] | Rejected:
    """The (normalized form, Freebase mid) that one FACC1 annotation line counts for, or why it
    counts for none: this module's rules as a pure function of one line (a trailing newline is
    ignored), for engines that distribute the lines themselves (Spark: map every line, count the
    pairs, tally the :class:`Rejected` values for the report). :func:`count_file` applies the same
    rules, with the same patterns, column-wise; the tests hold both to the same counts.

    Lines end at ``\\n`` (a ``\\r`` before it is dropped). In order: a line of more than
    :data:`MAX_LINE_BYTES` bytes, one holding a carriage return, not eight tab-separated
    columns, offsets that are not digits, a posterior that is not a number in [0, 1] or a mid
    that is not ``/m/[0-9a-z_]+`` (as bytes) is ``MALFORMED``; a
    posterior below ``min_posterior`` is ``BELOW_POSTERIOR``; a mention that is not UTF-8 is
    ``MALFORMED``; one that normalizes to nothing is ``EMPTY_FORM``."""
    raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    if len(raw) > MAX_LINE_BYTES:
        return Rejected.MALFORMED
    body = raw[:-1] if raw.endswith(b"\r") else raw
    if b"\r" in body:
        return Rejected.MALFORMED
    fields = body.split(b"\t")
    if len(fields) != COLUMNS or not all(pattern.fullmatch(fields[column]) for column, pattern in _CHECKS):
        return Rejected.MALFORMED
    posterior = float(fields[5])
    if posterior > 1.0:
        return Rejected.MALFORMED
    if posterior < min_posterior:
        return Rejected.BELOW_POSTERIOR
    form = _form(fields[2])
    if form is None:
        return Rejected.MALFORMED
    return (form, fields[7].decode("ascii")) if form else Rejected.EMPTY_FORM


@functools.lru_cache(maxsize=1 << 18)
def _form(mention: bytes) -> str | None:
    """The normalized form of a mention, None if it is not UTF-8 (cached: mentions repeat)."""
    try:
        return normalize(mention.decode("utf-8"))
    except UnicodeDecodeError:
        return None


@dataclass
class FileCounts:
    """What one annotation file held."""

    path: str
    lines: int = 0
    counted: int = 0
    below_posterior: int = 0
    empty_form: int = 0
    malformed: int = 0
    runs: int = 0  # sorted run files spilled
    examples: list[str] = field(default_factory=list)

    def malformed_line(self, where: str, reason: str, shown: str | None = None) -> None:
        """Count a malformed line; ``where`` is ``line N`` (or ``MEMBER line N`` in an archive),
        ``shown`` the start of the line as quoted in the examples."""
        self.malformed += 1
        self._example(f"{where}: {reason}" + (f": {shown}" if shown is not None else ""))

    def malformed_pair(self, mention: bytes, mid: bytes, count: int) -> None:
        """``count`` counted lines of one (mention, mid) turn out malformed when their run is written."""
        self.malformed += count
        self.counted -= count
        self._example(f"{count} line(s) with mention {mention[:200]!r} and mid {mid[:100]!r}")

    def quotes(self) -> bool:
        """Whether the next malformed line is quoted among the examples."""
        return len(self.examples) < MAX_EXAMPLES

    def _example(self, text: str) -> None:
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(text)


@dataclass
class CountReport:
    """Totals over the files, with each file's counts."""

    files: list[FileCounts] = field(default_factory=list)
    pairs: int = 0

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    def summary_lines(self) -> list[str]:
        lines = [f"{f.path}: {f.malformed} malformed line(s); {'; '.join(f.examples)}"
                 for f in self.files if f.malformed]
        lines.append(f"facc annotations: {len(self.files)} file(s), {self.total('lines')} lines, "
                     f"{self.total('counted')} counted, {self.total('below_posterior')} below --min-posterior, "
                     f"{self.total('empty_form')} with an empty form, {self.total('malformed')} malformed; "
                     f"{self.total('runs')} sorted run(s) merged into {self.pairs} (form, mid) pairs")
        return lines


def annotation_files(paths: Iterable[Path | str]) -> list[Path]:
    """The annotation files and archives under ``paths`` (directories searched recursively,
    sorted for a deterministic order); a missing path or a directory without any is an error."""
    return expand_files(paths, ANNOTATION_SUFFIXES, f"FACC1 annotation files ({', '.join(ANNOTATION_SUFFIXES)})",
                        recursive=True)


ByteStream = igzip.IGzipFile | bz2.BZ2File | io.BufferedReader  # a readable byte stream
GZIP_MAGIC = b"\x1f\x8b"
_ISAL_ERROR = cast(type[Exception], isal_zlib.error)  # ISA-L's inflate error (its stubs type it as an instance)


def _decompressed(name: str, raw: io.BufferedReader) -> ByteStream:
    """``raw`` decompressed as its name says: gzip with ISA-L's inflate (:mod:`isal.igzip`, the
    standard library's ``gzip`` API at about twice zlib's speed), bzip2, or as it is."""
    if name.endswith(".gz"):
        return igzip.IGzipFile(fileobj=raw)
    if name.endswith(".bz2"):
        return bz2.BZ2File(raw)
    return raw


class _ArchiveStream(io.RawIOBase):
    """A gzip-compressed tar archive decompressed by :mod:`isal.igzip` for :mod:`tarfile`: a
    compressed stream that ends early is tarfile's own ``unexpected end of data``."""

    def __init__(self, stream: igzip.IGzipFile) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            return self._stream.read(size)
        except EOFError:
            raise tarfile.ReadError("unexpected end of data") from None


@dataclass(frozen=True)
class Stream:
    """One stream of annotation lines: a file, or an annotation member of an archive (``member``)."""

    raw: ByteStream
    member: str | None = None


def annotation_streams(path: Path) -> Iterator[Stream]:
    """The byte streams of an annotation file: itself, or each annotation member of an archive
    (``.tsv``, ``.gz`` or ``.bz2``; other members are skipped)."""
    name = path.name
    if name.endswith((".tar", ".tgz", ".tar.gz", ".tar.bz2")):
        with open(path, "rb") as raw:
            try:  # gzip (by its magic, as tarfile's "r|*" finds it) through isal, others as tarfile reads them
                archive = (tarfile.open(fileobj=_ArchiveStream(igzip.IGzipFile(fileobj=raw)), mode="r|")
                           if raw.peek(2)[:2] == GZIP_MAGIC else tarfile.open(fileobj=raw, mode="r|*"))
            except tarfile.ReadError as exc:
                raise ElqueryError(f"{path}: not a readable tar archive ({exc})") from None
            yield from _members(archive)
        return
    with open(path, "rb") as raw:
        yield Stream(_decompressed(name, raw))


def _members(archive: tarfile.TarFile) -> Iterator[Stream]:
    """The streams of the annotation members of ``archive`` (:func:`annotation_streams`)."""
    with archive:
        for member in archive:
            if member.isfile() and member.name.endswith((".tsv", ".gz", ".bz2")):
                stream = archive.extractfile(member)
                if stream is not None:
                    # tarfile's member file is an io.BufferedReader (typeshed says IO[bytes])
                    yield Stream(_decompressed(member.name, cast(io.BufferedReader, stream)), member.name)


_NAMES = ["document", "encoding", "mention", "begin", "end", "posterior", "context_posterior", "mid"]
_READ = pa_csv.ReadOptions(column_names=_NAMES, block_size=1 << 30, use_threads=False)  # one parse per block
_USED = ["mention", "begin", "end", "posterior", "mid"]  # the columns made arrays (the others only delimited)
_CONVERT = pa_csv.ConvertOptions(column_types={name: pa.binary() for name in _NAMES}, strings_can_be_null=False,
                                 quoted_strings_can_be_null=False, check_utf8=False, include_columns=_USED)


def _parse_options(handler: object = None) -> pa_csv.ParseOptions:
    return pa_csv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False, ignore_empty_lines=False,
                               newlines_in_values=False, invalid_row_handler=handler)


@dataclass
class _Batch:
    """Parsed rows of one block, with what is needed to give each row its line number."""

    rows: pa.Table
    where: str  # "line" or "<member> line"
    first: int  # the number of the block's first line
    skipped: list[tuple[int, str, str]]  # (index in the block, reason, line shown) of the lines not rows
    lines: int  # lines of the block
    data: bytes | bytearray  # the block's lines

    def line(self, index: int) -> bytes:
        """The line at ``index`` in the block, without its line end (for the quoted examples)."""
        start = 0
        for _ in range(index):
            start = self.data.index(b"\n", start) + 1
        return bytes(self.data[start:self.data.index(b"\n", start)])

    def line_indices(self, rows: list[int]) -> list[int]:
        """The indices in the block of the lines of ``rows``."""
        if not self.skipped:
            return rows
        lines = np.ones(self.lines, bool)
        lines[[index for index, _, _ in self.skipped]] = False
        return np.flatnonzero(lines)[rows].tolist()


def _stream_batches(stream: ByteStream, where: str, counts: FileCounts) -> Iterator[_Batch]:
    """The rows of ``stream`` (:func:`_rows`), about :data:`BLOCK_BYTES` of whole lines at a time,
    read :data:`MAX_LINE_BYTES` at a time (so a line inside one read is shorter than the limit):
    a line of more than :data:`MAX_LINE_BYTES` bytes before its ``\\n`` is counted as malformed
    and skipped as it is read, never held whole. The last line gets a ``\\n`` if it has none.
    ``counts.lines`` counts every line."""
    limit = MAX_LINE_BYTES
    buffer = bytearray()  # whole lines up to ``complete``, then the start of a line not yet ended
    complete = 0
    carriage = False  # whether the buffer may hold a carriage return
    number = 0  # lines of the stream before the buffer's first
    skipping = False  # inside an over-long line

    def parsed(lines: bytes | bytearray) -> _Batch:
        nonlocal number
        batch = _rows(lines, where, number + 1, carriage)
        number += batch.lines
        counts.lines += batch.lines
        return batch

    def over_long() -> None:
        nonlocal number
        number += 1
        counts.lines += 1
        counts.malformed_line(f"{where} {number}", f"longer than {limit} bytes")

    while chunk := stream.read(limit):
        if skipping:
            end = chunk.find(b"\n")
            if end < 0:
                continue
            skipping, chunk = False, chunk[end + 1:]
        end = chunk.find(b"\n")
        if len(buffer) - complete + (len(chunk) if end < 0 else end) > limit:  # the line not yet ended
            if complete:
                yield parsed(buffer[:complete])
            over_long()
            buffer, complete, carriage = bytearray(), 0, False
            if end < 0:
                skipping = True
                continue
            chunk = chunk[end + 1:]
        last = chunk.rfind(b"\n")
        if last >= 0:
            complete = len(buffer) + last + 1
        buffer += chunk
        carriage = carriage or b"\r" in chunk
        if complete >= BLOCK_BYTES:
            rest = buffer[complete:]
            del buffer[complete:]
            yield parsed(buffer)
            buffer, complete, carriage = rest, 0, b"\r" in rest
    if len(buffer) > complete and not skipping:
        buffer += b"\n"
        complete = len(buffer)
    if complete:
        yield parsed(buffer[:complete] if complete < len(buffer) else buffer)


def _shown(line: bytes | bytearray) -> str:
    return repr(line[:200].decode("utf-8", "replace"))


def _rows(lines: bytes | bytearray, where: str, first: int, carriage: bool = True) -> _Batch:
    """The rows of whole ``lines`` (the first numbered ``first``; ``carriage``: they may hold a
    carriage return), parsed by pyarrow's CSV reader
    (tab-separated, no quoting); a line that is not eight columns is skipped (and listed). Fast
    path: all at once, pyarrow handing over the lines without eight columns; lines it cannot read
    that way (such a line that is not UTF-8, a carriage return inside a line) are read line by
    line (:func:`_rows_by_line`). An empty line is a row of eight empty fields to pyarrow, which
    the field checks find malformed."""
    invalid: list[tuple[int, str, str]] = []

    def skip(row: pa_csv.InvalidRow) -> str:
        invalid.append(((row.number or 0) - 1, f"{row.actual_columns} column(s), not {COLUMNS}", repr(row.text[:200])))
        return "skip"

    try:
        with _quiet_invalid_rows():
            table = pa_csv.read_csv(pa.py_buffer(lines), _READ, _parse_options(skip), _CONVERT)
    except pa.ArrowInvalid:  # a row pyarrow could not hand to skip (not UTF-8)
        pass
    else:  # pyarrow also ends a line at a lone carriage return: then rows and lines differ
        count = table.num_rows + len(invalid)
        if (not carriage or count == lines.count(b"\n")) and all(index >= 0 for index, _, _ in invalid):
            return _Batch(table, where, first, invalid, count, lines)
    return _rows_by_line(bytes(lines), where, first)


def _rows_by_line(lines: bytes, where: str, first: int) -> _Batch:
    """The rows of whole ``lines``, checked one by one: not eight columns, or a carriage return
    other than one ending the line, makes a line malformed; the others are parsed."""
    good: list[bytes] = []
    skipped: list[tuple[int, str, str]] = []
    split = lines[:-1].split(b"\n")
    for index, line in enumerate(split):
        columns = line.count(b"\t") + 1
        if columns != COLUMNS:
            skipped.append((index, f"{columns} column(s), not {COLUMNS}", _shown(line)))
        elif b"\r" in (line[:-1] if line.endswith(b"\r") else line):
            skipped.append((index, "a carriage return inside the line", _shown(line)))
        else:
            good.append(line)
    if not good:
        return _Batch(pa.table({name: pa.array([], pa.binary()) for name in _USED}), where, first, skipped, len(split),
                      lines)
    good.append(b"")
    table = pa_csv.read_csv(pa.py_buffer(b"\n".join(good)), _READ, _parse_options(), _CONVERT)
    return _Batch(table, where, first, skipped, len(split), lines)


@contextmanager
def _quiet_invalid_rows() -> Iterator[None]:
    """Silence the one report pyarrow prints when it cannot hand an invalid row that is not
    UTF-8 to the handler (it then fails the parse, and the block is read line by line)."""
    previous = sys.unraisablehook

    def hook(unraisable: UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, UnicodeDecodeError):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def _batches(path: Path, counts: FileCounts) -> Iterator[_Batch]:
    """The rows of every stream of ``path`` (:func:`_rows`), block by block. A stream that ends
    early or cannot be decompressed is an :class:`ElqueryError` naming the file (and member):
    the file is refused as a whole, never counted in part."""
    member = None
    try:
        for stream in annotation_streams(path):
            member = stream.member
            where = "line" if member is None else f"{member} line"
            yield from _stream_batches(stream.raw, where, counts)
    except (FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        raise ElqueryError(f"{path}: cannot be read ({exc.strerror})") from None
    except (EOFError, OSError, zlib.error, _ISAL_ERROR, tarfile.TarError) as exc:
        named = f"{path}: member {member}" if member is not None else f"{path}"
        raise ElqueryError(f"{named}: truncated or corrupt file ({exc})") from None


def _valid(batch: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Which rows are well-formed (digit offsets, a number in [0, 1] as posterior, a mid
    ``/m/[0-9a-z_]+``), and every row's posterior (0 where not a number), as numpy arrays."""
    # matched as bytes: a field that is not UTF-8 fails its pattern (and makes its line malformed)
    posteriors = batch.column("posterior")
    number = _decimals(posteriors)  # numbers without an exponent (FACC1's): no need of the pattern
    if not number.all():
        matched = pc.match_substring_regex(posteriors, _whole(_NUMBER))
        number = _numpy_bools(matched.combine_chunks())
        if not number.all():  # (rare) only numbers are cast: the others read as 0
            posteriors = pc.if_else(matched, posteriors, b"0")
    cast = posteriors.cast(pa.string()).cast(pa.float64()).combine_chunks()
    posterior = np.frombuffer(cast.buffers()[1], np.float64, len(cast), cast.offset) if len(cast) else np.zeros(0)
    mid = batch.column("mid")
    fields = (_made_of(batch.column("begin"), _NOT_DIGIT_BYTES) & _made_of(batch.column("end"), _NOT_DIGIT_BYTES)
              & _made_of(mid, _NOT_MID_BYTES, len(_MID_PREFIX)) & _numpy_bools(pc.starts_with(mid, _MID_PREFIX).combine_chunks()))
    return number & (posterior <= 1.0) & fields, posterior


def _numpy_bools(values: pa.Array) -> np.ndarray:
    """A pyarrow boolean array without nulls as numpy, through its bits (pyarrow's ``to_numpy``
    would import pandas: :mod:`~elquery.indexing.surface_forms.arrow_arrays`)."""
    bits = np.unpackbits(np.frombuffer(values.buffers()[1], np.uint8), bitorder="little") if len(values) else np.zeros(0, np.uint8)
    return bits[values.offset:values.offset + len(values)].astype(bool)


def _arrow_bools(values: np.ndarray) -> pa.Array:
    """A numpy boolean array as pyarrow, through its bits (``pa.array`` would import pandas)."""
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(np.packbits(values, bitorder="little"))])


_MID_PREFIX = "/m/"


def _not_among(allowed: bytes) -> np.ndarray:
    """A table of the 256 byte values: True for those not in ``allowed``."""
    table = np.ones(256, bool)
    table[np.frombuffer(allowed, np.uint8)] = False
    return table


_NOT_DIGIT_BYTES = _not_among(b"0123456789")
_NOT_MID_BYTES = _not_among(b"0123456789abcdefghijklmnopqrstuvwxyz_")
_NOT_DECIMAL_BYTES = _not_among(b"0123456789.")


def _decimals(column: pa.ChunkedArray) -> np.ndarray:
    """Whether each value of a binary ``column`` is digits with at most one ``.`` among them: the
    numbers of :data:`_NUMBER` that have no exponent. The bytes other than ``[0-9.]`` are found
    at once (usually none); so are the dots: when there are as many as values and the i-th lies
    in the i-th value (FACC1's posteriors), each value holds one, else they are counted per value."""
    offsets, data = _offsets_and_data(column)
    starts, ends = offsets[:-1], offsets[1:]
    lengths = ends - starts
    ok = lengths > 0
    ok[_rows_of(np.flatnonzero(_NOT_DECIMAL_BYTES[data]), offsets)] = False
    dots = np.flatnonzero(data == ord("."))
    if len(dots) == len(starts) and bool(((dots >= starts) & (dots < ends)).all()):
        dotted = np.ones(len(starts), np.int64)
    else:
        dotted = np.bincount(_rows_of(dots, offsets), minlength=len(starts))
    return ok & (dotted <= 1) & (lengths > dotted)


def _rows_of(positions: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The values (rows) that hold the data bytes at ``positions`` (ascending), given the
    column's value ``offsets``; positions outside every value are left out."""
    rows = np.searchsorted(offsets, positions, side="right") - 1
    return rows[(rows >= 0) & (rows < len(offsets) - 1)]


def _offsets_and_data(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The value offsets and the data bytes of a binary ``column`` (as one array)."""
    array = column if isinstance(column, pa.Array) else column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if len(array) == 0:
        return np.zeros(1, np.int32), np.zeros(0, np.uint8)
    data = array.buffers()[2]
    return (np.frombuffer(array.buffers()[1], np.int32, len(array) + 1, array.offset * 4),
            np.zeros(0, np.uint8) if data is None else np.frombuffer(data, np.uint8))


def _made_of(column: pa.ChunkedArray, disallowed: np.ndarray, skip: int = 0) -> np.ndarray:
    """Whether each value of a binary ``column`` is longer than ``skip`` bytes, none of them after
    the first ``skip`` among the ``disallowed`` byte values (the patterns ``[0-9]+`` and, after
    ``/m/``, ``[0-9a-z_]+`` of :data:`_CHECKS`): the disallowed bytes of all the values found at
    once (usually none), then the values that hold them."""
    offsets, data = _offsets_and_data(column)
    starts, ends = offsets[:-1] + skip, offsets[1:]
    ok = ends > starts
    bad = disallowed[data]
    for before in range(skip):  # each value's first bytes (one of a short value's lies among the next ones' first)
        at = offsets[:-1] + before
        bad[at[at < len(bad)]] = False
    positions = np.flatnonzero(bad)
    if len(positions):
        rows = np.searchsorted(offsets, positions, side="right") - 1
        inside = (rows >= 0) & (rows < len(ends))
        rows, positions = rows[inside], positions[inside]
        ok[rows[positions >= starts[rows]]] = False
    return ok


_NOT_WORD_BYTES = _not_among(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ")
_NOT_ASCII_LETTER_OR_DIGIT = r"[^a-z0-9]+"
_SEPARATORS = re.compile(r"(?:[^\w\n]|_)+")  # normalize()'s [\W_]+ but for the newlines between texts
_EDGES = re.compile(r" ?\n ?")


def _forms(mentions: pa.Array) -> pa.Array:
    """The normalized form (:func:`normalize`) of each of ``mentions`` (binary), null for one that
    is not UTF-8. For an ASCII mention, NFKC is the identity, casefolding is lowercasing and the
    letters and digits are ``[a-z0-9]`` once lowered, so its form is the lowered mention with each
    run of other characters replaced by one space, then trimmed: done with pyarrow over all of
    them at once (:func:`_ascii_forms`). The others (found by their bytes above 0x7f) go through
    :func:`normalize`'s steps all together (:func:`_normalized`)."""
    offsets, data = _offsets_and_data(mentions)
    slow = _rows_of(np.flatnonzero(data >= 0x80), offsets)
    slow = slow[np.concatenate(([True], slow[1:] != slow[:-1]))] if len(slow) else slow  # each row once
    mask = np.zeros(len(mentions), bool)
    mask[slow] = True
    forms = _ascii_forms(mentions, offsets, data, mask)
    if not len(slow):
        return forms
    return pc.replace_with_mask(forms, _arrow_bools(mask), _unicode_forms(mentions.take(int64_array(slow))))


def _unicode_forms(mentions: pa.Array) -> pa.Array:
    """:func:`normalize` of each of the binary ``mentions`` decoded as UTF-8, null for those that are not."""
    texts = mentions.to_pylist()
    try:
        return string_array(_normalized([text.decode("utf-8") for text in texts]))
    except UnicodeDecodeError:
        decoded = [_utf8(text) for text in texts]
    forms = iter(_normalized([text for text in decoded if text is not None]))
    return pa.array([None if text is None else next(forms) for text in decoded], pa.string())


def _utf8(mention: bytes) -> str | None:
    try:
        return mention.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _normalized(texts: list[str]) -> list[str]:
    """:func:`normalize` of each of ``texts``, all at once: joined by newlines, each step of it
    done once over them all (NFKC and casefolding, which keep each newline and make none; runs of
    characters that are not letters or digits made one space, the newlines left out; the spaces
    beside the newlines and at the ends dropped), then split at the newlines. One at a time when
    a text holds a newline itself."""
    joined = "\n".join(texts)
    if len(texts) > 1 and joined.count("\n") == len(texts) - 1:
        forms = _EDGES.sub("\n", _SEPARATORS.sub(" ", fold(joined))).strip(" ").split("\n")
        if len(forms) == len(texts):
            return forms
    return [normalize(text) for text in texts]


def _ascii_forms(mentions: pa.Array, offsets: np.ndarray, data: np.ndarray, unicode: np.ndarray) -> pa.Array:
    """:func:`normalize` of the ASCII ``mentions`` (binary; ``offsets`` and ``data`` its buffers),
    vectorized (:func:`_forms`; the forms of those marked in ``unicode`` come out wrong); the
    replacement only where the mention is not already words of ``[A-Za-z0-9]`` separated by single
    spaces (found with numpy over the bytes: most are)."""
    text = pa.StringArray.from_buffers(len(mentions), *mentions.buffers()[1:], offset=mentions.offset)
    lowered = pc.ascii_lower(text)
    starts, ends = offsets[:-1], offsets[1:]
    filled = np.flatnonzero(ends > starts)
    spaces = data == ord(" ")
    other = np.zeros(len(mentions), bool)
    other[filled] = spaces[starts[filled]] | spaces[ends[filled] - 1]
    other[_rows_of(np.flatnonzero(_NOT_WORD_BYTES[data]), offsets)] = True
    other[_rows_of(np.flatnonzero(spaces[1:] & spaces[:-1]), offsets)] = True
    other &= ~unicode
    if not other.any():
        return lowered
    mask = _arrow_bools(other)
    replaced = pc.replace_substring_regex(lowered.filter(mask), _NOT_ASCII_LETTER_OR_DIGIT, " ")
    return pc.replace_with_mask(lowered, mask, pc.utf8_trim(replaced, " "))


def _spill(pairs: pa.Table, counts: FileCounts, directory: Path, batch_rows: int) -> Path:
    """Normalize the mentions of ``pairs`` (mention, mid, count_all) (:func:`_forms`), sum the (form, mid) pairs and write them sorted to a run
    file (:func:`_summed`, :func:`_write_run`). A mention that is not UTF-8 makes its lines
    malformed; one that normalizes to nothing makes them ``empty_form``. (Each row is normalized:
    the mentions of a spill's pairs are nearly all distinct, so finding the distinct ones first
    costs more than it saves.)"""
    form = _forms(pairs.column("mention").combine_chunks())
    count = pairs.column("count_all")
    if form.null_count:
        for row in pc.indices_nonzero(pc.is_null(form)).to_pylist():
            counts.malformed_pair(pairs.column("mention")[row].as_py(), pairs.column("mid")[row].as_py(),
                                  count[row].as_py())
    empty = pc.fill_null(pc.equal(form, ""), False)
    emptied = pc.sum(count.filter(empty)).as_py() or 0
    counts.empty_form += emptied
    counts.counted -= emptied
    keep = pc.and_(pc.is_valid(form), pc.invert(empty))
    run = pa.table({"form": form.filter(keep), "mid": pairs.column("mid").cast(pa.string()).filter(keep),
                    "count": count.filter(keep)})
    return _write_run([_summed(run)], directory, "run-", batch_rows)


def _sorted(run: pa.Table) -> pa.Table:
    """``run`` in (form, mid) order, which is the order of its lines ``form<TAB>mid<TAB>count``:
    a form holds only letters, digits and spaces, a mid only ``[0-9a-z_]``, all above the tab that
    ends each field (pyarrow compares strings as bytes, and UTF-8's byte order is the code
    points')."""
    return run.sort_by([("form", "ascending"), ("mid", "ascending")])


RUN_SCHEMA = pa.schema([("form", pa.string()), ("mid", pa.string()), ("count", pa.int64())])
MERGE_ROW_BYTES = 256
"""Estimated memory of one pending row of a merge (its batch, then its share of the step's
concatenation, sums and sort)."""


def merge_batch_rows(memory_mb: int) -> int:
    """Rows in each batch of a run file: a merge holds one batch of each of :data:`MERGE_FAN_IN`
    runs, about ``memory_mb`` in all."""
    return max(1_024, memory_mb * 2**20 // (MERGE_FAN_IN * MERGE_ROW_BYTES))


def _write_run(tables: Iterable[pa.Table], directory: Path, prefix: str, batch_rows: int) -> Path:
    """Write sorted (form, mid, count) ``tables`` to a new run file in ``directory``: an Arrow IPC
    stream of batches of at most ``batch_rows`` rows, read back a batch at a time by :func:`_merged`."""
    handle, name = tempfile.mkstemp(prefix=prefix, suffix=".arrow", dir=directory)
    os.close(handle)
    with pa.OSFile(name, "wb") as sink, pa.ipc.new_stream(sink, RUN_SCHEMA) as writer:
        for table in tables:
            writer.write_table(table, max_chunksize=batch_rows)
    return Path(name)


def count_file(path: Path, min_posterior: float, memory_mb: int, directory: Path) -> tuple[FileCounts, list[Path]]:
    """Count the (mention, mid) pairs of one annotation file into sorted run files in
    ``directory``. The kept (mention, mid) rows of the blocks are held as they are until they take
    a quarter of ``memory_mb``, then summed at once by pyarrow's hash aggregation into the sums so
    far (one pass over the rows: cheaper than summing every block); when the sums hold half of
    ``memory_mb`` of pairs (estimated at :data:`BYTES_PER_PAIR` each) they are spilled
    (:func:`_spill`)."""
    counts = FileCounts(str(path))
    pair_budget = max(1, memory_mb * 2**20 // BYTES_PER_PAIR)
    row_budget = memory_mb * 2**20 // 4  # bytes of rows not yet summed
    rows: list[pa.Table] = []
    held = 0
    summed: pa.Table | None = None
    runs: list[Path] = []
    batch_rows = merge_batch_rows(memory_mb)
    for block in _batches(path, counts):
        batch = block.rows
        ok, posterior = _valid(batch)
        malformed = block.skipped
        if not ok.all():
            rows_bad = np.flatnonzero(~ok).tolist()
            malformed = sorted(malformed + [(index, "", "") for index in block.line_indices(rows_bad)],
                               key=lambda item: item[0])
        for index, reason, shown in malformed:  # in line order
            if not reason and counts.quotes():  # a row the checks refused, quoted: read from its line
                line = block.line(index)
                columns = line.count(b"\t") + 1
                reason = "offsets, posterior or mid malformed" if columns == COLUMNS else f"{columns} column(s), not {COLUMNS}"
                shown = _shown(line)
            counts.malformed_line(f"{block.where} {block.first + index}", reason, shown)
        kept = ok & (posterior >= min_posterior)
        counts.below_posterior += int(np.count_nonzero(ok & ~kept))
        if kept.all():
            rows.append(pa.table({"mention": batch.column("mention"), "mid": batch.column("mid")}))
        else:
            take = int64_array(np.flatnonzero(kept))
            rows.append(pa.table({"mention": batch.column("mention").take(take), "mid": batch.column("mid").take(take)}))
        counts.counted += rows[-1].num_rows
        held += rows[-1].nbytes
        if held >= row_budget:
            summed = _sum(summed, rows)
            rows, held = [], 0
            if summed.num_rows >= pair_budget // 2:
                runs.append(_spill(summed, counts, directory, batch_rows))
                summed = None
    if any(table.num_rows for table in rows) or summed is not None:
        runs.append(_spill(_sum(summed, rows), counts, directory, batch_rows))
    counts.runs = len(runs)
    return counts, runs


def _sum(summed: pa.Table | None, rows: list[pa.Table]) -> pa.Table:
    """``rows`` of (mention, mid) counted and added to the (mention, mid, count_all) sums ``summed``."""
    if not rows:
        assert summed is not None  # the caller holds sums or rows
        return summed
    table = pa.concat_tables(rows).group_by(["mention", "mid"], use_threads=False).aggregate([([], "count_all")])
    if summed is None:
        return table
    table = pa.concat_tables([summed, table]).group_by(["mention", "mid"], use_threads=False).aggregate(
        [("count_all", "sum")])
    return pa.table({"mention": table["mention"], "mid": table["mid"], "count_all": table["count_all_sum"]})


def _merged(runs: list[Path], memory_mb: int) -> Iterator[pa.Table]:
    """The sorted run files ``runs`` merged: (form, mid, count) tables in (form, mid) order, the
    counts of equal pairs summed, holding about ``memory_mb`` of rows (:data:`MERGE_ROW_BYTES`
    each; at least a batch of each run). Each run holds rows in proportion to its size, so that
    the rows held of each run reach about as far. Each step takes from every run its held rows up
    to the smallest of the runs' last held pairs (no run holds a smaller pair further on, so those
    sums are final), sorts and sums them with pyarrow (:func:`_summed`), and tops every run up."""
    sizes = [max(1, run.stat().st_size) for run in runs]
    budget = memory_mb * 2**20 // MERGE_ROW_BYTES
    wanted = [max(1, budget * size // sum(sizes)) for size in sizes]  # rows held of each run
    with ExitStack() as stack:
        readers = [stack.enter_context(pa.ipc.open_stream(stack.enter_context(pa.OSFile(str(run))))) for run in runs]
        held: dict[int, pa.RecordBatch] = {}

        def top_up(index: int, kept: pa.RecordBatch | None) -> None:
            batches, rows = ([kept], kept.num_rows) if kept is not None else ([], 0)
            while rows < wanted[index]:
                try:
                    batch = readers[index].read_next_batch()
                except StopIteration:
                    break
                batches.append(batch)
                rows += batch.num_rows
            if rows:
                held[index] = pa.concat_batches(batches) if len(batches) > 1 else batches[0]
            else:
                held.pop(index, None)

        for index in range(len(readers)):
            top_up(index, None)
        while held:
            bound = min(_pair(batch, batch.num_rows - 1) for batch in held.values())
            pieces = []
            for index, batch in list(held.items()):
                cut = bisect.bisect_right(range(batch.num_rows), bound, key=functools.partial(_pair, batch))
                if cut:
                    pieces.append(batch.slice(0, cut))
                top_up(index, batch.slice(cut) if cut < batch.num_rows else None)
            # the rows of one run are already summed and sorted
            yield pa.Table.from_batches(pieces) if len(pieces) == 1 else _summed(pa.Table.from_batches(pieces))


def _summed(table: pa.Table) -> pa.Table:
    """The (form, mid, count) rows of ``table`` sorted (:func:`_sorted`), the counts of equal pairs summed."""
    table = _sorted(table).combine_chunks()
    if table.num_rows < 2:
        return table
    form, mid, count = (column.chunk(0) for column in table.columns)
    rest, before = slice(1, None), slice(None, -1)
    same = pc.and_(pc.equal(form[rest], form[before]), pc.equal(mid[rest], mid[before])).to_numpy(zero_copy_only=False)
    if not same.any():
        return table
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    sums = np.add.reduceat(count.to_numpy(), starts)
    return pa.table({"form": form.take(starts), "mid": mid.take(starts), "count": sums})


def _pair(batch: pa.RecordBatch, row: int) -> tuple[str, str]:
    """The (form, mid) of a row of a run's batch."""
    return batch.column(0)[row].as_py(), batch.column(1)[row].as_py()


def merged_pairs(runs: list[Path], memory_mb: int) -> Iterator[tuple[str, int]]:
    """``(form<TAB>mid, count)`` of sorted run files merged (:func:`_merged`), in line order."""
    for table in _merged(runs, memory_mb):
        for form, mid, count in zip(*(column.to_pylist() for column in table.columns)):
            yield f"{form}\t{mid}", count


_LINES = pa_csv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")


def _merge_into(runs: list[Path], sink: IO[str], memory_mb: int) -> int:
    """Merge sorted run files into ``sink`` (:func:`_merged`) as ``form<TAB>mid<TAB>count``
    lines; returns the number of pairs written."""
    pairs = 0
    for table in _merged(runs, memory_mb):
        lines = pa.BufferOutputStream()
        pa_csv.write_csv(table, lines, _LINES)
        sink.write(lines.getvalue().to_pybytes().decode("utf-8"))
        pairs += table.num_rows
    return pairs


def _merge_runs(runs: list[Path], directory: Path, memory_mb: int) -> Path:
    """Merge sorted run files into one new run file in ``directory`` and remove them."""
    merged = _write_run(_merged(runs, memory_mb), directory, "merged-", merge_batch_rows(memory_mb))
    for run in runs:
        run.unlink()
    return merged


def merge_groups(runs: int, fan_in: int) -> list[slice]:
    """The consecutive groups of ``runs`` run files merged in one round: as few as hold at most
    ``fan_in`` each, of sizes within one of each other (76 runs at 64: 38 and 38, not 64 and 12),
    so that the workers merging them finish together."""
    count = -(-runs // fan_in)
    bounds = [runs * number // count for number in range(count + 1)]
    return [slice(start, end) for start, end in zip(bounds, bounds[1:])]


def count_annotations(paths: Iterable[Path | str], out: Path | str, *, min_posterior: float = 0.0,
                      memory_mb: int = DEFAULT_MEMORY_MB, workers: int | None = None,
                      work: Path | str | None = None, progress: bool | None = None) -> CountReport:
    """Count the raw FACC1 annotations under ``paths`` into the counts file ``out`` (sorted
    ``form<TAB>mid<TAB>count`` lines, written atomically), with ``workers`` processes (default: one
    per core; :func:`elquery.workers.ordered_map`) of at most ``memory_mb`` of pairs each; run files go to a temporary directory in ``work`` (default: beside
    ``out``) and are removed."""
    if not 0.0 <= min_posterior <= 1.0:
        raise ElqueryError(f"--min-posterior must be between 0 and 1, not {min_posterior:g}")
    if memory_mb < 1:
        raise ElqueryError(f"--memory must be at least 1, got {memory_mb}")
    workers = default_workers() if workers is None else check_workers(workers)
    files = annotation_files(paths)
    where = Path(work) if work is not None else Path(out).resolve().parent
    report = CountReport()
    with tempfile.TemporaryDirectory(prefix=".facc-counts-", dir=where) as directory:
        runs: list[Path] = []
        bar = tqdm(total=sum(f.stat().st_size for f in files), unit="B", unit_scale=True, desc="facc annotations",
                   disable=progress is False or (progress is None and not sys.stderr.isatty()), file=sys.stderr)
        with bar, worker_pool(min(workers, len(files))) as pool:
            tasks = [(f, min_posterior, memory_mb, Path(directory)) for f in files]
            for f, (counts, file_runs) in zip(files, ordered_map(count_file, tasks, pool, window=len(tasks))):
                report.files.append(counts)
                runs.extend(file_runs)
                bar.update(f.stat().st_size)
            while len(runs) > MERGE_FAN_IN:  # merge in rounds: open files stay bounded
                groups = [(runs[part], Path(directory), memory_mb) for part in merge_groups(len(runs), MERGE_FAN_IN)]
                runs = list(ordered_map(_merge_runs, groups, pool, window=len(groups)))
        with atomic_output(out) as sink:
            report.pairs = _merge_into(runs, sink, memory_mb)
    return report
