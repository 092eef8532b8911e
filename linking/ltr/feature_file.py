"""Feature files of learning to rank (methods.md §9): what ``elquery ltr features`` writes and
``elquery ltr train`` reads, and the ground truth that labels them.

TSV (the default): a header row, then one row per candidate pair with the columns
:data:`KEY_COLUMNS` (``qid``, ``mention`` (normalized), ``start``, ``end`` (character offsets of the
mention in the query), ``entity`` (``<dbpedia:X>``), ``label`` (1 if the entity is in some
ground-truth interpretation of the query, 0 if not, empty without ground truth)) and the 28
features in :data:`~elquery.linking.ltr.features.FEATURES` order. Numbers are written so they read
back exactly (whole numbers without a fraction, others as Python's shortest round-trip repr).

LETOR (SVMlight) layout, as RankLib, LightGBM and XGBoost read it: ``#`` header lines naming the
features by number, then ``label qid:N 1:v 2:v ... 28:v # qid mention entity`` per pair, N the
query's ordinal (1, 2, ... in input order; the qid itself is in the comment); the label is 0 when
no ground truth was given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from elquery.base import ElqueryError
from elquery.files import sha256_of
from elquery.formats.elq import read_elq
from elquery.formats.lines import text_lines
from elquery.kb.identifiers import WrittenIds, parse_identifier
from elquery.linking.ltr.features import FEATURES, CandidatePair

KEY_COLUMNS = ("qid", "mention", "start", "end", "entity", "label")
FORMATS = ("tsv", "letor")
WHAT = "features file"


def number_text(value: float) -> str:
    """A feature value as text that reads back exactly: ``3`` for a whole number, else repr."""
    value = float(value)
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


@dataclass(frozen=True)
class QueryFeatures:
    """The candidate pairs of one query with their feature rows and labels (None: unlabelled)."""

    qid: str
    pairs: Sequence[CandidatePair]
    matrix: np.ndarray
    labels: Sequence[int] | None


def tsv_header() -> str:
    return "\t".join((*KEY_COLUMNS, *FEATURES)) + "\n"


def tsv_lines(query: QueryFeatures) -> Iterable[str]:
    for number, (pair, row) in enumerate(zip(query.pairs, query.matrix)):
        label = "" if query.labels is None else str(query.labels[number])
        keys = (query.qid, pair.mention.text, str(pair.start), str(pair.end), pair.entity, label)
        yield "\t".join((*keys, *map(number_text, row))) + "\n"


def letor_header(labelled: bool) -> str:
    names = " ".join(f"{n}:{name}" for n, name in enumerate(FEATURES, 1))
    labels = "1 if the entity is in some ground-truth interpretation of the query, else 0" if labelled else \
        "none given (no ground truth): every label is 0"
    return f"# elquery LTR features (methods.md section 9): {names}\n# labels: {labels}\n"


def letor_lines(query: QueryFeatures, ordinal: int) -> Iterable[str]:
    for number, (pair, row) in enumerate(zip(query.pairs, query.matrix)):
        label = 0 if query.labels is None else query.labels[number]
        values = " ".join(f"{n}:{number_text(v)}" for n, v in enumerate(row, 1))
        yield f"{label} qid:{ordinal} {values} # {query.qid} {pair.mention.text} {pair.entity}\n"


def write_features(stream: IO[str], queries: Iterable[QueryFeatures], form: str, labelled: bool) -> int:
    """Write the features of ``queries`` in ``form`` (:data:`FORMATS`); returns the rows written."""
    rows = 0
    stream.write(tsv_header() if form == "tsv" else letor_header(labelled))
    for ordinal, query in enumerate(queries, 1):
        lines = tsv_lines(query) if form == "tsv" else letor_lines(query, ordinal)
        for line in lines:
            stream.write(line)
            rows += 1
    return rows


# --- ground truth ---------------------------------------------------------------------------------


def read_ground_truth(path: Path | str, ids: WrittenIds | None = None) -> dict[str, frozenset[str]]:
    """Per query, the entities of all its ground-truth interpretations, from ELQ qrels
    (``qrels-elq.txt``, read by :func:`~elquery.formats.elq.read_elq`), as DBpedia ids: each id in
    any spelling of docs/identifiers.md resolved by ``ids`` (through the index's identifiers table;
    by default without one, as DBpedia ids), one that resolves to no entity kept as written and
    counted in ``ids``. A text that is no entity id in any spelling is an error."""
    ids = WrittenIds(None) if ids is None else ids
    truth: dict[str, frozenset[str]] = {}
    for qid, interpretations in read_elq(path).items():
        entities = {entity for interpretation in interpretations for entity in interpretation}
        bad = sorted(entity for entity in entities if parse_identifier(entity) is None)
        if bad:
            raise ElqueryError(f"{path}: query {qid}: not an entity id: {bad[0][:80]!r}")
        truth[qid] = frozenset(ids(entity) for entity in entities)
    return truth


# --- reading a TSV features file -----------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureTable:
    """A labelled TSV features file, read for training: the feature matrix (columns in
    :data:`FEATURES` order whatever the file's), the labels, each row's qid, and the file's
    SHA-256."""

    path: Path
    sha256: str
    qids: tuple[str, ...]
    labels: np.ndarray
    matrix: np.ndarray

    @property
    def queries(self) -> int:
        return len(set(self.qids))


def _columns(path: Path | str, header: str, features: Sequence[str]) -> list[int]:
    """Where each key column and each of ``features`` is in the header row."""
    names = header.split("\t")
    for name in names:
        if name not in KEY_COLUMNS and name not in features:
            raise ElqueryError(f"{path}:1: unknown feature name {name!r} (features are {', '.join(features)})")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ElqueryError(f"{path}:1: column {twice!r} given twice")
    for name in (*KEY_COLUMNS, *features):
        if name not in names:
            raise ElqueryError(f"{path}:1: missing column {name!r} (a features file has the columns "
                               f"{', '.join(KEY_COLUMNS)} and the {len(features)} features)")
    return [names.index(name) for name in (*KEY_COLUMNS, *features)]


def read_features(path: Path | str, features: Sequence[str] = FEATURES) -> FeatureTable:
    """Read a labelled TSV features file (as ``elquery ltr features --qrels`` writes); a missing or
    unknown column, a row of another width, an empty or non-0/1 label, or a value that is not a
    finite number is a one-line error naming the file and line."""
    lines = text_lines(path, WHAT)
    first = next(lines, None)
    if first is None:
        raise ElqueryError(f"{path}: empty features file (no header row)")
    if first[1].startswith("#"):
        raise ElqueryError(f"{path}: a LETOR features file; training reads the tsv format (elquery ltr features --format tsv)")
    order = _columns(path, first[1], features)
    width = len(first[1].split("\t"))
    label_at = order[KEY_COLUMNS.index("label")]
    value_at = order[len(KEY_COLUMNS):]
    qids, labels, rows = [], [], []
    for number, line in lines:
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != width:
            raise ElqueryError(f"{path}:{number}: {len(cells)} columns, the header has {width}")
        label = cells[label_at]
        if label not in ("0", "1"):
            what = "no label (write the file with --qrels to train on it)" if not label else f"label {label!r}"
            raise ElqueryError(f"{path}:{number}: {what}; labels are 0 or 1")
        try:
            values = [float(cells[i]) for i in value_at]
        except ValueError:
            bad = next(cells[i] for i in value_at if not _is_number(cells[i]))
            raise ElqueryError(f"{path}:{number}: feature value {bad!r} is not a number") from None
        if not all(math.isfinite(v) for v in values):
            raise ElqueryError(f"{path}:{number}: a feature value is not finite")
        qids.append(cells[order[0]])
        labels.append(int(label))
        rows.append(values)
    if not rows:
        raise ElqueryError(f"{path}: no rows after the header (no candidate pairs to learn from)")
    return FeatureTable(Path(path), sha256_of(path), tuple(qids), np.array(labels, dtype=np.int8),
                        np.array(rows, dtype=np.float64))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def labels_of(qid: str, pairs: Sequence[CandidatePair], truth: Mapping[str, frozenset[str]]) -> list[int]:
    """1 for a pair whose entity is in some ground-truth interpretation of the query, else 0."""
    relevant = truth.get(qid, frozenset())
    return [int(pair.entity in relevant) for pair in pairs]
