"""The one line reader of every text format (queries, runs, qrels, links, JSON Lines), and the
rules for the fields of a line that several formats share: a query id, a decimal number, an
integer. docs/formats.md, "Conventions shared by every command", states them for the user.

* A text input is UTF-8; a byte order mark at the start of the first line is dropped.
* Lines end at ``\\n`` and nowhere else (U+2028, U+0085 or a lone ``\\r`` inside a line stay in
  it); what is removed is the line end, ``\\n`` or ``\\r\\n`` (and a ``\\r`` ending the last
  line): of ``\\r\\r\\n`` one ``\\r`` stays in the line's text.
* A line longer than :data:`MAX_LINE_BYTES` is an error rather than a read into memory (JSON Lines
  outputs of elquery's own, whose one record per query holds all its candidates, are read with no
  limit: ``max_line_bytes=None``).
* A blank line (empty or only whitespace) is skipped by every format (:func:`content_lines`);
  no format has comments except where its own module says so.
* ``-`` is standard input.
* A query id is non-empty and holds no whitespace (:func:`is_qid`): it is a field of TREC and ELQ
  lines, split at whitespace or tabs.

Every error of a line is one line naming the file and line: ``path:line: reason``
(:class:`FormatError`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeGuard

from elquery.base import ElqueryError
from elquery.files import is_stdio, open_binary_input

MAX_LINE_BYTES = 1 << 20
"""The longest line a text input may hold (1 MiB): query files, runs and qrels have short lines."""
BOM = b"\xef\xbb\xbf"
STDIN_NAME = "<stdin>"


class FormatError(ElqueryError):
    """A file that cannot be read in its format; the message is one line, ``path:line: reason``
    (``path: reason`` when the problem concerns the file as a whole rather than one line)."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, reason: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.reason = " ".join(reason.split())
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {self.reason}")


def input_name(path: Path | str) -> str:
    """How errors name an input: its path, or ``<stdin>`` for ``-``."""
    return STDIN_NAME if is_stdio(path) else os.fspath(path)


def stream_lines(handle: BinaryIO, name: str, max_line_bytes: int | None = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of a binary stream, by the rules of the module docstring;
    ``name`` is the input's name in errors."""
    number = 0
    while True:
        raw = handle.readline(-1 if max_line_bytes is None else max_line_bytes + 1)
        if not raw:
            return
        number += 1
        if max_line_bytes is not None and len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            raise FormatError(name, number, f"line longer than {max_line_bytes} bytes")
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(name, number, f"not valid UTF-8 ({exc.reason})") from None
        yield number, text.removesuffix("\n").removesuffix("\r")


def text_lines(path: Path | str, what: str, max_line_bytes: int | None = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of a text input (``-``: standard input); ``what`` names
    it when it is missing or a folder ("query file", ...)."""
    with open_binary_input(path, what) as handle:
        yield from stream_lines(handle, input_name(path), max_line_bytes)


def nonblank(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines that are not blank (empty or only whitespace)."""
    return ((number, text) for number, text in lines if text.strip())


def content_lines(path: Path | str, what: str, max_line_bytes: int | None = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """The lines of :func:`text_lines` that are not blank."""
    return nonblank(text_lines(path, what, max_line_bytes))


def record_lines(path: Path | str, what: str, max_line_bytes: int | None = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """:func:`content_lines` of a file that must hold at least one (a run, qrels, JSON Lines):
    none is an error."""
    seen = False
    for number, text in content_lines(path, what, max_line_bytes):
        seen = True
        yield number, text
    if not seen:
        raise FormatError(input_name(path), 1, "empty file: no lines to read")


def is_qid(value: object) -> TypeGuard[str]:
    """A query id: a non-empty string holding no whitespace."""
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)


def check_qid(qid: str, where: str | None = None) -> str:
    """``qid`` if it is a query id (:func:`is_qid`), else the one-line error of a query file or a
    writer, after ``where`` when given."""
    if not is_qid(qid):
        message = f"query id {qid!r} must be non-empty and hold no whitespace"
        raise ElqueryError(message if where is None else f"{where}: {message}")
    return qid


def whitespace_fields(name: str, line: int, text: str, layout: str) -> list[str]:
    """The whitespace-separated fields of a line of a TREC file, as many as ``layout`` names
    (``"qid Q0 docid rank score tag"``)."""
    fields = text.split()
    if len(fields) != len(layout.split()):
        raise FormatError(name, line, f"expected {len(layout.split())} fields {layout!r}, got {len(fields)}")
    return fields


# A decimal number as C's strtod (trec_eval) reads it whole: no digit separators such as "1_000",
# which Python's float() would accept.
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def decimal(name: str, line: int, text: str, what: str) -> float:
    """A field that is a decimal number (not NaN), as trec_eval reads it."""
    if not _NUMBER.fullmatch(text):
        raise FormatError(name, line, f"{what} {text!r} is not a number")
    value = float(text)
    if math.isnan(value):
        raise FormatError(name, line, f"{what} {text!r} is NaN, which has no order")
    return value


def integer(name: str, line: int, text: str, what: str) -> int:
    """A field that is an integer."""
    try:
        return int(text)
    except ValueError:
        raise FormatError(name, line, f"{what} {text!r} is not an integer") from None
