"""Query files: TSV (``qid<TAB>query`` per line) or JSON (``{"qid": "query", ...}``, by the
``.json`` suffix; on standard input, ``-``, by a leading ``{``). The same rules for both: UTF-8
(a byte order mark is dropped), a qid is non-empty and holds no whitespace (it becomes a field of
TREC and ELQ run lines), a qid given twice is an error, a blank query (empty or only whitespace)
is an error, and each error is one line naming the file and line. TSV lines are read by
:mod:`elquery.formats.lines` (from a file or standard input alike); blank lines are skipped. A JSON
file nested deeper than Python's parser goes (``[[[[...``) is invalid JSON, one line like any other.

The rule for one query holds at every door (:func:`check_query_text`): ``elquery link ""``, a
query file, :class:`~elquery.linking.Linker` and the service refuse a blank query alike, and a
query (or qid) holding a lone surrogate: a JSON escape such as ``"\\ud800"`` that stands for no
character, so is not Unicode text (it could not be written to any output); the whole file is
refused, naming the query, as for a blank query."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError
from elquery.files import atomic_output, is_stdio, open_binary_input
from elquery.formats.lines import check_qid, content_lines, input_name, nonblank, stream_lines

WHAT = "query file"
BLANK = "is blank (empty or only whitespace)"
NOT_TEXT = "holds a lone surrogate (U+{:04X}), which is not Unicode text"
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate (U+D800 to U+DFFF, which JSON's ``\\uD800`` escapes can give) of
    ``text``, else None."""
    found = None if text.isascii() else _SURROGATE.search(text)
    return None if found is None else found.group()


def check_unicode(text: str, qid: str | None = None, where: str | None = None) -> str:
    """``text``, if it holds no lone surrogate; else the one-line error of :data:`NOT_TEXT`, as
    :func:`check_query_text` gives it (the rule of a searcher, which ranks a blank query to nothing)."""
    surrogate = lone_surrogate(text)
    if surrogate is None:
        return text
    message = f"the query {NOT_TEXT.format(ord(surrogate))}" if qid is None else \
        f"query {qid!r} {NOT_TEXT.format(ord(surrogate))}"
    raise ElqueryError(message if where is None else f"{where}: {message}")


def check_query_text(text: str, qid: str | None = None, where: str | None = None) -> str:
    """``text``, if it holds more than whitespace; else the one-line error every door gives: "the
    query is blank (...)", or "query 'QID' is blank (...)" for a query of a batch, after ``where``
    (``file:line``) when given; the same for a query holding a lone surrogate (:data:`NOT_TEXT`)."""
    check_unicode(text, qid, where)
    if text.strip():
        return text
    message = f"the query {BLANK}" if qid is None else f"query {qid!r} {BLANK}"
    raise ElqueryError(message if where is None else f"{where}: {message}")


@dataclass(frozen=True)
class QueryRecord:
    """A query of a query file, with its linked entities (entity, score) when a links file gave
    them (``elquery rank --links``)."""

    qid: str
    text: str
    links: tuple[tuple[str, float], ...] = ()


def read_queries(path: Path | str) -> list[QueryRecord]:
    """The queries of a TSV or JSON query file (``-``: standard input), in file order; a file with
    none is an error."""
    name = input_name(path)
    if is_stdio(path):
        with open_binary_input(path, WHAT) as handle:
            data = handle.read()
        if data.decode("utf-8-sig", errors="replace").lstrip().startswith("{"):
            queries = _read_json(name, _decode(name, data))
        else:
            queries = _read_tsv(name, nonblank(stream_lines(io.BytesIO(data), name)))
    elif Path(path).suffix.lower() == ".json":
        with open_binary_input(path, WHAT) as handle:
            queries = _read_json(name, _decode(name, handle.read()))
    else:
        queries = _read_tsv(name, content_lines(path, WHAT))
    if not queries:
        raise ElqueryError(f"{name}: no queries in this file")
    return queries


def write_queries(path: Path | str, queries: Iterable[tuple[str, str]]) -> int:
    """Write ``(qid, query)`` pairs as a query file that :func:`read_queries` reads back: JSON for
    a ``.json`` path, TSV otherwise (``-``: standard output); the qid and query rules of the
    readers hold (and a TSV query holds no line end); returns the number of queries."""
    pairs = list(queries)
    seen: dict[str, str] = {}
    for number, (qid, query) in enumerate(pairs, 1):
        where = f"query {number}"
        _check_qid(where, qid, seen)
        check_query_text(query, qid, where)
    as_json = not is_stdio(path) and Path(path).suffix.lower() == ".json"
    if not as_json:
        for qid, query in pairs:
            if "\n" in query or "\r" in query:
                raise ElqueryError(f"query {qid!r} holds a line end and cannot go into a TSV query file")
    with atomic_output(path) as out:
        if as_json:
            out.write(json.dumps(dict(pairs), ensure_ascii=False, indent=1) + "\n")
        else:
            out.writelines(f"{qid}\t{query}\n" for qid, query in pairs)
    return len(pairs)


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ElqueryError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _check_qid(where: str, qid: str, seen: dict[str, str]) -> None:
    check_qid(qid, where)
    surrogate = lone_surrogate(qid)
    if surrogate is not None:
        raise ElqueryError(f"{where}: query id {qid!r} {NOT_TEXT.format(ord(surrogate))}")
    if qid in seen:
        raise ElqueryError(f"{where}: query id {qid!r} given twice (first at {seen[qid]})")
    seen[qid] = where


def _read_tsv(name: str, lines: Iterator[tuple[int, str]]) -> list[QueryRecord]:
    queries: list[QueryRecord] = []
    seen: dict[str, str] = {}
    for number, line in lines:
        qid, tab, query = line.partition("\t")
        if not tab:
            raise ElqueryError(f"{name}:{number}: expected 'qid<TAB>query', got {line[:60]!r}")
        _check_qid(f"{name}:{number}", qid, seen)
        queries.append(QueryRecord(qid, check_query_text(query, qid, f"{name}:{number}").strip()))
    return queries


def _read_json(name: str, text: str) -> list[QueryRecord]:
    try:
        pairs = json.loads(text, object_pairs_hook=list)
    except json.JSONDecodeError as exc:
        raise ElqueryError(f"{name}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise ElqueryError(f"{name}: invalid JSON (nested too deeply)") from None
    if not isinstance(pairs, list) or text.lstrip()[:1] != "{":
        raise ElqueryError(f"{name}: expected a JSON object {{qid: query}}, got {type(pairs).__name__}")
    queries = []
    seen: dict[str, str] = {}
    for qid, query in pairs:
        _check_qid(f"{name}: query {qid!r}", qid, seen)
        if not isinstance(query, str):
            raise ElqueryError(f"{name}: query {qid!r}: expected a string query, got {type(query).__name__}")
        queries.append(QueryRecord(qid, check_query_text(query, qid, name).strip()))
    return queries
