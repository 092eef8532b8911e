"""FACC1 count files: rows ``surface form<TAB>Freebase id<TAB>count`` (methods.md §3, FACC).

A Freebase id may be written ``/m/0abc``, ``m.0abc`` or ``http://rdf.freebase.com/ns/m.0abc``; all
are read as the canonical ``/m/0abc``. Files are plain, ``.gz`` or ``.bz2`` UTF-8 text; a row that
is not UTF-8 or longer than :data:`MAX_LINE_CHARS` is malformed (counted, reported with its line
number, skipped), and a truncated or corrupt file is an error naming it. Rows are
read in blocks: a block of well-formed rows is split with string methods that run in C, and only a
block holding a malformed row is read again line by line, to count and report that row.

``read_facc_coded`` (used by the build) reads the file's bytes, about ``BATCH_BLOCKS`` blocks at a
time (:func:`byte_batches`: no decoding, no text), with pyarrow's CSV parser, the forms kept in a
pyarrow array and the ids dictionary-encoded (or, all canonical, read from the column's buffers), so
Python touches no value of a row. A batch it cannot vouch for (bytes that are not UTF-8, a row that
is not three fields, a count that is not 1 to 18 ASCII digits or is 0, a carriage return, a byte
order mark) is decoded and read block by block as above, so the rows, the counts and the errors
reported are exactly those of the block reader (``read_facc_blocks``, which reads every batch so).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from elquery.base import ElqueryError
from elquery.indexing.ntriples import expand_files, open_binary
from elquery.indexing.surface_forms.arrow_arrays import numpy_of, string_buffers
from elquery.indexing.surface_forms.kernels import positive_counts
from elquery.indexing.surface_forms.mid_numbers import MidNumbers, Mids, arrow_mid_codes, entity_numbers

FREEBASE_NS = "http://rdf.freebase.com/ns/"
FACC_SUFFIXES = (".tsv", ".gz", ".bz2")
BLOCK_CHARS = 1 << 20
MAX_LINE_CHARS = 1 << 16
"""The longest FACC row read (64 Ki characters: a form, an id and a count are far shorter)."""
LONG_LINE = "\x00line too long\n"
BATCH_BLOCKS = 16
MAX_EXAMPLES = 5

_CANONICAL_MID = re.compile(r"/m/[0-9a-z_]+")
_INVALID_UTF8 = re.compile("[\udc80-\udcff]")  # the bytes that are not UTF-8, as surrogateescape decodes them
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
    """FACC count files, directories expanded (``.tsv``, ``.gz``, ``.bz2``; sorted)."""
    return expand_files(paths, FACC_SUFFIXES, "FACC count files (.tsv, .gz, .bz2)")


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
class ArrowRows:
    """Parsed rows of a batch, the raw forms in a pyarrow string array (one a row)."""

    texts: pa.Array
    entities: np.ndarray
    counts: np.ndarray

    @property
    def forms(self) -> list[str]:
        return self.texts.to_pylist()


@dataclass(frozen=True)
class Rows:
    """Parsed rows of one block: raw surface forms, DBpedia entity ids (-1: dropped) and counts."""

    forms: list[str]
    entities: np.ndarray
    counts: np.ndarray


_BOM = b"\xef\xbb\xbf"
_LONG_LINE_BYTES = 4 * MAX_LINE_CHARS
"""A line of more bytes holds more than :data:`MAX_LINE_CHARS` characters (each is at most 4 bytes)."""


def _line_end(chunk: bytes) -> int:
    """Where the last whole line of ``chunk`` ends: after its last LF, or after a CR that is not
    its last byte (text mode reads CR, LF and CR LF as line ends; a CR at the end may be the
    first half of a CR LF), 0 if none."""
    return max(chunk.rfind(b"\n"), chunk.rfind(b"\r", 0, len(chunk) - 1)) + 1


def byte_batches(path: Path) -> Iterator[bytes]:
    """Whole lines of ``path``'s bytes, about ``BATCH_BLOCKS * BLOCK_CHARS`` bytes at a time (lines
    end at LF, CR or CR LF, as text mode reads them): a byte order mark at the start dropped, the
    last line given a line end, and a line longer than :data:`_LONG_LINE_BYTES` bytes (so than
    :data:`MAX_LINE_CHARS` characters) skipped as it is read (never held whole), standing as
    :data:`LONG_LINE`, which the readers count as malformed."""
    long_line = LONG_LINE.encode("utf-8")
    with open_binary(path) as handle:
        rest = handle.read(len(_BOM))
        if rest == _BOM:
            rest = b""
        skipping, after_cr = False, False
        while chunk := handle.read(BATCH_BLOCKS * BLOCK_CHARS):
            if after_cr and chunk.startswith(b"\n"):  # the LF of a skipped line's CR LF
                chunk = chunk[1:]
            after_cr = False
            if skipping:
                ends = [at for at in (chunk.find(b"\n"), chunk.find(b"\r")) if at >= 0]
                if not ends:
                    continue
                end = min(ends) + 1
                if chunk[end - 1:end + 1] == b"\r\n":
                    end += 1
                after_cr = end == len(chunk) and chunk.endswith(b"\r")
                skipping, chunk = False, chunk[end:]
                yield long_line
            chunk = rest + chunk
            cut = _line_end(chunk)
            rest = chunk[cut:]
            if cut:
                yield chunk[:cut]
            if len(rest) > _LONG_LINE_BYTES:
                rest, skipping = b"", True
        if skipping:
            yield long_line
        elif rest:  # a last line without its line end (or, in a file of a few bytes, whole lines)
            yield rest if rest.endswith(b"\n") else rest + b"\n"


def _decoded_blocks(data: bytes) -> Iterator[str]:
    """The lines of a batch of :func:`byte_batches` as text (UTF-8, bytes that are not as lone
    surrogates, as ``open_text`` reads them; CR LF and CR read as LF), about ``BLOCK_CHARS``
    characters at a time."""
    text = data.decode("utf-8", "surrogateescape")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    start = 0
    while start < len(text):
        end = text.find("\n", min(len(text), start + BLOCK_CHARS) - 1) + 1 or len(text)
        yield text[start:end]
        start = end


def _fast_rows(block: str) -> tuple[list[str], list[str], np.ndarray] | None:
    """Forms, canonical ids and counts of a block of well-formed rows; None if any row is not."""
    if not block.isascii() and _INVALID_UTF8.search(block):
        return None
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
    forms = fields[0 : 3 * lines : 3]
    if lines and max(map(len, forms)) > MAX_LINE_CHARS:
        return None
    return forms, fields[1::3], counts


def _slow_rows(block: str, where: str, first_line: int, report: FaccReport) -> tuple[list[str], list[str], np.ndarray]:
    """Line by line: well-formed rows are returned, malformed ones counted and reported."""
    forms: list[str] = []
    mids: list[str] = []
    counts: list[int] = []
    for number, line in enumerate(block.split("\n"), first_line):
        if not line.strip():
            continue
        report.rows += 1
        if line == LONG_LINE[:-1] or len(line) > MAX_LINE_CHARS:
            report.malformed(f"{where}:{number}", f"line longer than {MAX_LINE_CHARS} characters")
            continue
        if not line.isascii() and _INVALID_UTF8.search(line):
            report.malformed(f"{where}:{number}", "not valid UTF-8")
            continue
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


def _block_rows(block: str, path: Path, line: int, mids: Mids, report: FaccReport) -> Rows:
    """The rows of one block read from line ``line`` of ``path`` (fast path, else line by line)."""
    parsed = _fast_rows(block)
    if parsed is None:
        forms, row_mids, counts = _slow_rows(block, str(path), line, report)
    else:
        forms, row_mids, counts = parsed
        report.rows += len(forms)
    entities = entity_numbers(mids, row_mids)
    for index in np.flatnonzero(entities < 0).tolist():
        mid = row_mids[index]
        if _CANONICAL_MID.fullmatch(mid):
            report.unmapped(mid, int(counts[index]))
        else:  # only the fast path lets a malformed id through
            report.malformed(f"{path}:{line + index}", f"not a Freebase id: {mid!r}")
    report.mapped_rows += int(np.count_nonzero(entities >= 0))
    return Rows(forms, entities, counts)


@contextmanager
def _read_errors(path: Path) -> Iterator[None]:
    """Read errors of ``path`` raised as ``ElqueryError``."""
    try:
        yield
    except FileNotFoundError as exc:
        raise ElqueryError(f"{path}: no such file") from exc
    except (EOFError, OSError, zlib.error) as exc:
        raise ElqueryError(f"{path}: truncated or corrupt file ({exc})") from exc


def read_facc(path: Path, mids: Mids, report: FaccReport) -> Iterator[Rows | ArrowRows]:
    """Stream the rows of one count file, with Freebase ids mapped to entity ids through ``mids``;
    rows with an unmapped id get entity -1 and are counted in ``report``."""
    return read_facc_coded(path, mids, report)


def read_facc_blocks(path: Path, mids: Mids, report: FaccReport) -> Iterator[Rows]:
    """``read_facc`` block by block, without pyarrow (the reference the batched reader matches:
    the same batches, each decoded and read by blocks)."""
    report.files += 1
    line = 1
    with _read_errors(path):
        for data in byte_batches(path):
            for block in _decoded_blocks(data):
                rows = _block_rows(block, path, line, mids, report)
                line += block.count("\n")
                yield rows


_COUNT_DIGITS = 18  # ASCII digits below 2**63: int() reads them, to the same value
_READ_OPTIONS = pa_csv.ReadOptions(column_names=["form", "mid", "count"], use_threads=False, block_size=1 << 30)
_CONVERT_OPTIONS = pa_csv.ConvertOptions(
    column_types={"form": pa.string(), "mid": pa.string(), "count": pa.string()},
    null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
)


def _invalid_row(_row) -> str:
    return "error"  # a row that is not three fields: the batch is read block by block


_PARSE_OPTIONS = pa_csv.ParseOptions(
    delimiter="\t", quote_char=False, escape_char=False, double_quote=False, newlines_in_values=False,
    ignore_empty_lines=False, invalid_row_handler=_invalid_row,
)


def _arrow_rows(data: bytes) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray] | None:
    """Forms, ids (raw) and counts of a batch of lines (bytes) if every line is a well-formed row
    as the block reader's fast path reads it (UTF-8, three fields, a positive count); else None."""
    if b"\r" in data or data.startswith(_BOM):  # line ends and a BOM pyarrow reads differently
        return None
    try:  # pyarrow checks that the strings are UTF-8 (the block reader counts the rows that are not)
        table = pa_csv.read_csv(pa.py_buffer(data), read_options=_READ_OPTIONS,
                                parse_options=_PARSE_OPTIONS, convert_options=_CONVERT_OPTIONS)
    except pa.ArrowInvalid:
        return None
    if table.num_rows != data.count(b"\n"):
        return None
    counts = positive_counts(*string_buffers(table.column("count").combine_chunks()), _COUNT_DIGITS)
    if counts is None:  # a count that is not 1 to 18 ASCII digits, or is 0
        return None
    forms = table.column("form").combine_chunks()
    if len(forms) and int(np.diff(string_buffers(forms)[0]).max()) > MAX_LINE_CHARS:  # bytes, then characters
        if pc.max(pc.utf8_length(forms)).as_py() > MAX_LINE_CHARS:
            return None
    return table.column("form"), table.column("mid"), counts


