"""PRMS, SDM and FSDM against an independent brute-force computation (methods.md §4).

The reference recomputes every statistic from the raw stored text of each entity: each value of a
field is analyzed on its own with the index's analyzer (through Lucene's TokenStream API, positions
following the position increments), term frequencies, ordered (#1) and unordered (#uwW) window
counts are counted per value in Python, and the collection statistics summed over every entity.
It shares no code with ``retrieval`` and never reads the index's positions, so a window spanning
two values of a field (the index joins them with no position gap) would show as a difference.

The indexes here store every text field, for the reference to read; SDM/FSDM themselves rely on
the index's position gap between values, or on the stored text of an index written without one.
"""

from __future__ import annotations

import functools
import math
import random
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from elquery.base import ElqueryError
from elquery.indexing import lucene_writer
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.entity_documents import EntityDocument
from elquery.indexing.index_files import finish_index
from elquery.indexing.lucene_writer import WrittenDocuments
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import FIELDS, analyzer
from elquery.kb.jvm import java_class, jnius, utf8_texts
from elquery.retrieval import BM25, EntityScorer, lucene, Rerank, Searcher, fsdm, model_from_name, prms, sdm
from elquery.retrieval.models import LanguageModel, SequentialDependence
from test_retrieval_scoring import write_index  # pytest puts this folder on sys.path

TOLERANCE = 1e-9


# --- the brute-force reference ------------------------------------------------------------------


@functools.cache
def _analyzer() -> Any:
    return analyzer()


def tokens_with_positions(text: str) -> list[tuple[int, str]]:
    """(position, term) of the tokens of one value, positions as Lucene counts them."""
    attributes = "org.apache.lucene.analysis.tokenattributes."
    stream = _analyzer().tokenStream("", text)
    cast = jnius().cast
    term = cast(attributes + "CharTermAttribute", stream.addAttribute(java_class(attributes + "CharTermAttribute")))
    step = cast(attributes + "PositionIncrementAttribute",
                stream.addAttribute(java_class(attributes + "PositionIncrementAttribute")))
    stream.reset()
    out, position = [], -1
    while stream.incrementToken():
        position += step.getPositionIncrement()
        out.append((position, term.toString()))
    stream.end()
    stream.close()
    return out


