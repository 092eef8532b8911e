"""The LTR fields of the entity index (methods.md §9; issue 29 item 1): title, short_abstract,
long_abstract, wiki_links and categories, with exact lengths like names and content, and the
per-entity counts redirects and links. Checked on the real DBpedia sample (and the demo's
redirects) against an independent reading of the dump lines (a regular expression per line, the
values tokenized with the index's analyzer); an index built with --no-ltr-fields lacks them and
is refused in one line; one Java call scores any of the fields for many texts."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.indexing.build_index import build_dbpedia_index
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import ENTITY_COUNTS, FIELDS, LTR_FIELDS, METADATA_FILE, count_file, length_file
from elquery.indexing.provenance import read_provenance
from elquery.kb.demo import DEMO_DIR
from elquery.retrieval import CandidateScoring, EntityScorer, Searcher, lm, mlm, score_each
from raw_dumps import R, statements, uri_title  # tests/raw_dumps.py, on the path as pytest loads it

LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
ABSTRACT = "http://dbpedia.org/ontology/abstract"
SUBJECT = "http://purl.org/dc/terms/subject"
WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink"
REDIRECT = "http://dbpedia.org/ontology/wikiPageRedirects"
DEMO = DEMO_DIR


@dataclass
class Dumps:
    """What the dump lines say, per subject: literal values and IRI objects per predicate, and the
    redirect pages per target."""

    literals: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    iris: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    redirects: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def entities(self) -> list[str]:
        return sorted(s for s, values in self.literals.items() if values[LABEL] and values[COMMENT])

    def field_values(self, subject: str) -> dict[str, list[str]]:
        """The values of each LTR field (each value's tabs and line ends as spaces)."""
        links = {o for o in self.iris[subject][WIKI_LINK] if o.startswith(R) and o != R}
        values = {
            "title": self.literals[subject][LABEL],
            "short_abstract": self.literals[subject][COMMENT],
            "long_abstract": self.literals[subject][ABSTRACT],
            "wiki_links": [uri_title(o) for o in links],
            "categories": [uri_title(o) for o in self.iris[subject][SUBJECT]],
        }
        return {name: [re.sub(r"[\t\r\n]", " ", v) for v in found] for name, found in values.items()}

    def counts(self, subject: str) -> dict[str, int]:
        links = {o for o in self.iris[subject][WIKI_LINK] if o.startswith(R) and o != R}
        return {"redirects": len(self.redirects[subject]), "links": len(links)}


def read_dumps(files: list[Path]) -> Dumps:
    dumps = Dumps()
    for path in files:
        for subject, predicate, iri, literal in statements(path):
            if iri is None:
                dumps.literals[subject][predicate].add(literal)
            elif predicate == REDIRECT:
                dumps.redirects[iri].add(subject)
            else:
                dumps.iris[subject][predicate].add(iri)
    return dumps


def _entity_id(iri: str) -> str:
    return f"<dbpedia:{iri[len(R):]}>"


@pytest.fixture(scope="module")
def dumps(dbpedia_sample: Path) -> Dumps:
    return read_dumps(sorted(dbpedia_sample.glob("*.bz2")))


@pytest.fixture(scope="module")
def ltr_index_path(sample_link_artefacts: tuple[Path, Path]) -> Path:
    """The sample's index as the build makes it by default (with the LTR fields), built once a session."""
    return sample_link_artefacts[0]


@pytest.fixture(scope="module")
def ltr_index(ltr_index_path: Path) -> Iterator[EntityIndex]:
    with EntityIndex(ltr_index_path) as index:
        yield index


@pytest.fixture(scope="module")
def plain_index_path(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from elquery.indexing.cli import main as indexing_main

    out = tmp_path_factory.mktemp("plain") / "index"
    assert indexing_main(["dbpedia", "--dumps", str(dbpedia_sample), "--out", str(out), "--workers", "2",
                          "--no-ltr-fields"]) == 0
    return out


def _tokens(index: EntityIndex, values: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for value in values:
        counts.update(index.analyze(value))
    return counts


# --- the fields' statistics -------------------------------------------------------------------------


def test_field_lengths_equal_independent_token_counts(ltr_index: EntityIndex, dumps: Dumps) -> None:
    """Every entity, every LTR field: the exact length is the number of the analyzer's tokens of
    the distinct values the dumps give; |C_f| is their sum."""
    entities = dumps.entities()
    assert ltr_index.text_fields == (*FIELDS, *LTR_FIELDS)
    assert sorted(ltr_index.entity_ids) == sorted(_entity_id(s) for s in entities)
    totals: Counter[str] = Counter()
    for subject in entities:
        docid = ltr_index.docid(_entity_id(subject))
        for name, values in dumps.field_values(subject).items():
            expected = sum(_tokens(ltr_index, values).values())
            assert ltr_index.field_length(name, docid) == expected, (subject, name)
            totals[name] += expected
    for name in LTR_FIELDS:
        assert totals[name] > 200, name  # every field holds text on the sample
        assert ltr_index.collection_length(name) == totals[name] == int(ltr_index.lengths(name).sum())
        assert ltr_index.metadata["fields"][name]["tokens"] == totals[name]


def test_term_frequencies_equal_independent_computation(ltr_index: EntityIndex, dumps: Dumps) -> None:
    entities = dumps.entities()
    chosen = [f"{R}British_Airways", f"{R}Normandy", f"{R}Rome", *entities[::13]]
    for subject in dict.fromkeys(chosen):
        docid = ltr_index.docid(_entity_id(subject))
        for name, values in dumps.field_values(subject).items():
            expected = _tokens(ltr_index, values)
            found = {term: ltr_index.term_frequency(term, name, docid) for term in expected}
            assert found == dict(expected), (subject, name)
    british = ltr_index.docid("<dbpedia:British_Airways>")
    assert ltr_index.term_frequency("heathrow", "wiki_links", british) >= 1
    assert ltr_index.term_frequency("category", "categories", british) == 0  # the prefix is dropped


def test_collection_frequencies_equal_independent_computation(ltr_index: EntityIndex, dumps: Dumps) -> None:
    per_entity = {_entity_id(s): {name: _tokens(ltr_index, values) for name, values in dumps.field_values(s).items()}
                  for s in dumps.entities()}
    for name in LTR_FIELDS:
        collection: Counter[str] = Counter()
        for counts in per_entity.values():
            collection.update(counts[name])
        assert ltr_index.metadata["fields"][name]["terms"] == len(collection)
        for term in [t for t, _ in collection.most_common(4)] + sorted(collection)[::151]:
            assert ltr_index.collection_frequency(term, name) == collection[term], (name, term)
            docids, freqs = ltr_index.postings(term, name)
            expected = {ltr_index.docid(e): c[name][term] for e, c in per_entity.items() if c[name][term]}
            assert dict(zip(docids.tolist(), freqs.tolist())) == expected, (name, term)


def test_title_and_short_abstract_are_stored(ltr_index: EntityIndex, dumps: Dumps) -> None:
    """The stored values, one per line; the other LTR fields give their indexed terms back."""
    for subject in dumps.entities():
        document = ltr_index.document(_entity_id(subject))
        assert document is not None and set(document) == {"id", *FIELDS, *LTR_FIELDS}
        values = dumps.field_values(subject)
        assert sorted(document["title"].split("\n")) == sorted(values["title"]), subject
        assert sorted(document["short_abstract"].split("\n")) == sorted(values["short_abstract"]), subject
        assert sorted(document["categories"].split()) == sorted(_tokens(ltr_index, values["categories"]).elements())


def test_counts_equal_counts_from_the_dumps(ltr_index: EntityIndex, ltr_index_path: Path, dumps: Dumps) -> None:
    """links: the distinct page link targets of each entity (page_links_en); redirects: the
    distinct redirect pages pointing at it (the sample's one redirect points at no entity)."""
    expected = {name: [dumps.counts(f"{R}{e[len('<dbpedia:'):-1]}")[name] for e in ltr_index.entity_ids]
                for name in ENTITY_COUNTS}
    assert sum(expected["links"]) == 12472 and min(expected["links"]) > 0
    for name in ENTITY_COUNTS:
        counts = ltr_index.entity_counts(name)
        assert counts.dtype == np.int32 and counts.tolist() == expected[name]
        assert np.load(ltr_index_path / count_file(name)).tolist() == expected[name]
        assert ltr_index._doc_values(f"{name}_count").tolist() == expected[name]
        assert ltr_index.metadata["entity_counts"][name] == {
            "sum": sum(expected[name]), "entities": sum(1 for c in expected[name] if c)}
    assert ltr_index.stats()["entity_counts"] == ltr_index.metadata["entity_counts"]
    with pytest.raises(ElqueryError, match="unknown entity count 'pages'"):
        ltr_index.entity_counts("pages")


def test_demo_redirect_counts_equal_counts_from_the_dumps(tmp_path: Path) -> None:
    files = sorted(DEMO.glob("*.nt"))
    dumps = read_dumps(files)
    build_dbpedia_index([DEMO], tmp_path / "index", workers=1)
    with EntityIndex(tmp_path / "index") as index:
        expected = [dumps.counts(f"{R}{e[len('<dbpedia:'):-1]}")["redirects"] for e in index.entity_ids]
        assert index.entity_counts("redirects").tolist() == expected
        assert sum(expected) >= 30 and max(expected) >= 4
        docid = index.docid("<dbpedia:New_York_City>")
        assert index.entity_counts("redirects")[docid] == len(dumps.redirects[f"{R}New_York_City"]) >= 4


# --- names and content are those of an index without the LTR fields -----------------------------------


def test_names_and_content_do_not_change(ltr_index: EntityIndex, plain_index_path: Path) -> None:
    with EntityIndex(plain_index_path) as plain:
        assert plain.entity_ids == ltr_index.entity_ids
        assert plain.metadata["content_predicates"] == ltr_index.metadata["content_predicates"]
        for name in FIELDS:
            assert plain.lengths(name).tolist() == ltr_index.lengths(name).tolist()
            assert plain.field_statistics()[name] == ltr_index.field_statistics()[name]
        for entity in plain.entity_ids[::7]:
            ours, theirs = plain.document(entity), ltr_index.document(entity)
            assert ours is not None and theirs is not None
            assert (ours["names"], ours["content"]) == (theirs["names"], theirs["content"])


# --- an index without them ------------------------------------------------------------------------------


def test_no_ltr_fields_index_lacks_them(plain_index_path: Path, dbpedia_sample: Path) -> None:
    metadata = json.loads((plain_index_path / METADATA_FILE).read_text(encoding="utf-8"))
    assert "ltr_fields" not in metadata and "entity_counts" not in metadata and set(metadata["fields"]) == set(FIELDS)
    assert sorted(p.name for p in plain_index_path.glob("*.npy")) == sorted(
        [*(length_file(f) for f in FIELDS), "entity_id_rank.npy"])
    record = read_provenance(plain_index_path)
    assert record is not None and "ltr_fields" not in record.options
    assert not any("page_links" in f.name for f in record.inputs)
    with EntityIndex(plain_index_path) as index:
        assert index.text_fields == FIELDS
        assert not any(index.has_field(name) for name in (*LTR_FIELDS, *ENTITY_COUNTS))
        assert index.has_field("names") and index.has_field("content")
        assert "entity_counts" not in index.stats() and set(index.stats()["fields"]) == set(FIELDS)
        with pytest.raises(ElqueryError) as caught:
            index.require_fields([*LTR_FIELDS, *ENTITY_COUNTS], "the LTR features")
        message = str(caught.value)
        assert "\n" not in message and message == (
            f"{plain_index_path}: the index has no fields title, short_abstract, long_abstract, wiki_links, categories, "
            "redirects, links, needed by the LTR features; rebuild it with `elquery index dbpedia` or `elquery build` "
            "without --no-ltr-fields")
        index.require_fields(["names", "content"], "MLM")  # what it has
        for refused in (lambda: index.lengths("title"), lambda: index.entity_counts("links"),
                        lambda: EntityScorer(index, lm("wiki_links")), lambda: Searcher(index).rank("rome", lm("categories"))):
            with pytest.raises(ElqueryError, match="the index has no field (wiki_links|title|links|categories)"):
                refused()
        with pytest.raises(ElqueryError, match="unknown field 'abstract'"):
            index.require_fields(["abstract"], "a test")


def test_a_model_over_a_missing_field_is_one_line_and_exit_2(
    plain_index_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from elquery.retrieval.cli import main as retrieval_main

    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tbritish airways\n", encoding="utf-8")
    out = tmp_path / "run.txt"
    assert retrieval_main(["rank", "--index", str(plain_index_path), "--queries", str(queries), "--model", "lm",
                    "--param", "field=title", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the index has no field title, needed by the model lm" in err
    assert not out.exists()


# --- scoring any field, many texts in one Java call -----------------------------------------------------


def _eq16(terms: list[str], entity: Counter[str], collection: Counter[str]) -> float:
    """Eq. 16 with Jelinek-Mercer lambda 0.1 over one field, from the test's own counts: the
    entity's term counts in the field and the collection's; -inf when no term is in the collection."""
    size, length = sum(collection.values()), sum(entity.values())
    known = [t for t in terms if collection[t]]
    if not known:
        return -math.inf
    score = 0.0
    for term, n in Counter(known).items():
        background = collection[term] / size
        theta = 0.9 * (entity[term] / length if length else 0.0) + 0.1 * background
        score += n / len(terms) * (math.log(theta) - math.log(background))
    return score


def test_single_field_scores_of_many_texts_in_one_java_call(ltr_index: EntityIndex, dumps: Dumps,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Eq. 16 over one LTR field (lambda 0.1), and MLM over names and content, for a query and
    its mentions against candidate entities: the numbers of the test's own computation from the
    dump values, and all of them from one call into Java."""
    from elquery.retrieval import lucene

    tokens: dict[tuple[str, str], Counter[str]] = {}
    for subject in dumps.entities():
        for name, values in dumps.field_values(subject).items():
            tokens[(_entity_id(subject), name)] = _tokens(ltr_index, values)
    totals = {f: sum((tokens[(e, f)] for e in ltr_index.entity_ids), Counter()) for f in LTR_FIELDS}
    candidates = ["<dbpedia:British_Airways>", "<dbpedia:KLM>", "<dbpedia:Rome>", "<dbpedia:Normandy>"]
    docids = np.array([ltr_index.docid(e) for e in candidates], dtype=np.int32)
    texts = ["british airways flights to rome", "british airways", "rome", "the of", "qqzzqq", "Airlines\nof Europe"]
    scorings = [CandidateScoring(lm(name), text, docids) for text in texts for name in LTR_FIELDS]
    scorings += [CandidateScoring(mlm(), text, docids[::-1]) for text in texts]
    calls: list[str] = []
    call = lucene._call
    monkeypatch.setattr(lucene, "_call", lambda name, *args: calls.append(name) or call(name, *args))
    results = score_each(ltr_index, scorings)
    assert calls == ["scoreEach"]
    for scoring, result in zip(scorings[:len(texts) * len(LTR_FIELDS)], results):
        [name] = [f.field for f in scoring.model.fields]
        terms = ltr_index.analyze(str(scoring.query))
        expected = [_eq16(terms, tokens[(e, name)], totals[name]) for e in candidates]
        assert result.scores.tolist() == pytest.approx(expected, rel=1e-9), (name, scoring.query)
    finite = [r for r in results if np.isfinite(r.scores).all()]
    assert len(finite) >= 20 and len({r.scores.tobytes() for r in finite}) > 15  # the fields tell entities apart
    for scoring, result in zip(scorings, results):  # the scorer's own numbers, to the bit
        single = EntityScorer(ltr_index, scoring.model).log_scores(scoring.query, scoring.docids)
        assert single.known_terms == result.known_terms
        assert single.scores.tobytes() == result.scores.tobytes()
    assert score_each(ltr_index, []) == []


def test_ranking_over_an_ltr_field(ltr_index: EntityIndex) -> None:
    """Whole-index ranking accepts every LTR field: its scores are those of candidate scoring."""
    with Searcher(ltr_index) as searcher:
        for name in LTR_FIELDS:
            ranking = searcher.rank("airways airlines rome", lm(name), k=5)
            assert len(ranking) >= 2, name
            scores = EntityScorer(ltr_index, lm(name)).score_candidates("airways airlines rome", [r.entity for r in ranking])
            assert [r.score for r in ranking] == list(scores.values())
            assert [r.score for r in ranking] == sorted((r.score for r in ranking), reverse=True)
