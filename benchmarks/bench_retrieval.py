"""Retrieval benchmark (retrieval issues): candidate scoring and whole-index ranking latency.

Measures, on one index and in one run, per query:

* candidate scoring (MLM, Eq. 16) of 50 and 200 candidates for 3-term queries;
* whole-index exact top-1000 of MLM, PRMS, SDM (content), FSDM and the ELR models (SDM+ELR,
  FSDM+ELR, MLM+ELR, ``--models``; each query with two linked entities) next to Lucene BM25 top-1000
  (content), and next to Lucene's span queries for SDM/FSDM: BM25 terms plus SpanNearQuery of
  each adjacent pair, ordered with slop 0 and unordered with slop 6 (a window of 8), weighted
  0.8 / 0.1 / 0.1, as a Lucene user would write SDM (``rank-ratio`` lines: each model's
  figures over BM25's, and over the span queries' for SDM/FSDM);

for queries of common, mid-frequency and rare terms, and prints one JSON line per measurement
(wall-clock ``p50_ms``, ``p99_ms``, ``mean_ms``, ``min_ms`` and the calling thread's CPU time
``cpu_p50_ms``, ``cpu_p99_ms``: on a shared, busy machine the wall clock mostly measures waiting
for a CPU) plus a header line describing the index and the machine load. Each timed call runs with
Python's cyclic garbage collector off, as ``timeit`` does: a collection costs some 20 ms in this
process (the index's million entity ids are Python objects), lands on whichever call happens to
allocate at the time and would be that call's p99; it runs between calls instead.

The index is a synthetic one built with :class:`elquery.indexing.lucene_writer.EntityIndexWriter` from
seeded Zipfian documents (``--entities``, default 1,000,000), or an existing index (``--index``).

Synthetic shape: vocabulary of ``--vocabulary`` pronounceable words (consonant-vowel syllables,
never an English stopword), term ranks drawn from a Zipf law (s = 1.0) bounded by the vocabulary;
``names`` holds 1-3 values of 1-4 words, ``content`` a log-normal number of words (median 90).
Entity ids are ``<dbpedia:Entity_N>`` with N a seeded permutation, so docid order is not id order.
With an ELR model among ``--models``, every entity also gets a log-normal number (median 10) of
related entities ``<dbpedia:Entity_M>``, M drawn from a Zipf law (so a few are related to by many
entities, as popular DBpedia entities are), each through one of 20 predicates (Zipf too), and
each query is linked to two entities drawn from the same law (scores 0.6 and 0.4).
The synthetic index is written like the default index (``content`` not stored; a position gap
between the values of a field, which keeps SDM/FSDM windows within a value). The ``dependence``
line times the first SDM/FSDM query (an index without the gap would read value boundaries then).

Usage:
    python benchmarks/bench_retrieval.py [--entities N] [--index PATH] [--keep PATH]
        [--queries N] [--seed N] [--models mlm,prms,sdm,fsdm,sdm-elr,fsdm-elr,mlm-elr]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from harness import Timer, emit, load_average, percentiles  # noqa: E402

if TYPE_CHECKING:
    from elquery.indexing.entity_documents import EntityDocument
    from elquery.kb.entity_index import EntityIndex
    from elquery.retrieval.searcher import Searcher

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
ZIPF_S = 1.0


def word(rank: int) -> str:
    """The synthetic word of a term rank: consonant-vowel syllables (two or more), e.g. ``baba``."""
    syllables = []
    rank += len(_CONSONANTS) * len(_VOWELS)  # at least two syllables: no stopword, no 2-letter word
    while rank:
        rank, rest = divmod(rank, len(_CONSONANTS) * len(_VOWELS))
        syllables.append(_CONSONANTS[rest // len(_VOWELS)] + _VOWELS[rest % len(_VOWELS)])
    return "".join(reversed(syllables))


def _zipf_sampler(vocabulary: int, rng: np.random.Generator) -> Callable[[int], np.ndarray]:
    cdf = np.cumsum(1.0 / np.arange(1, vocabulary + 1) ** ZIPF_S)
    cdf /= cdf[-1]
    return lambda size: np.minimum(np.searchsorted(cdf, rng.random(size)), vocabulary - 1)


ELR_MODELS = ("sdm-elr", "fsdm-elr", "mlm-elr")
PREDICATES = 20


def synthetic_documents(entities: int, vocabulary: int, seed: int, relations: bool = False) -> Iterator[EntityDocument]:
    """Seeded Zipfian :class:`EntityDocument` objects, in docid order (with ``relations``, each
    with its related entities)."""
    from elquery.indexing.entity_documents import EntityDocument

    rng = np.random.default_rng(seed)
    related_rng = np.random.default_rng(seed + 1)  # the text does not depend on ``relations``
    related_sample = _zipf_sampler(entities, related_rng)
    predicate_sample = _zipf_sampler(PREDICATES, related_rng)
    sample = _zipf_sampler(vocabulary, rng)
    words = np.array([word(r) for r in range(vocabulary)], dtype=object)
    numbers = rng.permutation(entities)
    batch = 10_000
    for start in range(0, entities, batch):
        size = min(batch, entities - start)
        content_lengths = np.maximum(1, rng.lognormal(math.log(90), 0.8, size).astype(int))
        name_values = rng.integers(1, 4, size)
        name_words = rng.integers(1, 5, int(name_values.sum()))
        content_tokens = words[sample(int(content_lengths.sum()))]
        name_tokens = words[sample(int(name_words.sum()))]
        c = n = v = 0
        for i in range(size):
            names = []
            for _ in range(name_values[i]):
                names.append(" ".join(name_tokens[n : n + name_words[v]]))
                n += name_words[v]
                v += 1
            content = " ".join(content_tokens[c : c + content_lengths[i]])
            c += content_lengths[i]
            related: tuple[tuple[str, str], ...] = ()
            if relations:
                count = max(1, int(related_rng.lognormal(math.log(10), 0.8)))
                related = tuple(sorted({(f"<dbpedia:Entity_{m}>", f"http://dbpedia.org/ontology/p{p}")
                                        for m, p in zip(related_sample(count), predicate_sample(count))}))
            yield EntityDocument(f"<dbpedia:Entity_{numbers[start + i]}>", tuple(names), (content,), related)


def build_synthetic_index(out: Path, entities: int, vocabulary: int, seed: int, relations: bool = False) -> float:
    """Write a single-segment elquery index of synthetic documents at ``out`` (with the
    relations field if asked); returns seconds."""
    from tqdm import tqdm

    from elquery.indexing.index_files import finish_index
    from elquery.indexing.lucene_writer import EntityIndexWriter

    started = time.monotonic()
    out.mkdir(parents=True)
    writer = EntityIndexWriter(out, relations=relations)
    documents = synthetic_documents(entities, vocabulary, seed, relations)
    writer.add_all(tqdm(documents, total=entities, desc="synthetic index", unit="doc", disable=None))
    writer.close(merge=True)
    finish_index(out, writer.written)
    return time.monotonic() - started


# --- query terms by document frequency ------------------------------------------------------------

# Bands of content document frequency as fractions of the entities, [low, high); rare terms are
# those in 2 to max(10, N / 20,000) entities.
BANDS = {"common": (0.05, 1.01), "mid": (0.0005, 0.005)}
RARE_FRACTION = 0.00005
RARE_MIN_DF, RARE_MIN_MAX_DF = 2, 10


def band_of(df: int, entities: int) -> str | None:
    if RARE_MIN_DF <= df <= max(RARE_MIN_MAX_DF, RARE_FRACTION * entities):
        return "rare"
    for name, (low, high) in BANDS.items():
        if low <= df / entities < high:
            return name
    return None


def terms_by_band(index: EntityIndex, field: str = "content") -> dict[str, list[str]]:
    """The field's terms in each document-frequency band (read from the Lucene term dictionary)."""
    n = index.num_entities
    bands: dict[str, list[str]] = {"common": [], "mid": [], "rare": []}
    terms_enum = index.leaf.terms(field).iterator()
    while terms_enum.next() is not None:
        band = band_of(terms_enum.docFreq(), n)
        if band is not None:
            bands[band].append(terms_enum.term().utf8ToString())
    return bands


