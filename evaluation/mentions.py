"""Mention-detection recall (methods.md section 7): per query with a non-empty ground truth, the
fraction of ground-truth entities present among the detected candidates; macro-averaged."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from statistics import fmean


@dataclass(frozen=True)
class MentionRecall:
    """Macro-averaged recall and the per-query values it averages."""

    recall: float
    queries: int
    per_query: Mapping[str, float]


def mention_detection_recall(
    gold: Mapping[str, Set[str]], candidates: Mapping[str, Iterable[str]]
) -> MentionRecall:
    """Recall of the candidate entities against the ground-truth entities. Queries with an empty
    ground truth are skipped; a query missing from ``candidates`` has recall 0."""
    per_query = {}
    for qid in sorted(gold):
        if gold[qid]:
            found = gold[qid] & frozenset(candidates.get(qid, ()))
            per_query[qid] = len(found) / len(gold[qid])
    if not per_query:
        raise ValueError("no query has a ground-truth entity")
    return MentionRecall(fmean(per_query.values()), len(per_query), per_query)
