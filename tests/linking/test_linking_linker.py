"""The Linker pipeline (methods.md §1): detection -> ranking -> interpretation finding, over an
in-memory surface-form store and MLM scorer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from elquery.base import ElqueryError
from elquery.indexing.surface_forms.store import FormEntity
from elquery.linking.linker import Linker
from elquery.linking.types import Mention

NYC, NYS, PIZZA, MANHATTAN = "<dbpedia:New_York_City>", "<dbpedia:New_York>", "<dbpedia:New_York-style_pizza>", "<dbpedia:Manhattan>"
COCKTAIL, OUTSIDE = "<dbpedia:Manhattan_(cocktail)>", "<dbpedia:Not_Indexed>"


def form(entity: str, commonness: float, kb: bool = False) -> FormEntity:
    return FormEntity(entity, round(commonness * 1000), commonness, ("kb", "facc") if kb else ("facc",))


FORMS = {
    "new york": [form(NYC, 0.75), form(NYS, 0.2, kb=True), form(OUTSIDE, 0.05)],
    "new york pizza": [form(PIZZA, 0.9, kb=True)],
    "pizza": [],
    "manhattan": [form(MANHATTAN, 0.85, kb=True), form(COCKTAIL, 0.06)],
    "york": [form(OUTSIDE, 1.0)],
}
MLM = {NYC: 30.0, NYS: 25.0, PIZZA: 40.0, MANHATTAN: 50.0, COCKTAIL: 60.0}


class Store:
    path = None

    def lookup_spans(self, tokens: Sequence[str]) -> dict[tuple[int, int], list[FormEntity]]:
        found = {}
        for start in range(len(tokens)):
            for end in range(start + 1, len(tokens) + 1):
                if FORMS.get(" ".join(tokens[start:end])):
                    found[(start, end)] = FORMS[" ".join(tokens[start:end])]
        return found


class Scorer:
    path = None

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def exp_scores(self, query: str, entities: Sequence[str]) -> Mapping[str, float]:
        self.calls.append((query, list(entities)))
        return {e: MLM[e] for e in entities if e in MLM}


def test_gif_mlmcg() -> None:
    scorer = Scorer()
    linker = Linker(scorer, Store(), method="mlmcg", gif_threshold=20.0)
    result = linker.result("New York pizza, Manhattan!", qid="q7")
    assert result.qid == "q7" and result.tokens == ("new", "york", "pizza", "manhattan")
    # each candidate entity is scored once per query; the entity outside the index drops out
    assert scorer.calls == [("New York pizza, Manhattan!", sorted({NYC, NYS, PIZZA, MANHATTAN, OUTSIDE}))]
    assert {t.entity for t in result.scored} == {NYC, NYS, PIZZA, MANHATTAN}  # cocktail: c = 0.06 < 0.1
    scores = {(t.mention.text, t.entity): t.score for t in result.scored}
    assert scores[("new york", NYC)] == pytest.approx(22.5)
    assert scores[("new york pizza", PIZZA)] == pytest.approx(36.0)
    [interpretation] = result.interpretations
    assert interpretation.entities == {PIZZA, MANHATTAN}
    assert interpretation.score == pytest.approx((36.0 + 42.5) / 2)
    assert [r.entity for r in result.ranking] == [MANHATTAN, PIZZA, NYC, NYS]
    assert linker.link("new york pizza manhattan") == list(interpretation for interpretation in result.interpretations)
    assert linker.rank("new york pizza manhattan") == list(result.ranking)
    assert linker.describe() == "GIF-MLMcg (c=0.1, s=20)"


def test_cmns_needs_no_index_and_ranks_longest_spans() -> None:
    linker = Linker(None, Store(), method="cmns")
    assert [(r.entity, r.score, r.mention) for r in linker.rank("new york pizza manhattan")] == [
        (PIZZA, 0.9, Mention("new york pizza", 0, 3))]
    # without an index nothing drops out: "york" (commonness 1) wins over the spans containing it
    [interpretation] = linker.link("new york pizza manhattan")
    assert interpretation.entities == {OUTSIDE, MANHATTAN}
    assert linker.describe() == "GIF-CMNS (c=0.1, s=0.1)"
    with pytest.raises(ElqueryError, match="needs an entity index"):
        Linker(None, Store(), method="mlm")


def test_commonness_threshold_and_whitelist() -> None:
    linker = Linker(Scorer(), Store(), method="mlm", commonness_threshold=0.0, gif_threshold=0.0)
    assert COCKTAIL in {t.entity for t in linker.result("manhattan").scored}
    linker = Linker(Scorer(), Store(), method="mlmc", commonness_threshold=0.8, whitelist=[NYC, NYS, MANHATTAN])
    assert {(t.mention.text, t.entity) for t in linker.result("new york pizza manhattan").scored} == {
        ("new york", NYS), ("manhattan", MANHATTAN)}  # NYC below c, pizza not whitelisted


def test_top_ranked() -> None:
    linker = Linker(Scorer(), Store(), method="mlmcg", top_ranked=True)
    [interpretation] = linker.link("new york pizza manhattan")
    assert interpretation.entities == {MANHATTAN}
    assert linker.describe() == "TopRanked-MLMcg (c=0.1)"
    assert Linker(Scorer(), Store(), top_ranked=True).link("forearm braces") == []


def test_no_candidates() -> None:
    scorer = Scorer()
    result = Linker(scorer, Store()).result("forearm braces")
    assert result.interpretations == () and result.ranking == () and scorer.calls == []
    assert Linker(scorer, Store()).result("?!").tokens == ()  # no token (a blank query is refused)


def test_defaults_and_bad_settings() -> None:
    assert Linker(Scorer(), Store()).config.s == 20.0
    assert Linker(Scorer(), Store(), method="mlm").config.c == 0.0
    with pytest.raises(ElqueryError, match="^method tagme finds its own interpretations"):
        Linker(Scorer(), Store(), method="tagme")
    with pytest.raises(ElqueryError, match=r"^unknown method 'bm25'; methods are cmns, mlm, mlmc, mlmcg, tagme, ltr$"):
        Linker(Scorer(), Store(), method="bm25")
    with pytest.raises(ElqueryError, match="^mlmcg: gif_threshold must be a number, got nan$"):
        Linker(Scorer(), Store(), gif_threshold=float("nan"))
    with pytest.raises(ElqueryError, match="does not apply to TopRanked"):
        Linker(Scorer(), Store(), gif_threshold=1.0, top_ranked=True)


def test_link_many_in_order() -> None:
    linker = Linker(Scorer(), Store(), gif_threshold=0.0)
    results = list(linker.link_many([("a", "manhattan"), ("b", "forearm"), ("c", "new york")]))
    assert [r.qid for r in results] == ["a", "b", "c"]
    assert [len(r.interpretations) for r in results] == [1, 0, 1]
    with pytest.raises(ElqueryError, match="built from artefact paths"):  # a batch of unknown size gets its workers
        list(linker.link_many(iter([("a", "manhattan")]), workers=2))
    with pytest.raises(ElqueryError, match="^--workers must be between 1 and 256, got 0$"):
        list(linker.link_many([], workers=0))


def test_a_batch_too_small_for_its_workers_is_linked_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import elquery.linking.batch as batch
    import elquery.workers as workers

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(workers, "process_pool", no_pool)
    linker = Linker(Scorer(), Store(), gif_threshold=0.0)
    queries = [("a", "manhattan"), ("b", "forearm")] * (batch.MIN_QUERIES_PER_WORKER // 2)
    results = list(linker.link_many(queries[:-1], workers=2))  # one query short of two workers' worth
    assert [r.qid for r in results[:3]] == ["a", "b", "a"] and len(results) == len(queries) - 1
    with pytest.raises(ElqueryError, match="built from artefact paths"):  # enough for two workers: a pool is set up
        list(linker.link_many(queries + queries, workers=2))