class Reference:
    """PRMS, SDM and FSDM from the stored values of every entity."""

    def __init__(self, index: EntityIndex) -> None:
        self.index = index
        self.values = {}
        stored = utf8_texts(java_class("org.elquery.index.IndexAccess").storedValues(
            index.reader, list(range(len(index.entity_ids))), list(FIELDS)))
        for docid, e in enumerate(index.entity_ids):
            texts = dict(zip(FIELDS, stored[docid * len(FIELDS):(docid + 1) * len(FIELDS)], strict=True))
            self.values[e] = {f: [tokens_with_positions(v) for v in texts[f].split("\n") if v] for f in FIELDS}
        self.tokens = {e: {f: [t for value in doc[f] for _, t in value] for f in FIELDS} for e, doc in self.values.items()}
        self.total = {f: sum(len(doc[f]) for doc in self.tokens.values()) for f in FIELDS}
        self.non_empty = {f: sum(1 for doc in self.tokens.values() if doc[f]) for f in FIELDS}

    def query(self, text: str) -> tuple[list[str], list[int]]:
        tokens = tokens_with_positions(text)
        return [t for _, t in tokens], [p - q for (p, _), (q, _) in zip(tokens[1:], tokens)]

    # --- counts ---

    def count(self, entity: str, field: str, kind: str, a: str, b: str = "", step: int = 1, window: int = 8) -> int:
        n = 0
        for value in self.values[entity][field]:
            if kind == "T":
                n += sum(1 for _, t in value if t == a)
                continue
            pa = [p for p, t in value if t == a]
            pb = [p for p, t in value if t == b]
            if kind == "O":
                n += sum(1 for p in pa if p + step in pb)
            elif a == b:
                n += sum(1 for p in pa for q in pb if p < q and q - p < window)
            else:
                n += sum(1 for p in pa for q in pb if abs(q - p) < window)
        return n

    def collection(self, field: str, kind: str, *args: object) -> int:
        return sum(self.count(e, field, kind, *args) for e in self.index.entity_ids)  # type: ignore[arg-type]

    # --- models ---

    def fsdm(self, text: str, model: SequentialDependence) -> dict[str, float]:
        """Scores of the entities holding a query term in a weighted field."""
        terms, steps = self.query(text)
        n = len(self.index.entity_ids)
        mu = {f.field: f.mu if f.mu is not None else max(1.0, self.total[f.field] / n) for f in model.fields}
        components = []  # (lambda, kind, weights, args)
        for t in terms:
            components.append((model.lambdas[0], "T", {f.field: f.unigram for f in model.fields}, (t,)))
        for i in range(len(terms) - 1):
            args = (terms[i], terms[i + 1], steps[i], model.window)
            components.append((model.lambdas[1], "O", {f.field: f.ordered for f in model.fields}, args))
            components.append((model.lambdas[2], "U", {f.field: f.unordered for f in model.fields}, args))
        weighted = [f.field for f in model.fields if f.unigram or f.ordered or f.unordered]
        matched = [e for e in self.index.entity_ids if any(t in self.tokens[e][f] for t in terms for f in weighted)]
        if not any(self.collection(f, "T", t) for t in terms for f in weighted):
            return {}
        scores = {e: 0.0 for e in matched}
        for lam, kind, weights, args in components:
            cf = {f: self.collection(f, kind, *args) for f in weights}
            if lam == 0 or not any(w > 0 and cf[f] > 0 and self.total[f] > 0 for f, w in weights.items()):
                continue
            for e in matched:
                mixture = sum(
                    w * (self.count(e, f, kind, *args) + mu[f] * cf[f] / self.total[f]) / (len(self.tokens[e][f]) + mu[f])
                    for f, w in weights.items() if w > 0
                )
                scores[e] += lam * math.log(mixture)
        return scores

    def prms(self, text: str, lambda_: float) -> dict[str, float]:
        """Eq. 16 with P(t|theta_e) = sum_f P(f|t) [(1 - lambda) tf/|e_f| + lambda P(t|C_f)]."""
        terms, _ = self.query(text)
        counts = Counter(terms)
        prior = {f: self.non_empty[f] / sum(self.non_empty.values()) for f in FIELDS}
        scores = {e: 0.0 for e in self.index.entity_ids}
        for t, n in counts.items():
            p_c = {f: self.collection(f, "T", t) / self.total[f] for f in FIELDS}
            norm = sum(p_c[f] * prior[f] for f in FIELDS)
            if norm == 0:
                continue
            w = {f: p_c[f] * prior[f] / norm for f in FIELDS}
            background = sum(w[f] * p_c[f] for f in FIELDS)
            for e in scores:
                p_e = 0.0
                for f in FIELDS:
                    length = len(self.tokens[e][f])
                    p_e += w[f] * ((1 - lambda_) * (self.tokens[e][f].count(t) / length if length else 0) + lambda_ * p_c[f])
                scores[e] += n / len(terms) * (math.log(p_e) - math.log(background))
        return scores


def check_ranking(searcher: Searcher, query: str, model: object, expected: dict[str, float], k: int) -> None:
    ranked = searcher.rank(query, model, k)  # type: ignore[arg-type]
    reference = sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:k]
    assert len(ranked) == len(reference)
    for hit, (_, score) in zip(ranked, reference):
        assert abs(hit.score - score) <= TOLERANCE
        assert abs(hit.score - expected[hit.entity]) <= TOLERANCE
    assert ranked == sorted(ranked, key=lambda r: (-r.score, r.entity))


def check_candidates(index: EntityIndex, query: str, model: object, expected: dict[str, float]) -> None:
    candidates = list(expected)[::3] + ["<dbpedia:Not_in_the_index>"]
    actual = EntityScorer(index, model).score_candidates(query, candidates)  # type: ignore[arg-type]
    assert list(actual) == [c for c in candidates if c in expected]
    for entity, score in actual.items():
        assert abs(score - expected[entity]) <= TOLERANCE, (entity, score, expected[entity])


# --- indexes (every text field stored) --------------------------------------------------------------