def make_queries(terms: list[str], count: int, rng: np.random.Generator, length: int = 3) -> list[str]:
    if len(terms) < length:
        return []
    return [" ".join(rng.choice(terms, length, replace=False)) for _ in range(count)]


# --- measurements -----------------------------------------------------------------------------------


def figures(timer: Timer) -> dict[str, float]:
    """Wall-clock p50/p99/mean/min and this thread's CPU time p50/p99 (the Java work runs on the
    calling thread), in ms. On a shared, busy machine the CPU figures are the comparable ones."""
    return {**percentiles(timer.wall, ("p50", "p99", "mean", "min")),
            **percentiles(timer.cpu, ("p50", "p99"), prefix="cpu_")}


class Spans:
    """Lucene's own SDM-like query over ``content``: BM25 term queries (boost 1) and, for each
    adjacent pair, SpanNearQuery ordered with slop 0 and unordered with slop 6 (boosts 0.125: the
    weights 0.8 / 0.1 / 0.1 relative to each other)."""

    def __init__(self, field: str = "content", k1: float = 0.9, b: float = 0.4) -> None:
        self.field, self.k1, self.b = field, k1, b

    def rank(self, searcher: Searcher, query: str, k: int) -> int:
        from elquery.retrieval import lucene
        from elquery.retrieval.scoring import analyze

        analyzed = analyze(searcher.index, query)
        terms = analyzed.terms
        request = [f"bm25\t{self.field}\t{self.k1!r}\t{self.b!r}", f"k\t{k}",
                   *(f"term\t{n}\t{t}" for t, n in analyzed.counts())]
        for a, b in zip(terms, terms[1:]):
            request += [f"span\t0\ttrue\t0.125\t{a}\t{b}", f"span\t6\tfalse\t0.125\t{a}\t{b}"]
        searcher.prepare()
        return len(lucene.top(searcher.index.leaf, "\n".join(request), bm25=True).docids)


