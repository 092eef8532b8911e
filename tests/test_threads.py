"""Searcher, Linker and TagmeLinker shared between threads (and one per thread) give exactly the
single-threaded answers: 8 threads x 200 queries, on the real DBpedia sample and on a synthetic
DBpedia-shaped index, comparing every ranking and every link result."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.surface_forms.build import BuildOptions, build_store
from elquery.indexing.tagme.build import build_tagme
from elquery.linking.linker import Linker
from elquery.linking.tagme import TagmeLinker
from elquery.retrieval import BM25, Searcher, mlm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import synthetic_dbpedia  # noqa: E402

THREADS, QUERIES = 8, 200


def run_threads(make: Callable[[], Any], work: Callable[[Any, str], Any], queries: Sequence[str]) -> list[list[Any]]:
    """Each of THREADS threads answers every query with the object ``make`` gives it; returns
    every thread's answers (an exception is re-raised, never swallowed)."""
    answers: list[list[Any]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def thread(number: int) -> None:
        try:
            instance = make()
            start.wait()
            answers[number] = [work(instance, query) for query in queries]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=thread, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
    return answers


@pytest.fixture(scope="module")
def sample_artefacts(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("threads-sample")
    build_dbpedia_index([dbpedia_sample], root / "index", workers=2)
    build_store(root / "sf.db", BuildOptions((dbpedia_sample,), anchors=True, workers=2, progress=False))
    build_tagme([dbpedia_sample], root / "tagme")
    return {"index": root / "index", "sf": root / "sf.db", "tagme": root / "tagme"}


@pytest.fixture(scope="module")
def sample_queries(elq_data: Path) -> list[str]:
    queries = json.loads((elq_data / "y-erd" / "queries.json").read_text(encoding="utf-8"))
    return [text for _, text in sorted(queries.items())][:QUERIES - 4] + [
        "british airways flights to rome", "rome italy", "the", "?!"]  # "?!": no token (a blank query is refused)


@pytest.fixture(scope="module")
def synthetic_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("threads-synthetic")
    generated = synthetic_dbpedia.generate(root / "dumps", 3000, seed=11, processes=1)
    build_dbpedia_index([generated.out_dir], root / "index", workers=2)
    vocabulary = synthetic_dbpedia.make_vocabulary(11)
    queries = [" ".join(vocabulary[(i * 7 + j * 13) % 400] for j in range(1 + i % 4)) for i in range(QUERIES)]
    return root / "index", queries


def _ranking(searcher: Searcher, query: str) -> list[tuple[str, float]]:
    return [(r.entity, r.score) for r in searcher.rank(query, mlm(), k=50)] + [
        (r.entity, r.score) for r in searcher.rank(query, BM25(), k=20)]


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "per-thread"])
def test_searcher_under_threads_equals_one_thread(sample_artefacts: dict[str, Path], sample_queries: list[str],
                                                  synthetic_index: tuple[Path, list[str]], shared: bool) -> None:
    for index, queries in ((sample_artefacts["index"], sample_queries), synthetic_index):
        with Searcher(index) as reference:
            expected = [_ranking(reference, q) for q in queries]
            assert any(expected)
            make = (lambda: reference) if shared else (lambda: Searcher(index))
            for answers in run_threads(make, _ranking, queries):
                assert answers == expected


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "per-thread"])
def test_linker_under_threads_equals_one_thread(sample_artefacts: dict[str, Path], sample_queries: list[str],
                                                shared: bool) -> None:
    def open_linker() -> Linker:
        return Linker(sample_artefacts["index"], sample_artefacts["sf"], "mlmcg", gif_threshold=0.25)

    with open_linker() as reference:
        expected = [reference.result(q) for q in sample_queries]
        assert sum(bool(r.interpretations) for r in expected) >= 5
        make = (lambda: reference) if shared else open_linker
        for answers in run_threads(make, lambda linker, q: linker.result(q), sample_queries):
            assert answers == expected


def test_tagme_shared_between_threads_equals_one_thread(sample_artefacts: dict[str, Path],
                                                        sample_queries: list[str]) -> None:
    with TagmeLinker(sample_artefacts["tagme"]) as reference:
        expected = [reference.result(q) for q in sample_queries]
        assert any(r.interpretations for r in expected)
        for answers in run_threads(lambda: reference, lambda linker, q: linker.result(q), sample_queries):
            assert answers == expected
