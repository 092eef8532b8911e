"""Candidate scoring of query text in one Java call (``EntityScores.scoreEntities``, the linker's
hot path): the text analyzed and the entity ids looked up in Java give the same numbers, to the
bit, as looking each docid up and scoring analyzed terms, and the independent reference's; ids in
another spelling, unknown, repeated, empty or holding a line end behave as before."""

from __future__ import annotations

import math

import pytest

from elquery.indexing.build_index import build_dbpedia_index
from elquery.kb.entity_index import EntityIndex
from elquery.retrieval import EntityPrior, EntityScorer, analyze, lucene, prms
from test_retrieval_scoring import MODELS, TOLERANCE, Reference, write_synthetic_dumps  # pytest puts this folder on sys.path

QUERIES = ["river valley", "paris paris garden", "north castle king", "rock", "lake zzz", "the of", "",
           "River\nNorth\r\ncastle", "music\tband tower"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    dumps = tmp_path_factory.mktemp("by-id-dumps")
    write_synthetic_dumps(dumps, entities=40, seed=5)
    out = tmp_path_factory.mktemp("by-id") / "index"
    build_dbpedia_index([dumps], out, workers=1)
    with EntityIndex(out) as opened:
        yield opened


def java_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the retrieval helper's calls and the index's docid lookups made from now on."""
    calls: list[str] = []
    call, tokens, lookup = lucene._call, lucene.query_tokens, EntityIndex._lookup
    monkeypatch.setattr(lucene, "_call", lambda name, *args: calls.append(name) or call(name, *args))
    monkeypatch.setattr(lucene, "query_tokens", lambda text: calls.append("tokens") or tokens(text))
    monkeypatch.setattr(EntityIndex, "_lookup", lambda self, entity: calls.append("lookup") or lookup(self, entity))
    return calls


@pytest.mark.parametrize("name", ["mlm", "mlm-mixed", "lm-dirichlet", "mlm-names-lambda-1", "prms"])
def test_text_scores_equal_the_docid_path_and_the_reference(index: EntityIndex, name: str) -> None:
    model, spec = MODELS[name] if name in MODELS else (prms(), None)
    scorer = EntityScorer(index, model)
    ids = index.entity_ids[::-3]
    for query in QUERIES:
        by_id = scorer.score_candidates(query, ids)
        terms = analyze(index, query)  # the other path: docids looked up one by one, terms sent
        assert by_id == scorer.score_candidates(terms, ids)
        assert list(by_id) == ids
        if spec is not None:
            expected = Reference(index).scores(" ".join(terms.terms), spec)
            assert all(by_id[e] == expected[e] or abs(by_id[e] - expected[e]) <= TOLERANCE for e in ids)


def test_one_java_call_a_query(index: EntityIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = EntityScorer(index)
    ids = index.entity_ids[:12]
    calls = java_calls(monkeypatch)
    scorer.score_candidates("river castle", ids)
    assert calls == ["scoreEntities"]


def test_other_spellings_unknown_repeated_and_odd_ids(index: EntityIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = EntityScorer(index)
    first, second = index.entity_ids[0], index.entity_ids[1]
    expected = scorer.score_candidates(analyze(index, "river north"), [first, second])
    unknown = ["<dbpedia:Not_in_the_index>", "<dbpedia:has space>", "http://example.org/x"]
    calls = java_calls(monkeypatch)
    assert scorer.score_candidates("river north", [second, *unknown, second, first]) == {
        second: expected[second], first: expected[first]}
    assert calls == ["scoreEntities"]  # ids not found in any spelling cost nothing more
    title = first[len("<dbpedia:"):-1]
    uri = f"http://dbpedia.org/resource/{title}"
    for spelling in (title, uri, f"<{uri}>", title.replace("_", " ")):  # find_docid's canonical form, as before
        assert scorer.score_candidates("river north", [spelling, second]) == {
            spelling: expected[first], second: expected[second]}
    for odd in ("", f"{first}\n{second}"):
        assert scorer.score_candidates("river north", [odd, second]) == {second: expected[second]}
    assert scorer.score_candidates("river north", []) == {}


def test_no_evidence_and_prior(index: EntityIndex) -> None:
    ids = index.entity_ids
    for query in ("", "the of", "zzz"):
        assert EntityScorer(index).score_candidates(query, ids) == {e: -math.inf for e in ids}
    probabilities = {e: (i % 5 + 1) / 10 for i, e in enumerate(ids)}
    prior = EntityPrior.from_probabilities(index, probabilities, default=1.0)
    with_prior = EntityScorer(index, prior=prior).score_candidates("river castle", ids[::2])
    without = EntityScorer(index).score_candidates("river castle", ids[::2])
    assert with_prior == {e: s + math.log(probabilities[e]) for e, s in without.items()}
    assert with_prior == EntityScorer(index, prior=prior).score_candidates(analyze(index, "river castle"), ids[::2])
    assert EntityScorer(index, prior=prior).score_candidates("zzz", ids[:3]) == {e: -math.inf for e in ids[:3]}


def test_request_helper_answers_in_request_order(index: EntityIndex) -> None:
    """``lucene.score_entities``: one score and docid per id given, in order; -1 and NaN for none."""
    ids = [index.entity_ids[5], "<dbpedia:Nobody>", index.entity_ids[2], index.entity_ids[5]]
    answer = lucene.score_entities(index.leaf, "\n".join(MODELS["mlm"][0].request_lines()), "river north", ids)
    assert answer.docids.tolist() == [index.docid(ids[0]), -1, index.docid(ids[2]), index.docid(ids[0])]
    assert math.isnan(answer.scores[1]) and answer.scores[0] == answer.scores[3]
    assert answer.known_terms == 2