def rank_models(names: list[str]) -> dict[str, object]:
    """The ranking models measured, BM25 first (the baseline), the span queries second."""
    from elquery.retrieval import BM25, fsdm, fsdm_elr, mlm, mlm_elr, prms, sdm, sdm_elr

    available = {"mlm": mlm(), "prms": prms(), "sdm": sdm(), "fsdm": fsdm(), "sdm-elr": sdm_elr(),
                 "fsdm-elr": fsdm_elr(), "mlm-elr": mlm_elr()}
    return {"bm25": BM25(), "spans": Spans(), **{name: available[name] for name in names}}


def query_links(index: EntityIndex, count: int, rng: np.random.Generator) -> list[tuple[tuple[str, float], ...]]:
    """Two linked entities per query, drawn from the relations' Zipf law, scores 0.6 and 0.4."""
    sample = _zipf_sampler(index.num_entities, rng)
    links = []
    for _ in range(count):
        first, second = sample(2)
        second = second if second != first else (first + 1) % index.num_entities
        links.append(((f"<dbpedia:Entity_{first}>", 0.6), (f"<dbpedia:Entity_{second}>", 0.4)))
    return links


def run_band(searcher: Searcher, band: str, queries: list[str], k: int, candidate_sizes: list[int],
             rng: np.random.Generator, warmup: int, names: list[str]) -> Iterator[dict[str, object]]:
    """JSON records for one band: candidate scoring, then every model's top k (interleaved)."""
    from elquery.retrieval import BM25, EntityScorer, LinkedQuery, mlm

    index = searcher.index
    model, bm25 = mlm(), BM25()
    scorer = EntityScorer(index, model)
    ids = index.entity_ids
    pools = [[r.entity for r in searcher.rank(q, bm25, 1000)] for q in queries]
    for size in candidate_sizes:
        candidates = []
        for pool in pools:  # candidates holding a query term, topped up at random
            chosen = [str(e) for e in rng.choice(pool, min(size, len(pool)), replace=False)] if pool else []
            chosen += [ids[i] for i in rng.integers(0, len(ids), size - len(chosen))]
            candidates.append(chosen)
        for query, chosen in list(zip(queries, candidates))[:warmup]:
            scorer.score_candidates(query, chosen)
        timer = Timer()
        for query, chosen in zip(queries, candidates):
            timer(lambda: scorer.score_candidates(query, chosen))
        yield {"task": "candidates", "band": band, "model": "mlm", "candidates": size, "queries": len(queries),
               **figures(timer)}
    models = rank_models(names)
    links = dict(zip(queries, query_links(index, len(queries), rng))) if set(ELR_MODELS) & set(names) else {}

    def rank(name: str, query: str) -> int:
        ranking_model = models[name]
        if isinstance(ranking_model, Spans):
            return ranking_model.rank(searcher, query, k)
        if name in ELR_MODELS:
            return len(searcher.rank(LinkedQuery(query, links[query]), ranking_model, k))  # type: ignore[arg-type]
        return len(searcher.rank(query, ranking_model, k))  # type: ignore[arg-type]

    for query in queries[:warmup]:
        for name in models:
            rank(name, query)
    timers = {name: Timer() for name in models}
    results = dict.fromkeys(models, 0)
    for query in queries:  # interleaved, so that all see the same machine load
        for name in models:
            found = timers[name](lambda: rank(name, query))
            assert isinstance(found, int)
            results[name] += found
    measured = {name: figures(timer) for name, timer in timers.items()}
    for name in models:
        yield {"task": "rank", "band": band, "model": name, "k": k, "queries": len(queries),
               "mean_results": round(results[name] / len(queries), 1), **measured[name]}
    for name in names:
        baselines = ["bm25"]  # and SDM/FSDM over the span queries, an ELR model over its term model
        if name in ("sdm", "fsdm"):
            baselines.append("spans")
        if name in ELR_MODELS and name.removesuffix("-elr") in names:
            baselines.append(name.removesuffix("-elr"))
        yield {"task": "rank-ratio", "band": band, "model": name, **{
            f"over_{baseline}_{p}": round(measured[name][p] / measured[baseline][p], 2)
            for baseline in baselines for p in ("cpu_p50_ms", "cpu_p99_ms", "p50_ms", "p99_ms")
        }}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=1_000_000, help="synthetic entities (default 1,000,000)")
    parser.add_argument("--vocabulary", type=int, default=200_000, help="synthetic vocabulary (default 200,000)")
    parser.add_argument("--index", type=Path, help="use this existing index instead of building one")
    parser.add_argument("--keep", type=Path, help="build the synthetic index here and keep it")
    parser.add_argument("--queries", type=int, default=200, help="3-term queries per band (default 200)")
    parser.add_argument("--k", type=int, default=1000, help="ranking depth (default 1000)")
    parser.add_argument("--candidates", default="50,200", help="candidate set sizes (default 50,200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed queries per task first (default 20)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--models", default="mlm,prms,sdm,fsdm", help="models measured next to BM25 (default "
                        "mlm,prms,sdm,fsdm; also sdm-elr, fsdm-elr, mlm-elr: the synthetic index then has relations)")
    args = parser.parse_args(argv)
    names = [m for m in args.models.split(",") if m]

    from elquery.kb.entity_index import EntityIndex
    from elquery.retrieval import Searcher

    work = None
    build_seconds = None
    path = args.index
    if path is None:
        path = args.keep if args.keep is not None else Path(tempfile.mkdtemp(prefix="bench-retrieval-")) / "index"
        work = None if args.keep is not None else path.parent
        relations = bool(set(ELR_MODELS) & set(names))
        build_seconds = round(build_synthetic_index(path, args.entities, args.vocabulary, args.seed, relations), 1)
    try:
        with EntityIndex(path) as index:
            searcher = Searcher(index)
            started = time.monotonic()
            searcher.prepare()
            bands = terms_by_band(index)
            emit({
                "benchmark": "retrieval", "index": str(path), "entities": index.num_entities,
                "fields": index.field_statistics(), "build_seconds": build_seconds,
                "relations": index.relation_statistics().as_dict() if index.has_relations else None,
                "prepare_seconds": round(time.monotonic() - started, 1),
                "band_terms": {name: len(terms) for name, terms in bands.items()},
                "band_df_fractions": {**BANDS, "rare": [RARE_MIN_DF, max(RARE_MIN_MAX_DF, RARE_FRACTION * index.num_entities)]}, "load_average": load_average(),
                "cpus": os.cpu_count(),
            })
            if {"sdm", "fsdm"} & set(names):  # the first SDM/FSDM query
                from elquery.retrieval import fsdm

                started = time.monotonic()
                searcher.rank(bands["common"][0] if bands["common"] else "x", fsdm(), 1)
                emit({"task": "dependence", "prepare_seconds": round(time.monotonic() - started, 1)})
            rng = np.random.default_rng(args.seed)
            sizes = [int(s) for s in args.candidates.split(",") if s]
            for band, terms in bands.items():
                queries = make_queries(terms, args.queries, rng)
                if not queries:
                    emit({"task": "skipped", "band": band, "reason": "fewer than 3 terms"})
                    continue
                for record in run_band(searcher, band, queries, args.k, sizes, rng, args.warmup, names):
                    emit(record)
            emit({"task": "end", "load_average": load_average()})
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