_MID_PREFIX = r"^(?:" + re.escape(FREEBASE_NS) + r"m\.|m\.)"  # as the block reader's fast path rewrites ids


def _dictionary(column: pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """Distinct values (in order of first occurrence) and each row's index among them."""
    encoded = pc.dictionary_encode(column.combine_chunks() if column.num_chunks != 1 else column.chunk(0))
    return encoded.dictionary, numpy_of(encoded.indices).astype(np.int64)


def _canonical_batch(row_mids: pa.ChunkedArray, counts: np.ndarray, mids: MidNumbers, report: FaccReport) -> np.ndarray | None:
    """The entity numbers of a batch whose ids are all canonical (``/m/…``, as :func:`arrow_mid_codes`
    encodes them from the column's buffers), its rows counted in ``report`` as :func:`_batch_rows`
    counts them; None for a batch with any other id."""
    column = row_mids.combine_chunks() if row_mids.num_chunks != 1 else row_mids.chunk(0)
    codes = arrow_mid_codes(column)
    if codes is None:
        return None
    entities = mids.numbers_of_codes(codes)
    unmapped = np.flatnonzero(entities < 0)
    report.rows += len(counts)
    report.mapped_rows += len(counts) - len(unmapped)
    if len(unmapped):
        report.unmapped_rows += len(unmapped)
        report.unmapped_count += int(counts[unmapped].sum())
        _, first = np.unique(codes[unmapped], return_index=True)
        for index in np.sort(unmapped[first]).tolist():  # distinct ids in order of first occurrence
            if len(report.unmapped_examples) >= MAX_EXAMPLES:
                break
            if (mid := column[index].as_py()) not in report.unmapped_examples:
                report.unmapped_examples.append(mid)
    return entities


def _batch_rows(forms: pa.ChunkedArray, row_mids: pa.ChunkedArray, counts: np.ndarray, path: Path, line: int,
                mids: Mids, report: FaccReport) -> ArrowRows:
    texts = forms.combine_chunks() if forms.num_chunks != 1 else forms.chunk(0)
    if isinstance(mids, MidNumbers) and (entities := _canonical_batch(row_mids, counts, mids, report)) is not None:
        return ArrowRows(texts, entities, counts)
    raw_mids, mid_codes = _dictionary(row_mids)
    keys = pc.replace_substring_regex(raw_mids, _MID_PREFIX, "/m/", max_replacements=1).to_pylist()
    lookup = entity_numbers(mids, keys)
    entities = lookup[mid_codes]
    report.rows += len(counts)
    if (lookup < 0).any():
        malformed = np.zeros(len(keys), bool)
        for code in np.flatnonzero(lookup < 0).tolist():
            malformed[code] = not _CANONICAL_MID.fullmatch(keys[code])
        bad_rows = np.flatnonzero(entities < 0)
        bad_codes = mid_codes[bad_rows]
        is_malformed = malformed[bad_codes]
        unmapped_rows = bad_rows[~is_malformed]
        report.unmapped_rows += len(unmapped_rows)
        report.unmapped_count += int(counts[unmapped_rows].sum())
        # examples: unmapped ids in order of first occurrence (dictionary order is that order)
        for code in np.unique(mid_codes[unmapped_rows]).tolist():
            if len(report.unmapped_examples) >= MAX_EXAMPLES:
                break
            if keys[code] not in report.unmapped_examples:
                report.unmapped_examples.append(keys[code])
        malformed_rows = bad_rows[is_malformed]
        for index in malformed_rows[: MAX_EXAMPLES].tolist():
            report.malformed(f"{path}:{line + index}", f"not a Freebase id: {keys[mid_codes[index]]!r}")
        report.malformed_rows += max(0, len(malformed_rows) - MAX_EXAMPLES)
    report.mapped_rows += int(np.count_nonzero(entities >= 0))
    return ArrowRows(texts, entities, counts)


def read_facc_coded(path: Path, mids: Mids, report: FaccReport) -> Iterator[Rows | ArrowRows]:
    """``read_facc`` in batches of bytes parsed by pyarrow (:func:`byte_batches`), forms
    dictionary-encoded; a batch pyarrow cannot vouch for is decoded and read block by block
    (as ``read_facc_blocks``), so the rows and the report are the same."""
    report.files += 1
    line = 1
    with _read_errors(path):
        for data in byte_batches(path):
            parsed = _arrow_rows(data)
            if parsed is None:
                for block in _decoded_blocks(data):
                    yield _block_rows(block, path, line, mids, report)
                    line += block.count("\n")
            else:
                yield _batch_rows(*parsed, path, line, mids, report)
                line += len(parsed[2])
