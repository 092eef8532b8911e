"""Scores and rankings against an independent brute-force computation (methods.md §4).

The reference below recomputes MLM (Eq. 12-13) and the normalized query likelihood (Eq. 16) from
the raw stored text of every entity, tokenized with the index's analyzer and counted in Python; it
shares no code with ``retrieval``. It runs on the real DBpedia sample, on a synthetic DBpedia
corpus built through the real dump path, and on a hand-made index with empty fields and ties.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.entity_documents import EntityDocument
from elquery.indexing.index_files import finish_index
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import FIELDS
from elquery.kb.jvm import java_class, jnius
from elquery.indexing.lucene_writer import EntityIndexWriter
from elquery.retrieval import (
    BM25,
    BM25F,
    Dirichlet,
    EntityPrior,
    EntityScorer,
    JelinekMercer,
    MLMScorer,
    Rerank,
    Searcher,
    lm,
    lm_dirichlet,
    mlm,
)
from elquery.retrieval.models import LanguageModel

TOLERANCE = 1e-9

# (field, weight, "jm" | "dirichlet", lambda or mu)
Spec = list[tuple[str, float, str, float]]

MODELS: dict[str, tuple[LanguageModel, Spec]] = {
    "mlm": (mlm(), [("names", 0.2, "jm", 0.1), ("content", 0.8, "jm", 0.1)]),
    "mlm-0.5": (
        mlm({"names": 0.5, "content": 0.5}, {"names": 0.3, "content": 0.05}),
        [("names", 0.5, "jm", 0.3), ("content", 0.5, "jm", 0.05)],
    ),
    "mlm-mixed": (
        mlm({"names": 0.4, "content": 0.6}, {"names": Dirichlet(5.0), "content": JelinekMercer(0.2)}),
        [("names", 0.4, "dirichlet", 5.0), ("content", 0.6, "jm", 0.2)],
    ),
    "lm": (lm(), [("content", 1.0, "jm", 0.1)]),
    "lm-names": (lm("names", 0.5), [("names", 1.0, "jm", 0.5)]),
    "lm-dirichlet": (lm_dirichlet(mu=50.0), [("content", 1.0, "dirichlet", 50.0)]),
    "mlm-no-names": (mlm({"names": 0.0, "content": 1.0}), [("names", 0.0, "jm", 0.1), ("content", 1.0, "jm", 0.1)]),
    "mlm-names-lambda-1": (
        mlm({"names": 0.3, "content": 0.7}, {"names": 1.0, "content": 0.2}),
        [("names", 0.3, "jm", 1.0), ("content", 0.7, "jm", 0.2)],
    ),
}


# --- the brute-force reference ------------------------------------------------------------------


class Reference:
    """Eq. 12-13 and 16 from the raw documents, with Python counters."""

    _cache: dict[int, Reference] = {}

    def __new__(cls, index: EntityIndex) -> Reference:
        if id(index) not in cls._cache:
            cls._cache[id(index)] = super().__new__(cls)
        return cls._cache[id(index)]

    def __init__(self, index: EntityIndex) -> None:
        if getattr(self, "index", None) is index:
            return
        self.index = index
        self.tokens = {
            e: {f: index.analyze(index.document(e)[f]) for f in FIELDS} for e in index.entity_ids
        }
        self.cf = {f: Counter(t for doc in self.tokens.values() for t in doc[f]) for f in FIELDS}
        self.total = {f: sum(len(doc[f]) for doc in self.tokens.values()) for f in FIELDS}

    def p_collection(self, term: str, field: str) -> float:
        return self.cf[field][term] / self.total[field] if self.total[field] else 0.0

    def scores(self, query: str | Sequence[str], spec: Spec) -> dict[str, float]:
        terms = self.index.analyze(query) if isinstance(query, str) else list(query)
        counts = Counter(terms)
        result = {}
        known = [t for t in counts if sum(w * self.p_collection(t, f) for f, w, _, _ in spec) > 0]
        for entity, doc in self.tokens.items():
            if not known:  # no query term in the collection: no evidence, score 0 (log -inf)
                result[entity] = -math.inf
                continue
            score = 0.0
            for term, n in counts.items():
                p_c = sum(w * self.p_collection(term, f) for f, w, _, _ in spec)
                if p_c == 0:
                    continue
                p_e = 0.0
                for f, w, kind, param in spec:
                    tf, length, background = doc[f].count(term), len(doc[f]), self.p_collection(term, f)
                    if kind == "jm":
                        p_e += w * ((1 - param) * (tf / length if length else 0.0) + param * background)
                    else:
                        p_e += w * (tf + param * background) / (length + param)
                score += n / len(terms) * (math.log(p_e) - math.log(p_c))
            result[entity] = score
        return result

    def matching(self, query: str | Sequence[str], spec: Spec) -> set[str]:
        """The entities a ranking holds: those with a query term in a field of positive weight."""
        terms = set(self.index.analyze(query) if isinstance(query, str) else query)
        weighted = [f for f, w, _, _ in spec if w > 0]
        return {e for e, doc in self.tokens.items() if any(t in doc[f] for t in terms for f in weighted)}

    @staticmethod
    def ranking(scores: dict[str, float], k: int) -> list[tuple[str, float]]:
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


def assert_scores(actual: dict[str, float], expected: dict[str, float]) -> None:
    assert actual.keys() == expected.keys()
    worst = max((0.0 if actual[e] == expected[e] else abs(actual[e] - expected[e]) for e in expected), default=0.0)
    assert worst <= TOLERANCE, worst


def assert_ranking(
    searcher: Searcher, query: str, model: LanguageModel, expected: dict[str, float], k: int, matching: set[str]
) -> None:
    """The ranking is the reference top k of the ``matching`` entities (those holding a query term
    in a weighted field; the others are not ranked): the same scores rank by rank, every entity with
    its own reference score, sorted by (score, entity id), and no matching entity missing that beats
    the k-th score. Entities whose reference scores differ by less than the tolerance (mathematically
    equal sums rounded differently) may swap."""
    ranked = searcher.rank(query, model, k)
    if all(s == -math.inf for s in expected.values()):  # no query term in the collection: nothing ranked
        assert ranked == []
        return
    expected = {e: s for e, s in expected.items() if e in matching}
    assert {r.entity for r in ranked} <= matching
    reference = Reference.ranking(expected, k)
    assert [r.rank for r in ranked] == list(range(1, len(reference) + 1))
    for hit, (_, score) in zip(ranked, reference):
        assert abs(hit.score - score) <= TOLERANCE
        assert abs(hit.score - expected[hit.entity]) <= TOLERANCE
    assert ranked == sorted(ranked, key=lambda r: (-r.score, r.entity))
    boundary = reference[-1][1]
    assert {e for e, s in expected.items() if s > boundary + TOLERANCE} <= {r.entity for r in ranked}


# --- indexes --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_index(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    out = tmp_path_factory.mktemp("sample") / "index"
    build_dbpedia_index([dbpedia_sample], out, workers=1)
    with EntityIndex(out) as index:
        yield index


WORDS = ["river", "valley", "north", "airline", "castle", "music", "band", "french", "island", "rock",
         "station", "war", "film", "king", "city", "bridge", "garden", "tower", "lake", "paris"]


def write_synthetic_dumps(directory: Path, entities: int = 60, seed: int = 3) -> None:
    """A seeded DBpedia-shaped corpus: labels, comments, redirects, object and literal properties,
    Zipfian words, and pairs of identical entities (exact ties)."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]

    def text(n: int) -> str:
        return " ".join(rng.choices(WORDS, weights, k=n))

    resource = "<http://dbpedia.org/resource/{}>".format
    label, comment = "<http://www.w3.org/2000/01/rdf-schema#label>", "<http://www.w3.org/2000/01/rdf-schema#comment>"
    files: dict[str, list[str]] = {name: [] for name in ("labels_en", "short_abstracts_en",
                                                         "transitive_redirects_en", "mappingbased_objects_en")}
    previous = ("", "")
    for i in range(entities):
        title = f"Thing_{(i * 37) % entities:03d}"
        if i % 10 == 9:  # a twin of the previous entity
            name, abstract = previous
        else:
            name, abstract = text(rng.randint(1, 3)), text(rng.randint(3, 25))
        previous = (name, abstract)
        files["labels_en"].append(f'{resource(title)} {label} "{name}"@en .')
        files["short_abstracts_en"].append(f'{resource(title)} {comment} "{abstract}"@en .')
        if i % 10 not in (8, 9) and rng.random() < 0.3:
            redirect = f"Redirect_{i}"
            files["labels_en"].append(f'{resource(redirect)} {label} "{text(2)}"@en .')
            files["transitive_redirects_en"].append(
                f"{resource(redirect)} <http://dbpedia.org/ontology/wikiPageRedirects> {resource(title)} .")
        if i % 10 not in (8, 9) and rng.random() < 0.5:
            files["mappingbased_objects_en"].append(
                f"{resource(title)} <http://dbpedia.org/ontology/location> {resource(text(1).title())} .")
    for name, lines in files.items():
        (directory / f"{name}.ttl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def synthetic_index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    dumps = tmp_path_factory.mktemp("synthetic-dumps")
    write_synthetic_dumps(dumps)
    out = tmp_path_factory.mktemp("synthetic") / "index"
    build_dbpedia_index([dumps], out, workers=1)
    with EntityIndex(out) as index:
        yield index


def write_index(out: Path, documents: list[EntityDocument]) -> EntityIndex:
    """An index of the given documents, in the given docid order (not entity-id order)."""
    out.mkdir(parents=True)
    writer = EntityIndexWriter(out)
    writer.add_all(documents)
    writer.close(merge=True)
    finish_index(out, writer.written)
    return EntityIndex(out)


@pytest.fixture(scope="module")
def two_entities(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    """The hand-worked example of Eq. 16."""
    documents = [
        EntityDocument("<dbpedia:E1>", ("alpha",), ("alpha beta beta gamma",)),
        EntityDocument("<dbpedia:E2>", ("delta",), ("beta gamma gamma gamma",)),
    ]
    with write_index(tmp_path_factory.mktemp("two") / "index", documents) as index:
        yield index


@pytest.fixture(scope="module")
def edge_index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    """Empty fields, identical documents (ties), and docid order unlike entity-id order."""
    documents = [
        EntityDocument("<dbpedia:Zeta>", ("river north",), ("river valley north river",)),
        EntityDocument("<dbpedia:Beta>", ("river north",), ("river valley north river",)),
        EntityDocument("<dbpedia:No_names>", (), ("river castle",)),
        EntityDocument("<dbpedia:No_content>", ("castle river",), ()),
        EntityDocument("<dbpedia:Alpha>", ("river north",), ("river valley north river",)),
        EntityDocument("<dbpedia:Other_b>", ("lake",), ("garden tower",)),
        EntityDocument("<dbpedia:Other_a>", ("lake",), ("garden tower",)),
        EntityDocument("<dbpedia:Long>", ("bridge",), ("garden " * 40,)),
    ]
    with write_index(tmp_path_factory.mktemp("edge") / "index", documents) as index:
        yield index


# --- the real DBpedia sample ----------------------------------------------------------------------

SAMPLE_QUERIES = [
    "airline company founded", "air india", "korean air cathay pacific", "Obama's family",
    "roman architecture ancient", "the the of", "", "zzzqqqx", "air air air india zzzqqqx",
    "Normandy invasion war", "naval air station jacksonville", "émigré café",
]


def test_exact_lengths_match_raw_text(sample_index: EntityIndex) -> None:
    reference = Reference(sample_index)
    for f in FIELDS:
        assert sample_index.lengths(f).tolist() == [len(reference.tokens[e][f]) for e in sample_index.entity_ids]


@pytest.mark.parametrize("name", list(MODELS))
def test_sample_candidate_scores_equal_reference(sample_index: EntityIndex, name: str) -> None:
    model, spec = MODELS[name]
    reference = Reference(sample_index)
    scorer = EntityScorer(sample_index, model)
    for query in SAMPLE_QUERIES:
        assert_scores(scorer.score_candidates(query, sample_index.entity_ids), reference.scores(query, spec))


@pytest.mark.parametrize("name", list(MODELS))
def test_sample_rankings_equal_reference(sample_index: EntityIndex, dbpedia_sample: Path, name: str) -> None:
    model, spec = MODELS[name]
    reference = Reference(sample_index)
    query_file = dbpedia_sample.parent / "dbpedia-entity-v2" / "queries-v2.txt"
    queries = [line.split("\t", 1)[1] for line in query_file.read_text().splitlines()[:40]] if query_file.exists() else []
    searcher = Searcher(sample_index)
    for query in SAMPLE_QUERIES + queries:
        expected, matching = reference.scores(query, spec), reference.matching(query, spec)
        for k in (1, 10, 1000):
            assert_ranking(searcher, query, model, expected, k, matching)


# --- synthetic corpus (real dump path) -------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_synthetic_scores_and_rankings_equal_reference(synthetic_index: EntityIndex, name: str) -> None:
    model, spec = MODELS[name]
    reference = Reference(synthetic_index)
    searcher = Searcher(synthetic_index)
    queries = ["river valley", "paris paris garden", "north castle king", "rock", "lake zzz", "music band tower"]
    for query in queries:
        expected = reference.scores(query, spec)
        actual = {s.entity: s.log_score for s in searcher.score(query, synthetic_index.entity_ids, model)}
        assert_scores(actual, expected)
        for k in (3, 9, 10, 25, 100):
            assert_ranking(searcher, query, model, expected, k, reference.matching(query, spec))


def test_synthetic_corpus_has_ties(synthetic_index: EntityIndex) -> None:
    scores = Reference(synthetic_index).scores("river valley", MODELS["mlm"][1])
    assert len(set(scores.values())) < len(scores) - 5


def test_candidate_subsets_and_unknown_entities(synthetic_index: EntityIndex) -> None:
    scorer = MLMScorer(synthetic_index)
    expected = Reference(synthetic_index).scores("river north", MODELS["mlm"][1])
    chosen = synthetic_index.entity_ids[::-7] + ["<dbpedia:Not_in_the_index>"] + synthetic_index.entity_ids[:2]
    actual = scorer.score_candidates("river north", chosen)
    assert list(actual) == list(dict.fromkeys(e for e in chosen if e in expected))
    assert_scores(actual, {e: expected[e] for e in actual})
    assert scorer.score_candidates("river north", []) == {}
    assert scorer.score_candidates(["river", "north"], chosen) == actual


def test_prior_is_added_to_the_log_score(synthetic_index: EntityIndex) -> None:
    ids = synthetic_index.entity_ids
    probabilities = {e: (i % 7 + 1) / 10 for i, e in enumerate(ids)}
    prior = EntityPrior.from_probabilities(synthetic_index, probabilities, default=1.0)
    expected = {e: s + math.log(probabilities[e]) for e, s in
                Reference(synthetic_index).scores("river castle", MODELS["mlm"][1]).items()}
    scorer = MLMScorer(synthetic_index, prior=prior)
    assert_scores(scorer.score_candidates("river castle", ids), expected)
    matching = Reference(synthetic_index).matching("river castle", MODELS["mlm"][1])
    for k in (10, 1000):
        ranked = Searcher(synthetic_index).rank("river castle", mlm(), k, prior=prior)
        assert [r.entity for r in ranked] == [e for e, _ in Reference.ranking({e: expected[e] for e in matching}, k)]
        assert all(abs(r.score - expected[r.entity]) <= TOLERANCE for r in ranked)
    assert len(matching) < len(ids)  # entities without a query term are not ranked, whatever their prior


# --- hand-worked Eq. 16 --------------------------------------------------------------------------


def test_equation_16_by_hand(two_entities: EntityIndex) -> None:
    # |C_names| = 2, |C_content| = 8; P(alpha|C) = .2 * 1/2 + .8 * 1/8 = .2; P(beta|C) = .8 * 3/8 = .3.
    # E1: P(alpha|e) = .2 (.9 * 1 + .1 * .5) + .8 (.9 * 1/4 + .1/8) = .38; P(beta|e) = .8 (.9/2 + .1 * 3/8) = .39
    # E2: P(alpha|e) = .2 * .1 * .5 + .8 * .1/8 = .02;                   P(beta|e) = .8 (.9/4 + .1 * 3/8) = .21
    likelihood = MLMScorer(two_entities).normalized_query_likelihood("alpha beta", ["<dbpedia:E1>", "<dbpedia:E2>"])
    e1, e2 = likelihood["<dbpedia:E1>"], likelihood["<dbpedia:E2>"]
    assert e1.log_score == pytest.approx(0.5 * math.log(0.38 / 0.2) + 0.5 * math.log(0.39 / 0.3), abs=1e-12)
    assert e1.score == pytest.approx(math.sqrt(1.9 * 1.3), abs=1e-12)
    assert e2.score == pytest.approx(math.sqrt(0.1 * 0.7), abs=1e-12)
    # An unknown term is skipped but counts in |q|.
    e1_unknown = MLMScorer(two_entities).normalized_query_likelihood("alpha zzz", ["<dbpedia:E1>"])["<dbpedia:E1>"]
    assert e1_unknown.score == pytest.approx(math.sqrt(1.9), abs=1e-12)
    ranked = Searcher(two_entities).rank("alpha beta")
    assert [(r.rank, r.entity) for r in ranked] == [(1, "<dbpedia:E1>"), (2, "<dbpedia:E2>")]
    assert ranked[0].score == pytest.approx(e1.log_score, abs=1e-12)


def test_empty_query_and_unknown_terms(two_entities: EntityIndex) -> None:
    scorer, searcher = MLMScorer(two_entities), Searcher(two_entities)
    for query in ("", "the of and", "it", "zzz", "zzz yyy"):
        # |q| = 0 or no known term: no evidence, log score -inf and score 0 (not 1.0, which would
        # outrank every query with content)
        assert scorer.score_candidates(query, two_entities.entity_ids) == {e: -math.inf for e in two_entities.entity_ids}
        assert all(q.score == 0.0 for q in scorer.normalized_query_likelihood(query, ["<dbpedia:E1>"]).values())
        assert searcher.rank(query, mlm()) == []
        assert searcher.rank(query, BM25()) == []
        assert searcher.rank(query, Rerank(BM25(), mlm())) == []


# --- empty fields and ties -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_empty_fields_and_ties(edge_index: EntityIndex, name: str) -> None:
    model, spec = MODELS[name]
    reference = Reference(edge_index)
    searcher = Searcher(edge_index)
    for query in ("river", "river north", "castle", "garden", "lake tower", "bridge garden"):
        expected = reference.scores(query, spec)
        assert_scores(EntityScorer(edge_index, model).score_candidates(query, edge_index.entity_ids), expected)
        for k in range(1, 9):
            assert_ranking(searcher, query, model, expected, k, reference.matching(query, spec))


def test_identical_entities_rank_by_entity_id(edge_index: EntityIndex) -> None:
    ranked = Searcher(edge_index).rank("valley", mlm(), 3)
    assert [r.entity for r in ranked] == ["<dbpedia:Alpha>", "<dbpedia:Beta>", "<dbpedia:Zeta>"]
    assert ranked[0].score == ranked[1].score == ranked[2].score
    # Entities without the term (their smoothing-only score would be log(lambda)) are not ranked.
    assert Searcher(edge_index).rank("valley", mlm(), 8) == ranked


@pytest.mark.parametrize("name", ["mlm-no-names", "mlm-names-lambda-1", "lm-dirichlet"])
def test_rankings_hold_only_entities_with_a_query_term_in_a_weighted_field(edge_index: EntityIndex, name: str) -> None:
    """No_content holds "castle" in names only: not ranked when names has weight 0; ranked (with
    the score of an entity without the term) when names has weight but lambda 1."""
    model, spec = MODELS[name]
    ranked = {r.entity: r.score for r in Searcher(edge_index).rank("castle bridge", model, 8)}
    expected = Reference(edge_index).scores("castle bridge", spec)
    holding = {"mlm-no-names": {"<dbpedia:No_names>"}, "mlm-names-lambda-1": {"<dbpedia:No_names>", "<dbpedia:No_content>", "<dbpedia:Long>"},
               "lm-dirichlet": {"<dbpedia:No_names>"}}[name]
    assert ranked.keys() == holding
    assert all(abs(ranked[e] - expected[e]) <= TOLERANCE for e in holding)


# --- BM25 -----------------------------------------------------------------------------------------


def lucene_bm25(index: EntityIndex, query: str, field: str, k1: float, b: float) -> dict[str, float]:
    """Every hit's BM25 score straight from Lucene's IndexSearcher (through pyjnius)."""
    reader = jnius().cast("org.apache.lucene.index.IndexReader", index.reader)
    searcher = java_class("org.apache.lucene.search.IndexSearcher")(reader)
    searcher.setSimilarity(java_class("org.apache.lucene.search.similarities.BM25Similarity")(k1, b))
    builder = java_class("org.apache.lucene.search.BooleanQuery$Builder")()
    should = java_class("org.apache.lucene.search.BooleanClause$Occur").SHOULD
    for term, n in Counter(index.analyze(query)).items():
        clause = java_class("org.apache.lucene.search.TermQuery")(java_class("org.apache.lucene.index.Term")(field, term))
        if n > 1:
            clause = java_class("org.apache.lucene.search.BoostQuery")(clause, float(n))
        builder.add(clause, should)
    hits = searcher.search(builder.build(), index.num_entities).scoreDocs
    return {index.entity(hit.doc): hit.score for hit in hits}


@pytest.mark.parametrize(("field", "k1", "b"), [("content", 0.9, 0.4), ("names", 1.2, 0.75), ("content", 0.0, 0.0)])
def test_bm25_equals_lucene_with_entity_id_ties(synthetic_index: EntityIndex, field: str, k1: float, b: float) -> None:
    searcher = Searcher(synthetic_index)
    for query in ("river valley", "paris paris garden", "rock", "king"):
        expected = lucene_bm25(synthetic_index, query, field, k1, b)
        for k in (1, 5, 10, 1000):
            ranked = searcher.rank(query, BM25(field, k1, b), k)
            assert [(r.entity, r.score) for r in ranked] == Reference.ranking(expected, k)


def test_bm25_ties_follow_entity_ids_not_docids(edge_index: EntityIndex) -> None:
    # Zeta, Beta and Alpha are identical; Zeta has the smallest docid.
    ranked = Searcher(edge_index).rank("valley", BM25(), 2)
    assert [r.entity for r in ranked] == ["<dbpedia:Alpha>", "<dbpedia:Beta>"]
    assert ranked[0].score == ranked[1].score


def test_bm25f_and_rerank(synthetic_index: EntityIndex) -> None:
    searcher = Searcher(synthetic_index)
    ranked = searcher.rank("river valley", BM25F(), 10)
    assert len(ranked) == 10 and all(a.score >= b.score for a, b in zip(ranked, ranked[1:]))
    first = {r.entity for r in searcher.rank("river valley", BM25(), 15)}
    reference = Reference(synthetic_index).scores("river valley", MODELS["mlm"][1])
    reranked = searcher.rank("river valley", Rerank(BM25(), mlm(), depth=15), 10)
    assert [(r.entity, pytest.approx(r.score, abs=TOLERANCE)) for r in reranked] == [
        (e, pytest.approx(s, abs=TOLERANCE)) for e, s in Reference.ranking({e: reference[e] for e in first}, 10)
    ]


# --- long postings (the Java helper's table of frequent (freq, length) deltas) ---------------------


@pytest.fixture(scope="module")
def long_postings_index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    """1,500 entities sharing common terms, with frequencies past 8 and content past 2,048 tokens."""
    rng = random.Random(11)
    documents = []
    for i in range(1500):
        content = ["river"] * rng.choice([0, 1, 1, 2, 3, 9, 12]) + ["valley"] * rng.choice([0, 1, 2])
        content += rng.choices(WORDS[4:], k=rng.choice([0, 3, 20, 150, 2100]) if i % 50 == 0 else rng.randint(0, 40))
        rng.shuffle(content)
        names = (" ".join(rng.choices(WORDS[:6], k=rng.randint(1, 3))),) if i % 7 else ()
        documents.append(EntityDocument(f"<dbpedia:Long_{(i * 7919) % 1500:04d}>", names, (" ".join(content),)))
    with write_index(tmp_path_factory.mktemp("long") / "index", documents) as index:
        yield index


@pytest.mark.parametrize("name", ["mlm", "mlm-0.5", "lm", "lm-names", "mlm-mixed"])
def test_long_postings_equal_reference(long_postings_index: EntityIndex, name: str) -> None:
    model, spec = MODELS[name]
    reference = Reference(long_postings_index)
    searcher = Searcher(long_postings_index)
    assert long_postings_index.document_frequency("river", "content") > 1024
    for query in ("river", "river valley", "valley river river north"):
        expected = reference.scores(query, spec)
        actual = {s.entity: s.log_score for s in searcher.score(query, long_postings_index.entity_ids, model)}
        assert_scores(actual, expected)
        for k in (1, 100, 1500):
            assert_ranking(searcher, query, model, expected, k, reference.matching(query, spec))


# --- dynamic pruning (the Java helper's MaxScore over docid windows for JM models) -----------------


@pytest.fixture(scope="module")
def pruning_index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    """6,000 entities over a few common terms (many docid windows, full postings blocks): "river"
    and "valley" in short contents, the others only in long ones (low bounds: prunable), empty
    fields and exact duplicates (ties)."""
    rng = random.Random(23)
    documents = []
    for i in range(6000):
        if i % 997 == 5:
            content = ["river", "valley"]  # duplicates of one another: ties ordered by entity id
        elif i % 3 == 0:
            content = rng.choices(WORDS[:2], k=rng.choice([1, 2, 5, 20]))
        else:
            content = rng.choices(WORDS[:8], k=rng.choice([90, 300])) if i % 40 else []
        names = (" ".join(rng.choices(WORDS[8:12], k=rng.randint(1, 3))),) if i % 9 else ()
        documents.append(EntityDocument(f"<dbpedia:Prune_{(i * 7919) % 6000:04d}>", names, (" ".join(content),)))
    with write_index(tmp_path_factory.mktemp("prune") / "index", documents) as index:
        yield index


def assert_pruned_rankings(index: EntityIndex, name: str, queries: tuple[str, ...], ks: tuple[int, ...]) -> None:
    """The top k of each query equal the reference's, with bit for bit the candidate scores."""
    model, spec = MODELS[name]
    reference = Reference(index)
    searcher = Searcher(index)
    ids = index.entity_ids
    for query in queries:
        expected = reference.scores(query, spec)
        exact = {s.entity: s.log_score for s in searcher.score(query, ids, model)}
        for k in ks:
            assert_ranking(searcher, query, model, expected, k, reference.matching(query, spec))
            ranked = searcher.rank(query, model, k)
            assert all(r.score == exact[r.entity] for r in ranked)


@pytest.mark.parametrize("name", ["mlm", "mlm-0.5", "lm", "lm-names"])
def test_pruned_rankings_equal_reference_and_candidate_scores(pruning_index: EntityIndex, name: str) -> None:
    queries = ("river north", "valley river river north", " ".join(WORDS[:6]), "river zzzqqqx castle", "music island")
    assert_pruned_rankings(pruning_index, name, queries, (1, 10, 100, 1000))


@pytest.fixture(scope="module")
def mixed_density_index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    """8,192 entities (8 docid windows), all holding "river" in their contents (many postings, a low
    bound), a few "castle" (1 in 61) and "island" (1 in 47) in short contents or in their names (high
    bounds): once the ranking is full, the candidates of a window are too few to read "river" whole,
    so its postings are advanced to them."""
    rng = random.Random(29)
    documents = []
    for i in range(8192):
        words = ["river"] * rng.randint(1, 3) + rng.choices(WORDS[9:], k=rng.choice([5, 40, 200]))
        names = (rng.choice(WORDS[9:]),)
        if i % 61 == 7:
            words = ["castle", "river"] + rng.choices(WORDS[9:], k=rng.randint(1, 12))
        if i % 47 == 3:
            names = ("island " + rng.choice(WORDS[9:]),) if i % 2 else names
            words += ["island"]
        rng.shuffle(words)
        documents.append(EntityDocument(f"<dbpedia:Mixed_{(i * 7919) % 8192:04d}>", names, (" ".join(words),)))
    with write_index(tmp_path_factory.mktemp("mixed") / "index", documents) as index:
        yield index


@pytest.mark.parametrize("name", ["mlm", "lm"])
def test_pruned_rankings_advancing_a_common_term(mixed_density_index: EntityIndex, name: str) -> None:
    assert_pruned_rankings(mixed_density_index, name, ("castle island river", "river castle", "island river river"),
                           (1, 5, 40))

