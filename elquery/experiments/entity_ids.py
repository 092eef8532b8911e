"""Qrels, runs and LTR labels of an experiment written in any identifier scheme
(docs/identifiers.md: DBpedia ids, Wikipedia titles and URLs, Wikidata QIDs, Freebase mids,
Wikipedia page ids): read here, with every entity id resolved to its DBpedia id through the
identifiers table of the experiment's entity index (:class:`~elquery.kb.identifiers.WrittenIds`),
before the evaluators see them (:mod:`elquery.evaluation` compares ids as they are and knows no
scheme). So qrels in Wikidata QIDs score a DBpedia run, and a run written with ``--entity-ids
wikidata`` scores as the DBpedia run it was written from. The experiment's own runs are read the
same way (their DBpedia ids resolve to themselves; any other id a backend gives is canonicalized
as its qrels' are), each distinct id looked up once per experiment. ``elquery evaluate --index``
(:mod:`elquery.experiments.evaluate_ids`) and the MCP ``evaluate`` tool read theirs with the same
readers.

An id that resolves to no entity (an unknown QID, mid or page id, or any of them without a table)
is compared as written; one line on stderr per file says how many. Two ids of a query that name
the same entity count once: a judged entity keeps its highest relevance, a ranked one its highest
score.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from elquery.evaluation.readers import read_elq, read_trec_qrels, read_trec_run
from elquery.formats.elq import ElqData
from elquery.kb.identifiers import IdentifierTable, WrittenIds, table_of_index

Value = TypeVar("Value", int, float)


class ExperimentIds:
    """The readers of an experiment's qrels and runs, resolving their ids through the
    identifiers table of ``index`` (None, or an index without a table: DBpedia spellings only);
    each file's unresolved ids are reported once: kept in :attr:`notes` and, unless ``command`` is
    None, printed on stderr after ``command: `` (``elquery evaluate --index`` reads its files with
    these readers too, the MCP ``evaluate`` tool answers the notes as warnings)."""

    def __init__(self, index: Path | None, command: str | None = "elquery experiment",
                 notes: list[str] | None = None) -> None:
        self.table: IdentifierTable | None = table_of_index(index)
        self.command = command
        self.notes: list[str] = [] if notes is None else notes
        """One line per file with unresolved ids, in the order read (appended to ``notes`` if given)."""
        self._resolved: dict[str, str | None] = {}
        self._noted: set[Path] = set()

    def elq(self, path: Path, source: Path | None = None) -> ElqData:
        """An ELQ qrels or run file (:func:`~elquery.formats.elq.read_elq`), its ids resolved;
        ``source``: the file its ids were written in (a given run a cross-validated run combines),
        named by the note instead of ``path``."""
        ids = WrittenIds(self.table, self._resolved)
        data = {qid: frozenset(frozenset(map(ids, interpretation)) for interpretation in interpretations)
                for qid, interpretations in read_elq(path).items()}
        self._note(ids, source or path)
        return data

    def trec_qrels(self, path: Path, source: Path | None = None) -> dict[str, dict[str, int]]:
        """TREC qrels (:func:`~elquery.formats.trec_qrels.read_trec_qrels`), their ids resolved;
        ``source`` as for :meth:`elq`."""
        ids = WrittenIds(self.table, self._resolved)
        qrels = _merged(read_trec_qrels(path), ids)
        self._note(ids, source or path)
        return qrels

    def trec_run(self, path: Path, source: Path | None = None) -> dict[str, dict[str, float]]:
        """A TREC run (:func:`~elquery.formats.trec_run.read_trec_run`), its ids resolved;
        ``source`` as for :meth:`elq`."""
        ids = WrittenIds(self.table, self._resolved)
        run = _merged(read_trec_run(path), ids)
        self._note(ids, source or path)
        return run

    def ground_truth(self, path: Path) -> dict[str, frozenset[str]]:
        """Per query of ELQ qrels, the DBpedia ids of its ground-truth entities (LTR labels,
        :func:`~elquery.linking.ltr.feature_file.read_ground_truth`)."""
        from elquery.linking.ltr.feature_file import read_ground_truth

        ids = WrittenIds(self.table, self._resolved)
        truth = read_ground_truth(path, ids)
        self._note(ids, path)
        return truth

    def _note(self, ids: WrittenIds, source: Path) -> None:
        note = ids.note(str(source))
        if note is not None and source not in self._noted:
            self._noted.add(source)
            self.notes.append(note)
            if self.command is not None:
                print(f"{self.command}: {note}", file=sys.stderr)


def _merged(data: Mapping[str, Mapping[str, Value]], ids: Callable[[str], str]) -> dict[str, dict[str, Value]]:
    """Per query, each id's value under its resolved id; ids naming the same entity keep the highest."""
    merged: dict[str, dict[str, Value]] = {}
    for qid, values in data.items():
        resolved = merged[qid] = {}
        for written, value in values.items():
            entity = ids(written)
            resolved[entity] = max(value, resolved.get(entity, value))
    return merged