@pytest.fixture(scope="module")
def all_stored() -> None:
    """Indexes built here store every text field (an index that stores only some keeps the same
    name-free default)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(lucene_writer, "STORED_FIELDS", FIELDS, raising=False)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def sample_index(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory, all_stored: None) -> EntityIndex:
    out = tmp_path_factory.mktemp("sample") / "index"
    build_dbpedia_index([dbpedia_sample], out, workers=1)
    with EntityIndex(out) as index:
        yield index


WORDS = ["river", "valley", "north", "airline", "castle", "music", "band", "french", "island", "rock"]


@pytest.fixture(scope="module")
def synthetic_index(tmp_path_factory: pytest.TempPathFactory, all_stored: None) -> EntityIndex:
    """Seeded multi-valued fields over a small vocabulary (many windows, many across values), stop
    words inside values, empty fields, and identical entities (ties)."""
    rng = random.Random(7)

    def value() -> str:
        words = rng.choices(WORDS + ["the", "of"], k=rng.randint(1, 9))
        return " ".join(words)

    documents = []
    for i in range(80):
        names = tuple(value() for _ in range(rng.randint(0, 3)))
        content = tuple(value() for _ in range(rng.randint(0, 6)))
        documents.append(EntityDocument(f"<dbpedia:E{(i * 31) % 80:02d}>", names, content))
        if i % 20 == 0:
            documents.append(EntityDocument(f"<dbpedia:Twin{i:02d}>", names, content))
    with write_index(tmp_path_factory.mktemp("synthetic") / "index", documents) as index:
        yield index


@pytest.fixture(scope="module")
def boundary_index(tmp_path_factory: pytest.TempPathFactory, all_stored: None) -> EntityIndex:
    """Windows that exist only across two values of a field."""
    documents = [
        EntityDocument("<dbpedia:Across>", ("alpha beta", "gamma delta"), ("river", "valley north")),
        EntityDocument("<dbpedia:Within>", ("beta gamma",), ("river valley",)),
        EntityDocument("<dbpedia:Stop>", ("beta of gamma",), ("castle",)),
        EntityDocument("<dbpedia:Other>", ("lake",), ("river the", "the valley")),
    ]
    with write_index(tmp_path_factory.mktemp("boundary") / "index", documents) as index:
        yield index


MODELS: dict[str, SequentialDependence] = {
    "sdm": sdm(),
    "sdm-names": sdm("names", mu=3.0, lambdas=(0.5, 0.3, 0.2), window=4),
    "sdm-average-mu": sdm(mu=None),
    "fsdm": fsdm(),
    "fsdm-components": fsdm({"names": 0.5, "content": 0.5}, {"names": 1.0, "content": 0.0},
                            {"names": 0.3, "content": 0.7}, mu={"names": 2.0}, lambdas=(0.7, 0.2, 0.1)),
}

SAMPLE_QUERIES = ["air india", "korean air cathay pacific", "roman architecture ancient rome",
                  "bank of america", "the the of", "", "zzzqqqx air", "air air india", "naval air station jacksonville"]


# --- tests ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_sample_dependence_models_equal_reference(sample_index: EntityIndex, name: str) -> None:
    model = MODELS[name]
    reference = Reference(sample_index)
    with Searcher(sample_index) as searcher:
        for query in SAMPLE_QUERIES:
            expected = reference.fsdm(query, model)
            check_ranking(searcher, query, model, expected, 20)
            check_ranking(searcher, query, model, expected, 1000)
            if expected:
                check_candidates(sample_index, query, model, expected)


@pytest.mark.parametrize("name", list(MODELS))
def test_synthetic_dependence_models_equal_reference(synthetic_index: EntityIndex, name: str) -> None:
    model = MODELS[name]
    reference = Reference(synthetic_index)
    rng = random.Random(11)
    queries = [" ".join(rng.choices(WORDS + ["of"], k=rng.randint(1, 5))) for _ in range(15)]
    with Searcher(synthetic_index) as searcher:
        for query in queries:
            expected = reference.fsdm(query, model)
            check_ranking(searcher, query, model, expected, 10)
            check_candidates(synthetic_index, query, model, expected)


@pytest.mark.parametrize("lambda_", [0.1, 0.5])
def test_prms_equals_reference(sample_index: EntityIndex, synthetic_index: EntityIndex, lambda_: float) -> None:
    model = prms(smoothing=lambda_)
    for index, queries in ((sample_index, SAMPLE_QUERIES), (synthetic_index, ["river valley", "castle rock of", "band"])):
        reference = Reference(index)
        with Searcher(index) as searcher:
            for query in queries:
                expected = reference.prms(query, lambda_)
                if not any(expected.values()) and not index.analyze(query):
                    assert searcher.rank(query, model, 10) == []
                    continue
                # ranked: the entities holding a query term (P(f|t) > 0 in every field holding it)
                terms = set(reference.query(query)[0])
                holding = {e: s for e, s in expected.items() if any(terms & set(reference.tokens[e][f]) for f in FIELDS)}
                check_ranking(searcher, query, model, holding, 25)
                check_ranking(searcher, query, model, holding, 1000)
                check_candidates(index, query, model, expected)


def test_windows_never_span_two_values(boundary_index: EntityIndex) -> None:
    reference = Reference(boundary_index)
    # positions in the index run on across values: "beta" ends value 1 and "gamma" starts value 2
    assert reference.count("<dbpedia:Across>", "names", "O", "beta", "gamma") == 0
    assert reference.count("<dbpedia:Within>", "names", "O", "beta", "gamma") == 1
    model = sdm("names", mu=1.0, lambdas=(0.0, 1.0, 0.0))
    scores = EntityScorer(boundary_index, model).score_candidates("beta gamma", boundary_index.entity_ids)
    # names hold 9 tokens ("of" is a stop word); one ordered window in the collection (Within's):
    # Across has none, and Stop's "beta of gamma" is two positions apart
    assert scores["<dbpedia:Across>"] == pytest.approx(math.log((0 + 1.0 * 1 / 9) / (4 + 1.0)), abs=TOLERANCE)
    assert scores["<dbpedia:Within>"] == pytest.approx(math.log((1 + 1.0 * 1 / 9) / (2 + 1.0)), abs=TOLERANCE)
    for name, model in MODELS.items():
        for query in ("beta gamma", "river valley", "valley river", "beta of gamma", "alpha delta"):
            expected = reference.fsdm(query, model)
            actual = EntityScorer(boundary_index, model).score_candidates(query, list(expected))
            for entity, score in actual.items():
                assert abs(score - expected[entity]) <= TOLERANCE, (name, query, entity)


def test_ordered_window_follows_removed_stop_words(boundary_index: EntityIndex) -> None:
    """"beta of gamma" analyzes to beta, gamma two positions apart: #1 matches that phrase, not
    "beta gamma"."""
    reference = Reference(boundary_index)
    assert reference.query("beta of gamma") == (["beta", "gamma"], [2])
    model = sdm("names", mu=1.0, lambdas=(0.0, 1.0, 0.0))
    scores = EntityScorer(boundary_index, model).score_candidates("beta of gamma", ["<dbpedia:Stop>", "<dbpedia:Within>"])
    assert scores["<dbpedia:Stop>"] > scores["<dbpedia:Within>"]
    terms = EntityScorer(boundary_index, model).score_candidates(["beta", "gamma"], ["<dbpedia:Stop>", "<dbpedia:Within>"])
    assert terms["<dbpedia:Within>"] > terms["<dbpedia:Stop>"]


def test_rerank_and_cli_names(synthetic_index: EntityIndex) -> None:
    reference = Reference(synthetic_index)
    model = Rerank(BM25(), fsdm(), depth=30)
    with Searcher(synthetic_index) as searcher:
        first = {r.entity for r in searcher.rank("river valley", BM25(), 30)}
        ranked = searcher.rank("river valley", model, 10)
    expected = {e: s for e, s in reference.fsdm("river valley", fsdm()).items() if e in first}
    assert [(r.entity, round(r.score, 9)) for r in ranked] == [
        (e, round(s, 9)) for e, s in sorted(expected.items(), key=lambda i: (-i[1], i[0]))[:10]]
    assert model_from_name("fsdm", {"weight.O.names": "1", "weight.O.content": "0"}).fields[0].ordered == 1.0
    assert isinstance(model_from_name("prms", {"lambda": "0.3"}), LanguageModel)
    assert model_from_name("sdm", {"lambda.T": "0.6", "lambda.O": "0.2", "lambda.U": "0.2", "window": "12"}).window == 12


@pytest.mark.parametrize("params", [{"weight.names": "0.5"}, {"lambda.T": "-1"}, {"window": "1"}, {"mu.content": "0"},
                                    {"window": "2.5"}, {"field": "abstract"}])
def test_bad_parameters(params: dict[str, str]) -> None:
    name = "sdm" if "field" in params or "window" in params else "fsdm"
    with pytest.raises(ElqueryError):
        model_from_name(name, params)


def write_gapless_index(out: Path, documents: list[EntityDocument], stored: bool) -> EntityIndex:
    """An index as elquery wrote them before the gap between values: each field's values joined
    by line ends into one text, positions running on from value to value (plain Lucene)."""
    out.mkdir(parents=True)
    lucene = "org.apache.lucene."
    config = java_class(lucene + "index.IndexWriterConfig")(analyzer())
    directory = java_class(lucene + "store.FSDirectory").open(java_class("java.nio.file.Paths").get(str(out)))
    writer = java_class(lucene + "index.IndexWriter")(directory, config)
    store = java_class(lucene + "document.Field$Store")
    lengths: dict[str, list[int]] = {f: [] for f in FIELDS}
    for d in documents:
        document = java_class(lucene + "document.Document")()
        document.add(java_class(lucene + "document.StringField")("id", d.entity, store.YES))
        for f, values in zip(FIELDS, (d.names, d.content)):
            text = "\n".join(values)
            keep = store.YES if stored or f == "names" else store.NO
            document.add(java_class(lucene + "document.TextField")(f, text, keep))
            lengths[f].append(sum(len(tokens_with_positions(v)) for v in values))
            document.add(java_class(lucene + "document.NumericDocValuesField")(f"{f}_length", lengths[f][-1]))
        writer.addDocument(document)
    writer.forceMerge(1)
    writer.commit()
    writer.close()
    finish_index(out, WrittenDocuments([d.entity for d in documents], {f: array("i", lengths[f]) for f in FIELDS}))
    return EntityIndex(out)


BOUNDARY_DOCUMENTS = [
    EntityDocument("<dbpedia:Across>", ("alpha beta", "gamma delta"), ("river", "valley north", "the castle")),
    EntityDocument("<dbpedia:Within>", ("beta gamma",), ("river valley", "castle of north")),
    EntityDocument("<dbpedia:Other>", ("lake",), ("river the", "the valley")),
]


def test_the_index_leaves_a_gap_between_values(tmp_path: Path) -> None:
    """The default index (``content`` not stored) separates values by a position gap, recorded in
    its commit; SDM/FSDM need nothing else."""
    with write_index(tmp_path / "index", BOUNDARY_DOCUMENTS) as index:
        gap = lucene.value_gap(index)
        assert gap == 100
        postings = index.leaf.postings(java_class("org.apache.lucene.index.Term")("names", "gamma"),
                                       java_class("org.apache.lucene.index.PostingsEnum").POSITIONS)
        assert postings.advance(0) == 0 and postings.nextPosition() == 2 + gap  # alpha 0, beta 1, gamma 2 + gap
        assert index.lengths("names")[0] == 4
        scores = EntityScorer(index, sdm("content", mu=1.0, lambdas=(0.0, 1.0, 0.0))).score_candidates(
            "river valley", ["<dbpedia:Across>", "<dbpedia:Within>"])
        # one ordered window in the collection (Within's; Across's "river" | "valley" spans two
        # values); |C_content| = 10 ("the", "of" are stop words), both entities hold 4 tokens
        assert scores["<dbpedia:Across>"] == pytest.approx(math.log((1 / 10) / (4 + 1.0)), abs=TOLERANCE)
        assert scores["<dbpedia:Within>"] == pytest.approx(math.log((1 + 1 / 10) / (4 + 1.0)), abs=TOLERANCE)
        with pytest.raises(ElqueryError, match="window"):
            EntityScorer(index, sdm(window=gap + 2)).score_candidates("river valley", ["<dbpedia:Within>"])


def test_index_without_gap_reads_boundaries_from_stored_text(tmp_path: Path) -> None:
    with write_gapless_index(tmp_path / "stored", BOUNDARY_DOCUMENTS, stored=True) as index:
        assert lucene.value_gap(index) == 0
        reference = Reference(index)
        for model in MODELS.values():
            for query in ("beta gamma", "river valley", "valley river", "north the castle", "delta alpha"):
                expected = reference.fsdm(query, model)
                actual = EntityScorer(index, model).score_candidates(query, list(expected))
                for entity, score in actual.items():
                    assert abs(score - expected[entity]) <= TOLERANCE, (query, entity)
    with write_gapless_index(tmp_path / "unstored", BOUNDARY_DOCUMENTS, stored=False) as index:
        with pytest.raises(ElqueryError, match="not stored"):
            EntityScorer(index, sdm()).score_candidates("river valley", ["<dbpedia:Within>"])
        EntityScorer(index, sdm("names")).score_candidates("beta gamma", ["<dbpedia:Within>"])  # names are stored
