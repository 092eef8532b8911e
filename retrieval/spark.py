"""Ranking on Apache Spark (``elquery rank --engine spark``, and a DataFrame API).

Each executor's Python worker opens the index once (:func:`elquery.spark.worker_cached`) and ranks
every query of the partitions it is given with it, so the index must be at the same path on every
node (a shared file system, or copied there before the job; docs/spark.md). The rankings are those
of :meth:`elquery.retrieval.searcher.Searcher.rank`, so a run written from them is the local run,
byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elquery.retrieval.models import DEFAULT_K, check_k
from elquery.spark import ordered_partitions, worker_cached

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from elquery.retrieval.models import Model
    from elquery.formats.queries import QueryRecord
    from elquery.retrieval.searcher import RankedEntity, Searcher

RANKING_SCHEMA = "qid string, rank int, entity string, score double"
"""The rows of :func:`rank_dataframe`: one per ranked entity, the fields of a TREC run line."""


def _searcher(index: str) -> Searcher:
    from elquery.retrieval.searcher import Searcher

    searcher = Searcher(index)
    searcher.prepare()
    return searcher


def _rank_partition(queries: Iterable[tuple[str, str]], index: str, model: Model | None,
                    k: int) -> Iterator[tuple[str, list[RankedEntity]]]:
    searcher = worker_cached(("searcher", index), partial(_searcher, index))
    for qid, text in queries:
        yield qid, searcher.rank(text, model, k)


def rank_spark(index: Path | str, queries: Iterable[QueryRecord], model: Model | None, k: int,
               master: str | None = None, progress: Callable[[int], Any] | None = None,
               ) -> Iterator[tuple[str, list[RankedEntity]]]:
    """``(qid, ranking)`` of every query, in input order, ranked on Spark (``master``, or the
    session of ``spark-submit``); ``progress(1)`` is called per query done."""
    k = check_k(k)  # before Spark starts
    pairs = [(q.qid, q.text) for q in queries]
    return ordered_partitions(pairs, master, partial(_rank_partition, index=str(index), model=model, k=k), progress)


def _ranking_rows(queries: Iterable[Any], index: str, model: Model | None, k: int) -> Iterator[tuple[str, int, str, float]]:
    for qid, ranking in _rank_partition(((row[0], row[1]) for row in queries), index, model, k):
        for hit in ranking:
            yield qid, hit.rank, hit.entity, float(hit.score)


def rank_dataframe(queries: DataFrame, index: Path | str, model: Model | None = None, k: int = DEFAULT_K) -> DataFrame:
    """The rankings of a DataFrame of ``(qid, query)`` string columns as a DataFrame of
    :data:`RANKING_SCHEMA` rows (rank 1 is the best; ``model`` None is the searcher's default)."""
    k = check_k(k)  # before a job runs
    rows = queries.select("qid", "query").rdd.mapPartitions(
        partial(_ranking_rows, index=str(index), model=model, k=k))
    return queries.sparkSession.createDataFrame(rows, RANKING_SCHEMA)
