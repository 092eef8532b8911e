"""k, the entities of a ranking, at every door (issue 28.1-28.2): ``elquery rank --k``, the Python
API (:meth:`Searcher.rank`, :func:`rank_many`, :func:`rank_spark`), the service's ``/rank`` and an
experiment config's ``depth`` accept and refuse the same values, the first three with the same
one-line message; the service's own bound (``Limits.max_k``) is the only rule beside it. Before,
``Searcher.rank`` took k = 0, k = 10**6 and k = 1.5, and ``elquery rank --k 1.5`` was argparse's
message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.experiments.config import load_config
from elquery.formats.queries import QueryRecord
from elquery.retrieval.batch import rank_many
from elquery.retrieval.models import DEFAULT_K, MAX_K, check_k, mlm
from elquery.retrieval.searcher import Searcher
from elquery.retrieval.spark import rank_spark
from elquery.serve.app import Artefacts, Limits, create_app

QUERY = "new york pizza"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The demo KB's index and surface forms, built once into a temporary ``ELQUERY_CACHE``."""
    from elquery.indexing.demo import demo_artefacts

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("k-demo")))
        yield demo_artefacts()


def cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    try:
        status = elquery(argv)
    except SystemExit as exit:  # an argparse mistake
        status = int(exit.code or 0)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith("elquery rank: error: argument --k: ") and err.endswith("; see `elquery rank --help`\n"), err
    return err.removeprefix("elquery rank: error: argument --k: ").removesuffix("; see `elquery rank --help`\n")


REFUSED = [(0, "k must be between 1 and 100000, got 0"),
           (-1, "k must be between 1 and 100000, got -1"),
           (MAX_K + 1, "k must be between 1 and 100000, got 100001"),
           (10**6, "k must be between 1 and 100000, got 1000000"),
           ("1.5", "k must be a whole number, got '1.5'"),
           ("x", "k must be a whole number, got 'x'")]


@pytest.mark.parametrize(("k", "message"), REFUSED, ids=[str(k) for k, _ in REFUSED])
def test_every_door_refuses_k_with_the_same_message(demo: tuple[Path, Path], tmp_path: Path, k: object, message: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    index, surface_forms = demo
    queries, run = tmp_path / "q.tsv", tmp_path / "run.txt"
    queries.write_text(f"q1\t{QUERY}\n", encoding="utf-8")
    argv = ["rank", "--index", str(index), "--queries", str(queries), "--out", str(run), "--workers", "1"]
    assert cli_error([*argv, "--k", str(k)], capsys) == message
    assert not run.exists()
    # the Python API (a text, as a query string gives it, or a number)
    for given in {k, float(k) if isinstance(k, int) else k}:
        with Searcher(index) as searcher, pytest.raises(ElqueryError) as refused:
            searcher.rank(QUERY, mlm(), given)
        assert str(refused.value) == message.replace("'1.5'", repr(given)).replace("'x'", repr(given))
    for batch in (lambda: list(rank_many(str(index), [QueryRecord("q1", QUERY)], mlm(), k, 1)),
                  lambda: rank_spark(index, [QueryRecord("q1", QUERY)], mlm(), k)):
        with pytest.raises(ElqueryError) as refused:
            batch()
        assert str(refused.value) == message
    # the service, without a bound of its own below MAX_K: the same message
    client = TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True), Limits(max_k=MAX_K)))
    for answer in (client.get("/rank", params={"q": QUERY, "k": str(k)}),
                   client.post("/rank", json={"q": QUERY, "k": str(k)})):
        assert (answer.status_code, answer.json()) == (422, {"error": message})


def test_the_service_bound_is_the_only_other_rule(demo: tuple[Path, Path]) -> None:
    client = TestClient(create_app(Artefacts(*demo, demo_thresholds=True), Limits(max_k=3)))
    answer = client.get("/rank", params={"q": QUERY, "k": "4"})
    assert (answer.status_code, answer.json()) == (422, {"error": "k must be between 1 and 3, got 4"})
    answer = client.get("/rank", params={"q": QUERY, "k": "0"})
    assert (answer.status_code, answer.json()) == (422, {"error": "k must be between 1 and 3, got 0"})
    assert [len(r["ranking"]) for r in client.get("/rank", params={"q": QUERY, "k": "3"}).json()["results"]] == [3]


def test_the_bounds_pass_at_every_door(demo: tuple[Path, Path], tmp_path: Path) -> None:
    index, _ = demo
    assert (check_k(1), check_k(MAX_K), check_k("7"), check_k(7.0)) == (1, MAX_K, 7, 7)
    with Searcher(index) as searcher:
        everything = searcher.rank(QUERY, mlm(), MAX_K)
        assert 1 < len(everything) < searcher.index.num_entities  # every entity matching a query term
        assert searcher.rank(QUERY, mlm(), 1) == everything[:1]
        assert searcher.rank(QUERY, mlm()) == everything[:DEFAULT_K]
    # an experiment config's depth: the same range
    for depth, accepted in ((1, True), (MAX_K, True), (0, False), (MAX_K + 1, False)):
        config = tmp_path / "er.toml"
        config.write_text('knowledge_base = "demo"\nqueries = "q.tsv"\n[entity_retrieval]\nqrels = "qrels.txt"\n'
                          f'depth = {depth}\n[[entity_retrieval.methods]]\nmodel = "bm25"\n', encoding="utf-8")
        if accepted:
            assert load_config(config).entity_retrieval.depth == depth
        else:
            with pytest.raises(ElqueryError, match=f"entity_retrieval.depth: depth must be 1 <= depth <= 100000, "
                                                   f"got {depth}$"):
                load_config(config)
