"""The files evaluation scores: ELQ runs and qrels, TREC runs and qrels, and JSON Lines. Their
formats are the modules of :mod:`elquery.formats` (``elq``, ``trec_run``, ``trec_qrels``,
``jsonl``), which evaluation imports and nothing of the indexing, retrieval or linking layers;
the readers are re-exported here (and as ``elquery.evaluation.read_elq``, ...).

Every reader raises :class:`~elquery.evaluation.errors.EvaluationInputError` naming the file and
line for a malformed line, a duplicate, an undecodable line or an empty file. Files are read by
:mod:`elquery.formats.lines`: UTF-8 (a BOM is accepted), blank lines skipped, ``\\r\\n`` line ends
accepted.
"""

from __future__ import annotations

from elquery.formats.elq import read_elq
from elquery.formats.jsonl import read_jsonl
from elquery.formats.trec_qrels import read_trec_qrels
from elquery.formats.trec_run import read_trec_run

__all__ = ["read_elq", "read_jsonl", "read_trec_qrels", "read_trec_run"]
