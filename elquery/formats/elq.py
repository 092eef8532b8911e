"""ELQ files: the interpretations of queries, as runs (``elquery link --format elq``) and as qrels
(``qrels-elq.txt``, whose score field is 1): ``qid<TAB>score<TAB>entity<TAB>entity...``, one line
per interpretation (entities in mention order), and a bare ``qid`` line for a query with none."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.formats.lines import FormatError, check_qid, decimal, input_name, is_qid, record_lines

WHAT = "ELQ file"
EntitySet = frozenset[str]
ElqData = dict[str, frozenset[EntitySet]]
ElqInterpretation = tuple[float, Sequence[str]]
"""One interpretation to write: its score and its entities in mention order."""


def number(value: float) -> str:
    """Scores as text, exactly (shortest round-trip form), so rounding never creates ties."""
    return repr(float(value))


def elq_lines(qid: str, interpretations: Iterable[ElqInterpretation]) -> Iterator[str]:
    """The lines of one query (without line ends): one per interpretation, a bare ``qid`` when it
    has none."""
    check_qid(qid)
    written = False
    for score, entities in interpretations:
        for entity in entities:
            if not entity or entity != entity.strip() or "\t" in entity or "\n" in entity:
                raise ElqueryError(f"entity id {entity!r} cannot go into an ELQ line (empty, a tab or a line end, "
                                   "or whitespace around it)")
        written = True
        yield "\t".join((qid, number(score), *entities))
    if not written:
        yield qid


def write_elq(path: Path | str, queries: Iterable[tuple[str, Iterable[ElqInterpretation]]]) -> int:
    """Write ``(qid, interpretations)`` per query as an ELQ file that :func:`read_elq` reads back
    (``-``: standard output); returns the number of queries."""
    count = 0
    with atomic_output(path) as out:
        for qid, interpretations in queries:
            out.writelines(line + "\n" for line in elq_lines(qid, interpretations))
            count += 1
    return count


def read_elq(path: Path | str) -> ElqData:
    """Read an ELQ run or qrels file: ``qid<TAB>score<TAB>entity<TAB>entity...``, one line per
    interpretation, and a bare ``qid`` line for a query with no interpretation.

    A bare qid marks the query as processed; it may also appear next to interpretation lines of
    the same query. A ``qid<TAB>score`` line with no entity counts like a bare qid (the published
    evaluation scripts read it so). Entity ids are opaque strings; an entity repeated inside one
    line counts once (an interpretation is a set), and so does an entity set given twice for a
    query: a query's interpretations are a set too (one warning line on stderr counts the
    repeats). An empty field, whitespace inside the qid, or a score that is not a number is an
    error.
    """
    name = input_name(path)
    data: dict[str, dict[EntitySet, int]] = {}
    repeated = 0
    for line, text in record_lines(path, WHAT):
        fields = text.strip().split("\t")
        qid = fields[0]
        if not is_qid(qid):
            raise FormatError(name, line, f"bad query id {qid!r} (fields must be tab-separated, qid first)")
        if any(not field for field in fields[1:]):
            raise FormatError(name, line, "empty field (two tabs in a row)")
        interpretations = data.setdefault(qid, {})
        if len(fields) == 1:
            continue
        decimal(name, line, fields[1], "score")
        if len(fields) == 2:
            continue
        interpretation = frozenset(fields[2:])
        if interpretation in interpretations:
            repeated += 1
            continue
        interpretations[interpretation] = line
    if repeated:
        print(f"warning: {name}: {repeated} repeated interpretations (the same entity "
              "set again for a query) count once", file=sys.stderr)
    return {qid: frozenset(interpretations) for qid, interpretations in data.items()}
