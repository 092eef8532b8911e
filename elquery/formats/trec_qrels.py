"""TREC qrels: ``qid iteration docid relevance`` per line (whitespace-separated), graded integer
relevance (DBpedia-Entity v2 judges 0, 1, 2), as trec_eval reads them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.formats.lines import FormatError, check_qid, input_name, integer, record_lines, whitespace_fields

WHAT = "TREC qrels file"
TrecQrels = dict[str, dict[str, int]]


def read_trec_qrels(path: Path | str) -> TrecQrels:
    """Read TREC qrels, ``qid iteration docid relevance`` (whitespace-separated, graded integer
    relevance). A docid judged twice for a query is an error."""
    name = input_name(path)
    qrels: TrecQrels = {}
    for line, text in record_lines(path, WHAT):
        qid, _, doc, rel = whitespace_fields(name, line, text, "qid iteration docid relevance")
        judged = qrels.setdefault(qid, {})
        if doc in judged:
            raise FormatError(name, line, f"{doc!r} judged twice for query {qid!r}")
        judged[doc] = integer(name, line, rel, "relevance")
    return qrels


def write_trec_qrels(path: Path | str, qrels: Mapping[str, Mapping[str, int]]) -> int:
    """Write qrels ``{qid: {docid: relevance}}`` (iteration 0) that :func:`read_trec_qrels` reads
    back (``-``: standard output); returns the number of lines."""
    count = 0
    with atomic_output(path) as out:
        for qid, judged in qrels.items():
            check_qid(qid)
            for doc, relevance in judged.items():
                if not doc or any(c.isspace() for c in doc):
                    raise ElqueryError(f"docid {doc!r} must be non-empty and hold no whitespace")
                if isinstance(relevance, bool) or not isinstance(relevance, int):
                    raise ElqueryError(f"relevance {relevance!r} of {doc!r} for query {qid!r} is not an integer")
                out.write(f"{qid} 0 {doc} {relevance}\n")
                count += 1
    return count
