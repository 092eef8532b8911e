"""ELR (SDM+ELR, FSDM+ELR, MLM+ELR; methods.md §4) against an independent brute-force computation,
and the ``relations`` field of ``elquery index dbpedia --relations``.

The reference reads every entity's stored text and stored (related entity, predicate) pairs
(the indexes here store every field), recomputes the term statistics as
``test_retrieval_dependence.Reference`` does, and the entity component from the sets of pairs:
df, N_R, N_f, |C_f|, the top predicates, their mapping probabilities and the indicator counted
in Python. The real sample's relations are checked against the dump triples themselves.
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.indexing import lucene_writer
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.entity_documents import RDFS_COMMENT, RDFS_LABEL, EntityDocument
from elquery.indexing.index_files import finish_index
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import FIELDS, METADATA_FILE, RELATIONS_FIELD, length_file
from elquery.kb.jvm import java_class, utf8_texts
from elquery.indexing.ntriples import ObjectKind, ParseReport, dump_files, read_triples
from elquery.kb.entities import DBPEDIA_RESOURCE, entity_id
from elquery.indexing.lucene_writer import EntityIndexWriter
from elquery.retrieval import EntityScorer, Searcher, model_from_name
from elquery.retrieval.links import read_links
from elquery.retrieval.models import EntityLinkingRetrieval, LanguageModel, fsdm, fsdm_elr, mlm, mlm_elr, sdm, sdm_elr
from elquery.retrieval.scoring import LinkedQuery
from test_retrieval_dependence import WORDS, Reference  # pytest puts this folder on sys.path

TOLERANCE = 1e-9


# --- the brute-force reference ------------------------------------------------------------------


class ElrReference(Reference):
    """ELR from the stored values and stored relations of every entity."""

    def __init__(self, index: EntityIndex) -> None:
        super().__init__(index)
        stored = utf8_texts(java_class("org.elquery.index.IndexAccess").storedValues(
            index.reader, list(range(len(index.entity_ids))), [RELATIONS_FIELD]))
        self.pairs = {e: {tuple(line.split("\t")) for line in relations.split("\n") if line}
                      for e, relations in zip(index.entity_ids, stored, strict=True)}
        self.relations = {e: {r for r, _ in pairs} for e, pairs in self.pairs.items()}
        self.with_relations = sum(1 for r in self.relations.values() if r)
        predicates = {p for pairs in self.pairs.values() for _, p in pairs}
        self.with_predicate = {p: sum(1 for pairs in self.pairs.values() if any(q == p for _, q in pairs)) for p in predicates}
        self.predicate_links = {p: sum(1 for pairs in self.pairs.values() for _, q in pairs if q == p) for p in predicates}

    def fields(self, entity: str, model: EntityLinkingRetrieval) -> list[tuple[float, float, set[str]]]:
        """(P(f|e_i), df_f(e_i) / N_f, the entities whose f holds e_i) of each field of F(e_i)."""
        if not model.predicates:
            holders = {e for e, r in self.relations.items() if entity in r}
            return [(1.0, len(holders) / self.with_relations, holders)] if holders else []
        holders_by = defaultdict(set)
        for e, pairs in self.pairs.items():
            for r, p in pairs:
                if r == entity:
                    holders_by[p].add(e)
        top = sorted(holders_by, key=lambda p: (-len(holders_by[p]), p))[:model.predicates]
        mapping = {p: len(holders_by[p]) / self.predicate_links[p] * self.with_predicate[p] for p in top}
        return [(mapping[p] / sum(mapping.values()), len(holders_by[p]) / self.with_predicate[p], holders_by[p]) for p in top]

    def _mixture(self, entity: str, kind: str, args: tuple, weights: dict[str, float], mu: dict[str, float],
                 cf: dict[str, int]) -> float:
        return sum(w * (self.count(entity, f, kind, *args) + mu[f] * cf[f] / self.total[f])
                   / (len(self.tokens[entity][f]) + mu[f]) for f, w in weights.items() if w > 0)

    def text_part(self, text: str, model: EntityLinkingRetrieval) -> tuple[dict[str, float] | None, set[str]]:
        """The term part of every entity (None: no term part) and the entities it ranks."""
        terms, steps = self.query(text)
        n = len(terms)
        entities = self.index.entity_ids
        lambda_t, lambda_o, lambda_u, _ = model.lambdas
        if isinstance(model.text, LanguageModel):
            weights = {f.field: f.weight for f in model.text.fields}
            smoothing = {f.field: f.smoothing.lambda_ for f in model.text.fields}  # type: ignore[union-attr]
            scores = {e: 0.0 for e in entities}
            known = False
            for t in set(terms):
                p_c = {f: self.collection(f, "T", t) / self.total[f] for f in weights}
                background = sum(weights[f] * p_c[f] for f in weights)
                if background == 0:
                    continue
                known = True
                for e in entities:
                    p_e = sum(weights[f] * ((1 - smoothing[f]) * (self.tokens[e][f].count(t) / len(self.tokens[e][f])
                                                                  if self.tokens[e][f] else 0) + smoothing[f] * p_c[f])
                              for f in weights)
                    scores[e] += terms.count(t) / n * (math.log(p_e) - math.log(background))
            if not known or not lambda_t:
                return None, set()
            read = [f for f, w in weights.items() if w > 0]  # ranked: a query term in a field of positive weight
            return {e: lambda_t * s for e, s in scores.items()}, {
                e for e in entities if any(t in self.tokens[e][f] for t in terms for f in read)}
        fields = model.text.fields
        weighted = [f.field for f in fields if f.unigram or f.ordered or f.unordered]
        if not n or not (lambda_t or (n > 1 and (lambda_o or lambda_u))):
            return None, set()  # no term part
        if not any(self.collection(f, "T", t) for t in terms for f in weighted):
            return None, set()
        mu = {f.field: f.mu if f.mu is not None else max(1.0, self.total[f.field] / len(entities)) for f in fields}
        components = [(lambda_t / n, "T", {f.field: f.unigram for f in fields}, (t,)) for t in terms]
        for i in range(n - 1):
            args = (terms[i], terms[i + 1], steps[i], model.text.window)
            components.append((lambda_o / (n - 1), "O", {f.field: f.ordered for f in fields}, args))
            components.append((lambda_u / (n - 1), "U", {f.field: f.unordered for f in fields}, args))
        scores = {e: 0.0 for e in entities}
        for lam, kind, weights, args in components:
            cf = {f: self.collection(f, kind, *args) for f in weights}
            if lam == 0 or not any(w > 0 and cf[f] > 0 and self.total[f] > 0 for f, w in weights.items()):
                continue
            for e in entities:
                scores[e] += lam * math.log(self._mixture(e, kind, args, weights, mu, cf))
        ranked = {e for e in entities if any(t in self.tokens[e][f] for t in terms for f in weighted)}
        return scores, ranked

    def elr(self, text: str, links: tuple[tuple[str, float], ...], model: EntityLinkingRetrieval) -> dict[str, float]:
        """Scores of the entities ELR ranks: those the term part ranks and those relating to a
        linked entity."""
        text_scores, ranked = self.text_part(text, model)
        total = sum(s for _, s in links)
        alpha, lambda_e = model.alpha, model.lambdas[3]
        kept = []
        for entity, score in links:
            fields = self.fields(entity, model)
            if fields and lambda_e:
                kept.append((score / total, fields))
        if text_scores is None and not kept:
            return {}
        ranked |= {e for _, fields in kept for _, _, holders in fields for e in holders}
        return {
            e: (text_scores[e] if text_scores is not None else 0.0)
            + lambda_e * sum(w * math.log(sum(pf * ((1 - alpha) * (e in holders) + alpha * p) for pf, p, holders in fields))
                             for w, fields in kept)
            for e in ranked
        }


def check(searcher: Searcher, index: EntityIndex, query: LinkedQuery, model: EntityLinkingRetrieval,
          expected: dict[str, float], k: int) -> None:
    ranked = searcher.rank(query, model, k)
    reference = sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:k]
    assert len(ranked) == len(reference), (query, model.name)
    for hit, (_, score) in zip(ranked, reference):
        assert abs(hit.score - score) <= TOLERANCE
        assert abs(hit.score - expected[hit.entity]) <= TOLERANCE
    assert ranked == sorted(ranked, key=lambda r: (-r.score, r.entity))
    candidates = list(expected)[::2]
    actual = EntityScorer(index, model).score_candidates(query, candidates)
    for entity, score in actual.items():
        assert abs(score - expected[entity]) <= TOLERANCE, (entity, score, expected[entity])


# --- indexes (every field stored) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def all_stored() -> None:
    patch = pytest.MonkeyPatch()
    patch.setattr(lucene_writer, "STORED_FIELDS", (*FIELDS, RELATIONS_FIELD), raising=False)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def sample_index(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory, all_stored: None) -> EntityIndex:
    out = tmp_path_factory.mktemp("sample-elr") / "index"
    build_dbpedia_index([dbpedia_sample], out, workers=1, relations=True)
    with EntityIndex(out) as index:
        yield index


def write_relations_index(out: Path, documents: list[EntityDocument]) -> EntityIndex:
    out.mkdir(parents=True)
    writer = EntityIndexWriter(out, relations=True)
    writer.add_all(documents)
    writer.close(merge=True)
    finish_index(out, writer.written)
    return EntityIndex(out)


SYNTHETIC_ENTITIES = [f"<dbpedia:E{i:02d}>" for i in range(60)]
SYNTHETIC_PREDICATES = [f"http://dbpedia.org/ontology/p{i}" for i in range(5)]


@pytest.fixture(scope="module")
def synthetic_index(tmp_path_factory: pytest.TempPathFactory, all_stored: None) -> EntityIndex:
    """Seeded text over a small vocabulary, relations among the entities and to entities outside
    the index, entities with no relations, a popular target, and twins (ties)."""
    rng = random.Random(5)

    def value() -> str:
        return " ".join(rng.choices(WORDS + ["the", "of"], k=rng.randint(1, 7)))

    documents = []
    for i, entity in enumerate(SYNTHETIC_ENTITIES):
        names = tuple(value() for _ in range(rng.randint(0, 2)))
        content = tuple(value() for _ in range(rng.randint(0, 5)))
        related = {(r, rng.choice(SYNTHETIC_PREDICATES)) for r in rng.sample(SYNTHETIC_ENTITIES[:20], rng.randint(0, 4))} \
            if i % 7 else set()
        if i % 3 == 0:
            related |= {("<dbpedia:E00>", SYNTHETIC_PREDICATES[0]), ("<dbpedia:E00>", rng.choice(SYNTHETIC_PREDICATES)),
                        ("<dbpedia:Outside>", SYNTHETIC_PREDICATES[1])}
        documents.append(EntityDocument(entity, names, content, tuple(sorted(related))))
        if i % 15 == 0:
            documents.append(EntityDocument(f"<dbpedia:Twin{i:02d}>", names, content, tuple(sorted(related))))
    rng.shuffle(documents)  # docid order unlike entity-id order
    with write_relations_index(tmp_path_factory.mktemp("synthetic-elr") / "index", documents) as index:
        yield index


MODELS: dict[str, EntityLinkingRetrieval] = {
    "sdm-elr": sdm_elr(),
    "fsdm-elr": fsdm_elr(),
    "mlm-elr": mlm_elr(),
    "sdm-elr-params": sdm_elr(sdm("names", mu=3.0, window=4), (0.5, 0.2, 0.1, 0.4), alpha=0.3),
    "fsdm-elr-params": fsdm_elr(fsdm({"names": 0.5, "content": 0.5}, mu={"names": 2.0}), (0.6, 0.1, 0.1, 0.2), alpha=1.0),
    "mlm-elr-params": mlm_elr(mlm({"names": 0.6, "content": 0.4}, 0.3), 0.5, 0.5, alpha=0.05),
    "elr-only": sdm_elr(lambdas=(0.0, 0.0, 0.0, 1.0)),
    "sdm-elr-predicates": sdm_elr(predicates=2),
    "fsdm-elr-one-field": fsdm_elr(predicates=0),
    "mlm-elr-one-predicate": mlm_elr(predicates=1),
}

SAMPLE_QUERIES = [
    ("saab cars", (("<dbpedia:Saab_Automobile>", 0.8), ("<dbpedia:Saab_900>", 0.3))),
    ("airlines of asia", (("Singapore_Airlines", 0.5), ("<dbpedia:China_Airlines>", 0.25), ("<dbpedia:Lufthansa>", 2.0))),
    ("roman architecture ancient rome", (("<dbpedia:Rome>", 1.0),)),
    ("air india", ()),
    ("bank of america", (("<dbpedia:Air_India>", 1.0),)),  # an indexed entity no entity relates to: left out
    ("", (("<dbpedia:Saab_Automobile>", 1.0),)),
    ("the the of", (("<dbpedia:Normandy>", 0.4), ("<dbpedia:Arch_bridge>", 0.6))),
    ("zzzqqqx air", (("<dbpedia:Northwest_Airlines>", 1.0),)),
    ("zzzqqqx", ()),
]


# --- tests ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_sample_elr_models_equal_reference(sample_index: EntityIndex, name: str) -> None:
    model = MODELS[name]
    reference = ElrReference(sample_index)
    assert len(reference.elr("saab cars", SAMPLE_QUERIES[0][1], model)) > 0
    with Searcher(sample_index) as searcher:
        for text, links in SAMPLE_QUERIES:
            query = LinkedQuery(text, links)
            expected = reference.elr(text, query.links, model)
            check(searcher, sample_index, query, model, expected, 5)
            check(searcher, sample_index, query, model, expected, 1000)


@pytest.mark.parametrize("name", list(MODELS))
def test_synthetic_elr_models_equal_reference(synthetic_index: EntityIndex, name: str) -> None:
    model = MODELS[name]
    reference = ElrReference(synthetic_index)
    rng = random.Random(3)
    with Searcher(synthetic_index) as searcher:
        for _ in range(12):
            text = " ".join(rng.choices(WORDS + ["of"], k=rng.randint(0, 4)))
            chosen = rng.sample(SYNTHETIC_ENTITIES[:25] + ["<dbpedia:Twin15>"], rng.randint(0, 3))
            query = LinkedQuery(text, tuple((e, rng.choice([0.1, 0.5, 1.0, 3.0])) for e in chosen))
            expected = reference.elr(text, query.links, model)
            check(searcher, synthetic_index, query, model, expected, 7)
            check(searcher, synthetic_index, query, model, expected, 100)


def test_linked_entities_change_the_ranking(sample_index: EntityIndex) -> None:
    """The entity part moves the entities relating to a linked entity up: with no words in
    common, only they are ranked, all tied."""
    with Searcher(sample_index) as searcher:
        ranked = searcher.rank(LinkedQuery("zzzqqqx", (("<dbpedia:Saab_Automobile>", 1.0),)), sdm_elr(), 100)
        relating = {e for e in sample_index.entity_ids if "<dbpedia:Saab_Automobile>" in ElrReference(sample_index).relations[e]}
        assert {r.entity for r in ranked} == relating and len(relating) == 6
        assert len({r.score for r in ranked}) == 1
        assert searcher.rank(LinkedQuery("zzzqqqx", ()), sdm_elr(), 100) == []


def dump_relations(sample: Path, predicates: set[str]) -> dict[str, set[tuple[str, str]]]:
    """Straight from the dumps: the (DBpedia resource, predicate) pairs of the objects of an
    indexed predicate, per subject with rdfs:label and rdfs:comment."""
    literals: dict[str, set[str]] = defaultdict(set)
    related: dict[str, set[tuple[str, str]]] = defaultdict(set)
    report = ParseReport()
    for path in dump_files([sample]):
        for triple in read_triples(path, report):
            if triple.kind is ObjectKind.LITERAL:
                literals[triple.subject].add(triple.predicate)
            elif triple.kind is ObjectKind.IRI and triple.predicate in predicates and triple.object.startswith(DBPEDIA_RESOURCE):
                related[triple.subject].add((str(entity_id(triple.object)), triple.predicate))
    return {str(entity_id(s)): related.get(s, set()) for s, p in literals.items() if {RDFS_LABEL, RDFS_COMMENT} <= p}


def test_sample_relations_are_the_dump_objects(sample_index: EntityIndex, dbpedia_sample: Path) -> None:
    pairs = dump_relations(dbpedia_sample, set(sample_index.metadata["content_predicates"]))
    reference = ElrReference(sample_index)
    assert reference.pairs == {e: pairs[e] for e in sample_index.entity_ids}
    assert len({p for related in pairs.values() for _, p in related}) > 5
    expected = {e: {r for r, _ in related} for e, related in pairs.items()}
    assert reference.relations == {e: expected[e] for e in sample_index.entity_ids}
    lengths = sample_index.relation_lengths()
    assert lengths.tolist() == [len(expected[e]) for e in sample_index.entity_ids]
    assert np.load(sample_index.path / length_file(RELATIONS_FIELD)).tolist() == lengths.tolist()
    statistics = {"entities": sum(1 for r in expected.values() if r), "links": sum(len(r) for r in expected.values()),
                  "targets": len(set().union(*expected.values()))}
    assert sample_index.relation_statistics().as_dict() == statistics
    assert sample_index.metadata["relations"] is True and sample_index.metadata["relation_statistics"] == statistics
    assert sample_index.stats()["relations"] == statistics
    for target in ("<dbpedia:Saab_Automobile>", "<dbpedia:Rome>", "<dbpedia:Not_a_target>"):
        holders = [sample_index.docid(e) for e in sample_index.entity_ids if target in expected[e]]
        assert sample_index.related_docids(target).tolist() == sorted(holders)
        through = sorted({p for e in sample_index.entity_ids for r, p in pairs[e] if r == target})
        assert sample_index.relating_predicates(target) == through
        for predicate in through:
            holders = [sample_index.docid(e) for e in sample_index.entity_ids if (target, predicate) in pairs[e]]
            assert sample_index.related_docids(target, predicate).tolist() == sorted(holders)
    predicates = {p: [reference.with_predicate[p], reference.predicate_links[p]] for p in reference.with_predicate}
    assert sample_index.metadata["relation_predicates"] == predicates
    assert {p: [s.entities, s.links] for p, s in sample_index.predicate_statistics().items()} == predicates


def test_relations_leave_the_rest_of_the_index_unchanged(dbpedia_sample: Path, sample_index: EntityIndex,
                                                         tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    build_dbpedia_index([dbpedia_sample], plain, workers=1)
    assert not (plain / length_file(RELATIONS_FIELD)).exists()
    metadata = json.loads((plain / METADATA_FILE).read_text(encoding="utf-8"))
    assert "relations" not in metadata and "relation_statistics" not in metadata
    assert "relations" not in json.loads((plain / "provenance.json").read_text(encoding="utf-8"))["options"]
    with EntityIndex(plain) as index:
        assert not index.has_relations and "relations" not in index.stats()
        assert index.entity_ids == sample_index.entity_ids
        assert index.field_statistics() == sample_index.field_statistics()
        for field in FIELDS:
            assert index.lengths(field).tolist() == sample_index.lengths(field).tolist()
        with Searcher(index) as searcher, Searcher(sample_index) as with_relations:
            assert searcher.rank("saab cars", fsdm(), 50) == with_relations.rank("saab cars", fsdm(), 50)
            # ELR with no links needs no relations: the term part alone
            assert searcher.rank("saab cars", sdm_elr(), 50) == with_relations.rank("saab cars", sdm_elr(), 50)
            with pytest.raises(ElqueryError, match="rebuild it with `elquery index dbpedia --relations`"):
                searcher.rank(LinkedQuery("saab cars", (("<dbpedia:Saab_900>", 1.0),)), sdm_elr(), 5)


def test_bad_queries_and_models(sample_index: EntityIndex) -> None:
    with Searcher(sample_index) as searcher:
        with pytest.raises(ElqueryError, match="is not in the index"):
            searcher.rank(LinkedQuery("saab", (("<dbpedia:Not_in_the_index>", 1.0),)), sdm_elr(), 5)
        with pytest.raises(ElqueryError, match=r"^links go with the ELR models \(sdm-elr, fsdm-elr, mlm-elr\), not sdm$"):
            searcher.rank(LinkedQuery("saab", (("<dbpedia:Saab_900>", 1.0),)), sdm(), 5)
    with pytest.raises(ElqueryError, match="positive"):
        LinkedQuery("saab", (("<dbpedia:Saab_900>", 0.0),))
    with pytest.raises(ElqueryError, match="linked twice"):
        LinkedQuery("saab", (("<dbpedia:Saab_900>", 1.0), ("Saab 900", 2.0)))
    with pytest.raises(ElqueryError, match="not a DBpedia entity id"):
        LinkedQuery("saab", (("http://example.org/x", 1.0),))
    for params in ({"alpha": "0"}, {"lambda.T": "-1"}, {"lambda.O": "0.1"}):
        with pytest.raises(ElqueryError):
            model_from_name("mlm-elr", params)
    assert model_from_name("fsdm-elr", {"lambda.E": "0.3", "alpha": "0.2", "weight.names": "0.5", "weight.content": "0.5"}) \
        == fsdm_elr(fsdm({"names": 0.5, "content": 0.5}), (0.8, 0.05, 0.05, 0.3), 0.2)
    assert model_from_name("sdm-elr", {}) == sdm_elr() and model_from_name("mlm-elr", {}) == mlm_elr()


# --- links files and the command ------------------------------------------------------------------


def test_links_file_forms(tmp_path: Path) -> None:
    path = tmp_path / "links.txt"
    path.write_text(
        "q1\t<dbpedia:Saab_900>\t0.5\n\n"
        "q1\tSaab Automobile\t2\n"
        '{"qid": "q2", "links": [{"entity": "http://dbpedia.org/resource/Rome", "score": 1e-3}]}\n'
        '{"qid": "q3", "query": "x", "interpretations": [{"score": 0.5, "annotations": ['
        '{"entity": "<dbpedia:Rome>", "score": 0.25}, {"entity": "<dbpedia:Normandy>", "score": 0.75}]},'
        '{"score": 0.4, "annotations": [{"entity": "<dbpedia:Rome>", "score": 0.5}, {"entity": "<dbpedia:Paris>", "score": 0}]}]}\n',
        encoding="utf-8")
    links = read_links(path)
    assert {qid: [(link.entity, link.score) for link in query] for qid, query in links.items()} == {
        "q1": [("<dbpedia:Saab_900>", 0.5), ("<dbpedia:Saab_Automobile>", 2.0)],
        "q2": [("<dbpedia:Rome>", 0.001)],
        "q3": [("<dbpedia:Rome>", 0.5), ("<dbpedia:Normandy>", 0.75)],
    }


@pytest.mark.parametrize(("text", "message"), [
    ("q1\tSaab_900\n", r"links.txt:1: expected 'qid<TAB>entity<TAB>score'"),
    ("q1\tSaab_900\tmany\n", r"links.txt:1: score 'many' is not a number"),
    ("\nq1\tSaab_900\t-1\n", r"links.txt:2: the score of <dbpedia:Saab_900> must be a positive number"),
    ("q1\tSaab_900\tnan\n", r"must be a positive number"),
    ("q1\thttp://example.org/x\t1\n", r"links.txt:1: 'http://example.org/x' is not a DBpedia entity id"),
    ("q1\tSaab_900\t1\nq1\t<dbpedia:Saab_900>\t2\n", r"links.txt:2: <dbpedia:Saab_900> linked twice for query 'q1' \(first at .*links.txt:1\)"),
    ("q 1\tSaab_900\t1\n", r"query id 'q 1'"),
    ('{"qid": "q1", "links": [{"entity": "Saab_900"}]}\n', r"links.txt:1: \"links\" must be a list"),
    ('{"qid": "q1", "links": [\n', r"links.txt:1: invalid JSON"),
    ('{"qid": "q1"}\n', r"a JSON line needs \"links\""),
    ('{"qid": "q1", "interpretations": [{"annotations": [{"entity": "Rome"}]}]}\n', r"is not that of `elquery link"),
    ('{"qid": "q1", "links": [{"entity": "Saab_900", "score": true}]}\n', r"must be a positive number"),
])
def test_bad_links_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "links.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ElqueryError, match=message):
        read_links(path)


def test_rank_command_with_links(sample_index: EntityIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tsaab cars\nq2\tairlines of asia\nq3\tnothing\n", encoding="utf-8")
    links = tmp_path / "links.tsv"
    links.write_text("q1\t<dbpedia:Saab_Automobile>\t0.8\nq1\tSaab_900\t0.3\nq2\tSingapore_Airlines\t1\n"
                     "q9\tRome\t1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    common = ["rank", "--index", str(sample_index.path), "--queries", str(queries), "--links", str(links), "--k", "10"]
    for model in ("sdm-elr", "mlm-elr"):
        assert elquery([*common, "--model", model, "--param", "lambda.E=0.3", "--out", str(run), "--workers", "1"]) == 0
        lines = run.read_text(encoding="utf-8").splitlines()
        elr = model_from_name(model, {"lambda.E": "0.3"})
        with Searcher(sample_index) as searcher:
            expected = [(qid, hit) for qid, text, linked in (
                ("q1", "saab cars", (("<dbpedia:Saab_Automobile>", 0.8), ("<dbpedia:Saab_900>", 0.3))),
                ("q2", "airlines of asia", (("<dbpedia:Singapore_Airlines>", 1.0),)),
                ("q3", "nothing", ())) for hit in searcher.rank(LinkedQuery(text, linked), elr, 10)]
        assert [line.split()[:4] for line in lines] == [[qid, "Q0", hit.entity, str(hit.rank)] for qid, hit in expected]
        assert all(abs(float(line.split()[4]) - hit.score) <= 1e-12 for line, (_, hit) in zip(lines, expected))
    capsys.readouterr()
    bad = tmp_path / "bad.tsv"
    bad.write_text("q1\tNot_in_the_index\t1\n", encoding="utf-8")
    cases = [
        (["--links", str(bad), "--model", "sdm-elr"], f"{bad}:1: linked entity <dbpedia:Not_in_the_index> is not in the index"),
        (["--links", str(queries), "--model", "sdm-elr"], f"{queries}:1: expected 'qid<TAB>entity<TAB>score'"),
        (["--links", str(links), "--model", "fsdm"], "error: links go with the ELR models (sdm-elr, fsdm-elr, mlm-elr), "
                                                     "not fsdm"),
        (["--model", "fsdm-elr"], "error: fsdm-elr needs links (the queries' linked entities)"),
    ]
    for extra, message in cases:
        argv = ["rank", "--index", str(sample_index.path), "--queries", str(queries), "--out", str(run), *extra]
        assert elquery(argv) != 0
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err


def test_index_command_relations_and_parallel_rank(dbpedia_sample: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`elquery index dbpedia --relations` records the option and the statistics; `elquery rank
    --links` with worker processes writes the run one process writes."""
    index = tmp_path / "index"
    assert elquery(["index", "dbpedia", "--dumps", str(dbpedia_sample), "--out", str(index), "--relations",
                    "--workers", "2"]) == 0
    assert json.loads((index / "provenance.json").read_text(encoding="utf-8"))["options"]["relations"] is True
    capsys.readouterr()
    assert elquery(["index", "stats", str(index)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["relations"] == json.loads((index / METADATA_FILE).read_text(encoding="utf-8"))["relation_statistics"]
    assert stats["relations"]["entities"] > 0
    queries = tmp_path / "queries.tsv"
    words = ["saab", "cars", "airlines", "rome", "air", "bank", "river", "castle"]
    targets = ["<dbpedia:Saab_Automobile>", "<dbpedia:Saab_900>", "<dbpedia:Rome>", "<dbpedia:Lufthansa>"]
    rng = random.Random(1)
    queries.write_text("".join(f"q{i}\t{' '.join(rng.sample(words, 2))}\n" for i in range(45)), encoding="utf-8")
    links = tmp_path / "links.tsv"
    links.write_text("".join(f"q{i}\t{rng.choice(targets)}\t{rng.random() + 0.1}\n" for i in range(45)), encoding="utf-8")
    runs = []
    for threads in ("1", "2"):
        run = tmp_path / f"run-{threads}.trec"
        assert elquery(["rank", "--index", str(index), "--queries", str(queries), "--links", str(links),
                        "--model", "fsdm-elr", "--k", "20", "--out", str(run), "--workers", threads]) == 0
        runs.append(run.read_text(encoding="utf-8"))
    assert runs[0] == runs[1] and len(runs[0].splitlines()) > 45


def test_link_then_rank(sample_index: EntityIndex, dbpedia_sample: Path, tmp_path: Path) -> None:
    """The two-step use of elquery's own linker: `elquery link --format jsonl`, then
    `elquery rank --links` on its output."""
    from elquery.indexing.surface_forms.build import BuildOptions, build_store

    build_store(tmp_path / "sf.db", BuildOptions((dbpedia_sample,), anchors=True, workers=1, progress=False))
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tsaab automobile cars\nq2\tsingapore airlines flights\n", encoding="utf-8")
    linked = tmp_path / "links.jsonl"
    assert elquery(["link", "--index", str(sample_index.path), "--surface-forms", str(tmp_path / "sf.db"),
                    "--queries", str(queries), "--method", "cmns", "--format", "jsonl", "--out", str(linked)]) == 0
    links = read_links(linked)
    assert links["q1"] and links["q2"]
    run = tmp_path / "run.trec"
    assert elquery(["rank", "--index", str(sample_index.path), "--queries", str(queries), "--links", str(linked),
                    "--model", "fsdm-elr", "--k", "5", "--out", str(run), "--workers", "1"]) == 0
    with Searcher(sample_index) as searcher:
        hits = searcher.rank(LinkedQuery("saab automobile cars", tuple((link.entity, link.score) for link in links["q1"])),
                             fsdm_elr(), 5)
    assert [line.split()[2] for line in run.read_text(encoding="utf-8").splitlines() if line.startswith("q1 ")] \
        == [h.entity for h in hits]
