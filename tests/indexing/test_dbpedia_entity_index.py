"""The DBpedia entity index (methods.md §2): built from the real sample and checked against an
independent computation from the raw dump files; the reader API; the build's failure behaviour,
``--overwrite``, CLI errors and determinism across ``--workers``.

The sample index is built once per session; every other build here is of a few hand-written
triples (fast)."""

from __future__ import annotations

import bz2
import json
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import elquery.indexing.build_index as build_index_module
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.cli import main as indexing_main
from elquery.indexing.entity_documents import SKIPPED_DATASETS, DocumentTexts, document_texts, spill, title_text
from elquery.kb.entity_index import EntityIndex
from elquery.base import ElqueryError
from elquery.kb.index_format import ENTITY_COUNTS, FIELDS, IDS_FILE, METADATA_FILE, TEXT_FIELDS, count_file, length_file
from raw_dumps import R, Analyzer, statements, uri_title  # tests/raw_dumps.py, on the path as pytest loads it

RDFS = "http://www.w3.org/2000/01/rdf-schema#"
LABEL, COMMENT = RDFS + "label", RDFS + "comment"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
REDIRECT = "http://dbpedia.org/ontology/wikiPageRedirects"


# --- an independent reading of the raw dumps (tests/raw_dumps.py) ------------------------------------


@dataclass
class RawSample:
    """What the raw dump files say, read without elquery.indexing.ntriples."""

    files: list[Path]
    literals: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    iris: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    labels: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    @property
    def entities(self) -> set[str]:
        """Subjects (DBpedia resources) with both rdfs:label and rdfs:comment."""
        found = {
            s
            for s, values in self.literals.items()
            if s.startswith(R) and {LABEL, COMMENT} <= {p for p, _ in values}
        }
        return found

    def resolve(self, iri: str) -> str:
        return self.labels.get(iri) or uri_title(iri)

    def names(self, subject: str) -> list[str]:
        values = [v for p, v in self.literals[subject] if p in (LABEL, FOAF_NAME)]
        return values + [self.resolve(r) for r in self.redirects.get(subject, [])]

    def content(self, subject: str) -> list[str]:
        """Values of all predicates (the sample has fewer than 1000) except owl:sameAs."""
        values = [v for p, v in self.literals[subject] if p != SAME_AS]
        return values + [self.resolve(o) for p, o in self.iris.get(subject, []) if p not in (SAME_AS, REDIRECT)]

    def predicates(self) -> set[str]:
        entities = self.entities
        found = {p for s in entities for p, _ in self.literals[s]}
        found |= {p for s in entities for p, _ in self.iris.get(s, []) if p != REDIRECT}
        return found - {SAME_AS}


def read_raw(directory: Path) -> RawSample:
    files = sorted(p for p in directory.glob("*.bz2") if not p.name.startswith(tuple(SKIPPED_DATASETS)))
    raw = RawSample(files)
    for path in files:
        for subject, predicate, iri, value in statements(path):
            if iri is not None:
                if predicate == REDIRECT:
                    raw.redirects[iri].append(subject)
                raw.iris[subject].append((predicate, iri))
            elif value is not None:
                raw.literals[subject].append((predicate, value))
                if predicate == LABEL:
                    raw.labels[subject] = value
    return raw


@pytest.fixture(scope="session")
def raw_sample(dbpedia_sample: Path) -> RawSample:
    return read_raw(dbpedia_sample)


@pytest.fixture(scope="session")
def analyzer() -> Analyzer:
    return Analyzer()


# --- the session's index of the real sample ----------------------------------------------------------


@pytest.fixture(scope="session")
def sample_index_path(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "index"
    summary = build_dbpedia_index([dbpedia_sample], out, workers=2)
    assert summary.malformed == 0 and summary.entities > 0
    return out


@pytest.fixture(scope="session")
def sample_index(sample_index_path: Path) -> Iterator[EntityIndex]:
    with EntityIndex(sample_index_path) as index:
        yield index


def _entity_id(iri: str) -> str:
    return f"<dbpedia:{iri[len(R):]}>"


def _flat(values: list[str]) -> list[str]:
    return sorted(re.sub(r"[\t\r\n]", " ", v) for v in values)


def test_analyzer_is_standard_english_stopwords_no_stemming(sample_index: EntityIndex, analyzer: Analyzer) -> None:
    text = "The Obama's Cafés of New-York and RUNNING dogs, 2015"
    assert sample_index.analyze(text) == analyzer.tokens(text) == ["obama's", "cafés", "new", "york", "running", "dogs", "2015"]
    assert sample_index.analyze("") == []


def test_entity_count_equals_subjects_with_label_and_comment(sample_index: EntityIndex, raw_sample: RawSample) -> None:
    expected = {_entity_id(s) for s in raw_sample.entities}
    assert 50 < len(expected) < 1000
    assert sample_index.num_entities == len(expected)
    assert set(sample_index.entity_ids) == expected
    assert sample_index.metadata["entities"] == len(expected)


def test_content_predicates_are_all_predicates_but_sameas(sample_index: EntityIndex, raw_sample: RawSample) -> None:
    expected = raw_sample.predicates()
    assert len(expected) < 1000  # so "the 1000 most frequent" are all of them
    assert set(sample_index.metadata["content_predicates"]) == expected
    assert SAME_AS not in sample_index.metadata["content_predicates"]


@pytest.fixture(scope="session")
def sample_documents(dbpedia_sample: Path, raw_sample: RawSample,
                     tmp_path_factory: pytest.TempPathFactory) -> dict[str, DocumentTexts]:
    """The documents the build hands to Lucene, made from a spill of the sample's dump files."""
    spilled = tmp_path_factory.mktemp("spill")
    result = spill(raw_sample.files, spilled, 1)
    return {d.entity: d for d in document_texts([spilled / "part-0000.tsv"], [result.labels_file],
                                                raw_sample.predicates())}


def test_documents_equal_independent_documents(
    sample_index: EntityIndex, raw_sample: RawSample, sample_documents: dict[str, DocumentTexts], analyzer: Analyzer
) -> None:
    """Every entity: the documents made from the dumps hold the independently collected values
    (names: label, foaf:name, redirect labels; content: every predicate's values, URIs resolved);
    the index stores the names (one value per line) and gives back content's indexed terms,
    which are the analyzer's tokens of those values (content is not stored)."""
    assert len(sample_documents) == len(raw_sample.entities)
    for subject in raw_sample.entities:
        document = sample_documents[_entity_id(subject)]
        assert sorted(document.names.split("\n")) == _flat(raw_sample.names(subject)), subject
        assert sorted(document.content.split("\n")) == _flat(raw_sample.content(subject)), subject
        stored = sample_index.document(_entity_id(subject))
        assert stored is not None and stored["id"] == _entity_id(subject)
        assert sorted(stored["names"].split("\n")) == _flat(raw_sample.names(subject)), subject
        assert sorted(stored["content"].split()) == sorted(analyzer.counts(raw_sample.content(subject)).elements())
        assert stored["content"].split() == [t for v in document.content.split("\n") for t in analyzer.tokens(v)], subject
        assert set(stored) == {"id", *TEXT_FIELDS}  # the LTR fields: test_ltr_fields.py


def test_field_lengths_equal_independent_token_counts(
    sample_index: EntityIndex, raw_sample: RawSample, analyzer: Analyzer
) -> None:
    totals = dict.fromkeys(FIELDS, 0)
    for subject in raw_sample.entities:
        docid = sample_index.docid(_entity_id(subject))
        assert docid is not None
        for name, values in (("names", raw_sample.names(subject)), ("content", raw_sample.content(subject))):
            expected = sum(analyzer.counts(values).values())
            assert sample_index.field_length(name, docid) == expected, (subject, name)
            totals[name] += expected
    for name in FIELDS:
        assert sample_index.collection_length(name) == totals[name] == int(sample_index.lengths(name).sum())


def _chosen_entities(raw_sample: RawSample) -> list[str]:
    """Several entities: the largest, persons with foaf:name, non-ASCII text, escaped quotes, and
    a few more, deterministic."""
    entities = sorted(raw_sample.entities)
    by_size = sorted(entities, key=lambda s: -(len(raw_sample.literals[s]) + len(raw_sample.iris.get(s, []))))
    wanted = [f"{R}British_Airways", f"{R}Normandy", f"{R}Walter_Warlimont", f"{R}University_of_Kentucky", f"{R}Rome"]
    chosen = [s for s in wanted if s in raw_sample.entities] + by_size[:2] + entities[::17]
    return list(dict.fromkeys(chosen))


def test_term_frequencies_equal_independent_computation(
    sample_index: EntityIndex, raw_sample: RawSample, analyzer: Analyzer
) -> None:
    chosen = _chosen_entities(raw_sample)
    assert len(chosen) >= 8
    for subject in chosen:
        docid = sample_index.docid(_entity_id(subject))
        assert docid is not None
        for name, values in (("names", raw_sample.names(subject)), ("content", raw_sample.content(subject))):
            expected = analyzer.counts(values)
            found = {term: sample_index.term_frequency(term, name, docid) for term in expected}
            assert found == dict(expected), (subject, name)
            assert sum(expected.values()) == sample_index.field_length(name, docid)
        assert sample_index.term_frequency("zzzz-not-a-term", "content", docid) == 0


def test_collection_frequencies_equal_independent_computation(
    sample_index: EntityIndex, raw_sample: RawSample, analyzer: Analyzer
) -> None:
    per_entity = {
        _entity_id(s): {"names": analyzer.counts(raw_sample.names(s)), "content": analyzer.counts(raw_sample.content(s))}
        for s in raw_sample.entities
    }
    for name in FIELDS:
        collection: Counter[str] = Counter()
        for counts in per_entity.values():
            collection.update(counts[name])
        terms = [t for t, _ in collection.most_common(5)] + sorted(collection)[::97]
        for term in terms:
            assert sample_index.collection_frequency(term, name) == collection[term], (name, term)
            docids, freqs = sample_index.postings(term, name)
            expected = {
                sample_index.docid(e): c[name][term] for e, c in per_entity.items() if c[name][term]
            }
            assert dict(zip(docids.tolist(), freqs.tolist())) == expected, (name, term)


def test_names_hold_foaf_name_in_another_language(sample_index: EntityIndex, raw_sample: RawSample) -> None:
    subject = f"{R}University_of_Kentucky"
    if subject not in raw_sample.entities:
        pytest.skip("entity not in this sample")
    docid = sample_index.docid(_entity_id(subject))
    assert sample_index.term_frequency("kentuckiensis", "names", docid) == 1
    assert sample_index.term_frequency("kentucky", "names", docid) >= 1


def test_entity_id_docid_round_trip(sample_index: EntityIndex, sample_index_path: Path) -> None:
    ids = sample_index.entity_ids
    assert len(ids) == len(set(ids)) == sample_index.reader.maxDoc()
    assert ids == (sample_index_path / IDS_FILE).read_text(encoding="utf-8").splitlines()
    stored = sample_index.reader.storedFields()
    for docid, entity in enumerate(ids):
        assert sample_index.entity(docid) == entity
        assert sample_index.docid(entity) == docid
        assert str(stored.document(docid).get("id")) == entity
    # an unknown entity is an error, not a None that indexes a whole array
    with pytest.raises(ElqueryError, match="'<dbpedia:No_such_entity>' is not in the index"):
        sample_index.docid("<dbpedia:No_such_entity>")
    assert sample_index.find_docid("<dbpedia:No_such_entity>") is None
    assert sample_index.document("<dbpedia:No_such_entity>") is None
    # every form a user may name an entity in
    entity = ids[7]
    title = entity[len("<dbpedia:"):-1]
    uri = "http://dbpedia.org/resource/" + title
    for form in (entity, title, title.replace("_", " "), uri, f"<{uri}>", f"dbpedia:{title}"):
        assert sample_index.docid(form) == 7, form


def test_postings_term_frequency_and_collection_frequency_agree(sample_index: EntityIndex) -> None:
    for name in FIELDS:
        lengths = sample_index.lengths(name)
        for term in ("airline", "airlines", "british", "rome", "roman", "novel", "saab", "museum"):
            docids, freqs = sample_index.postings(term, name)
            assert docids.dtype == np.int32 and freqs.dtype == np.int32
            assert np.all(np.diff(docids) > 0) and np.all(freqs > 0)
            assert int(freqs.sum()) == sample_index.collection_frequency(term, name)
            assert len(docids) == sample_index.document_frequency(term, name)
            assert np.all(freqs <= lengths[docids])
            for docid, freq in zip(docids.tolist(), freqs.tolist()):
                assert sample_index.term_frequency(term, name, docid) == freq
            absent = sorted(set(range(sample_index.num_entities)) - set(docids.tolist()))[:5]
            for docid in absent:
                assert sample_index.term_frequency(term, name, docid) == 0
        assert sample_index.collection_frequency("airline", "content") > 0
        empty_docids, empty_freqs = sample_index.postings("qqqxqqq", name)
        assert len(empty_docids) == len(empty_freqs) == 0
        assert sample_index.collection_frequency("qqqxqqq", name) == 0
        # stopwords are not indexed
        assert sample_index.collection_frequency("the", name) == 0
    with pytest.raises(ElqueryError, match="unknown field"):
        sample_index.postings("airline", "abstract")


def _lucene_field_numbers(index: EntityIndex, name: str) -> tuple[int, int]:
    """(total term occurrences, distinct terms) by walking Lucene's terms enumeration."""
    terms = index.leaf.terms(name)
    walk = terms.iterator()
    total = distinct = 0
    while walk.next() is not None:
        total += int(walk.totalTermFreq())
        distinct += 1
    return total, distinct


def test_stats_cli_json(sample_index: EntityIndex, sample_index_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert indexing_main(["stats", str(sample_index_path)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["entities"] == sample_index.num_entities == len(sample_index.entity_ids)
    assert stats["analyzer"] == "standard-english-stopwords"
    assert stats["content_predicates"] == len(sample_index.metadata["content_predicates"])
    assert set(stats["fields"]) == set(TEXT_FIELDS)
    for name in TEXT_FIELDS:
        tokens, terms = _lucene_field_numbers(sample_index, name)
        lengths = np.load(sample_index_path / length_file(name))
        assert len(lengths) == stats["entities"]
        assert stats["fields"][name]["tokens"] == int(lengths.sum()) == tokens
        assert stats["fields"][name]["terms"] == terms
        assert sample_index.leaf.terms(name).getSumTotalTermFreq() == tokens
        # the doc values hold the same exact lengths as the cached arrays
        assert np.array_equal(sample_index._lengths_from_doc_values(name), lengths)
    metadata = json.loads((sample_index_path / METADATA_FILE).read_text(encoding="utf-8"))
    assert metadata["fields"] == stats["fields"]


def test_stats_through_the_elquery_command(sample_index_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.base import run
    from elquery.indexing.cli import register

    assert run([register], prog="elquery", argv=["index", "stats", str(sample_index_path)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert indexing_main(["stats", str(sample_index_path)]) == 0
    assert json.loads(capsys.readouterr().out) == first


# --- URI resolution -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("iri", "text"),
    [
        (f"{R}Category:Airlines_of_the_UK", "Airlines of the UK"),
        (f"{R}Caf%C3%A9_Wha%3F", "Café Wha?"),
        (f"{R}File:%22The_good_Shepherd%22_mosaic.jpg", '"The good Shepherd" mosaic.jpg'),
        (f"{R}Assassin's_Creed:_Brotherhood", "Assassin's Creed: Brotherhood"),
        (f"{R}Terminator_2:_Judgment_Day", "Terminator 2: Judgment Day"),
        (f"{R}AC/DC", "AC/DC"),
        (f"{R}Simca-Talbot_Horizon", "Simca-Talbot Horizon"),
        ("http://dbpedia.org/ontology/Company", "Company"),
        ("http://dbpedia.org/ontology/MeanOfTransportation", "MeanOfTransportation"),
        ("http://www.w3.org/2002/07/owl#Thing", "Thing"),
        ("http://xmlns.com/foaf/0.1/Person", "Person"),
        ("http://www.wikidata.org/entity/Q46970", "Q46970"),
        ("http://ba.com/", "ba.com"),
    ],
)
def test_title_text(iri: str, text: str) -> None:
    assert title_text(iri) == text


def test_title_text_agrees_with_independent_resolution_on_the_sample(raw_sample: RawSample) -> None:
    objects = {o for pairs in raw_sample.iris.values() for _, o in pairs}
    assert len(objects) > 100
    assert {o: title_text(o) for o in objects} == {o: uri_title(o) for o in objects}


TINY = (
    f'<{R}Heathrow_Airport> <{LABEL}> "London Heathrow Airport"@en .\n'
    f'<{R}British_Airways> <{LABEL}> "British Airways"@en .\n'
    f'<{R}British_Airways> <{COMMENT}> "British Airways is an airline."@en .\n'
    f'<{R}British_Airways> <{FOAF_NAME}> "BA Group"@en .\n'
    f"<{R}British_Airways> <http://dbpedia.org/ontology/hubAirport> <{R}Heathrow_Airport> .\n"
    f"<{R}British_Airways> <http://purl.org/dc/terms/subject> <{R}Category:Airlines_of_the_UK> .\n"
    f"<{R}British_Airways> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://dbpedia.org/ontology/Airline> .\n"
    f"<{R}British_Airways> <http://dbpedia.org/ontology/parentCompany> <{R}Int%27l_Airlines:_Group> .\n"
    f"<{R}British_Airways> <{SAME_AS}> <http://rdf.freebase.com/ns/m.01dpz> .\n"
    f'<{R}BA> <{LABEL}> "B.A."@en .\n'
    f"<{R}BA> <{REDIRECT}> <{R}British_Airways> .\n"
    f"<{R}Speedbird> <{REDIRECT}> <{R}British_Airways> .\n"
    f'<{R}Redirect_only> <{LABEL}> "Redirect only"@en .\n'
    f'<{R}No_comment> <{LABEL}> "No comment"@en .\n'
    f'<{R}No_label> <{COMMENT}> "Has no label."@en .\n'
)


def _tiny_dumps(directory: Path, text: str = TINY) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "dbpedia_en.ttl").write_text(text, encoding="utf-8")
    return directory


def test_object_uris_resolve_to_labels_or_titles(tmp_path: Path) -> None:
    dumps = _tiny_dumps(tmp_path / "dumps")
    result = spill([dumps / "dbpedia_en.ttl"], tmp_path / "spill", 3)
    predicates = frozenset(
        {COMMENT, LABEL, FOAF_NAME, "http://dbpedia.org/ontology/hubAirport", "http://purl.org/dc/terms/subject",
         "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "http://dbpedia.org/ontology/parentCompany"}
    )
    documents = [
        d for p in range(3)
        for d in document_texts([tmp_path / "spill" / f"part-{p:04d}.tsv"], [result.labels_file], predicates)
    ]
    assert [d.entity for d in documents] == ["<dbpedia:British_Airways>"]
    document = documents[0]
    # names: label, foaf:name, redirect labels (a redirect page without a label: its title)
    assert sorted(document.names.split("\n")) == ["B.A.", "BA Group", "British Airways", "Speedbird"]
    # content: a labelled object -> its label; unlabelled -> the title text; no owl:sameAs
    assert sorted(document.content.split("\n")) == sorted([
        "British Airways", "British Airways is an airline.", "BA Group", "London Heathrow Airport",
        "Airlines of the UK", "Airline", "Int'l Airlines: Group",
    ])


# --- failures, --overwrite, the CLI ------------------------------------------------------------------


def _leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


def _truncated_bz2(path: Path) -> Path:
    lines = "".join(f'<{R}E{i}> <{COMMENT}> "entity {i} {i * 7919 % 10007}"@en .\n' for i in range(30_000))
    data = bz2.compress(lines.encode())
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("threads", [1, 2])
def test_failed_build_leaves_nothing(tmp_path: Path, threads: int) -> None:
    dumps = _tiny_dumps(tmp_path / "dumps")
    truncated = _truncated_bz2(dumps / "short_abstracts_en.ttl.bz2")
    builds = tmp_path / "builds"
    builds.mkdir()
    out = builds / "index"
    with pytest.raises(ElqueryError, match=rf"{re.escape(str(truncated))}: truncated or corrupt"):
        build_dbpedia_index([dumps], out, workers=threads)
    assert not out.exists()
    assert _leftovers(builds, set()) == []


def test_interrupted_build_leaves_nothing_and_keeps_the_old_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dumps = _tiny_dumps(tmp_path / "dumps")
    builds = tmp_path / "builds"
    out = builds / "index"
    build_dbpedia_index([dumps], out, workers=1)
    before = (out / IDS_FILE).read_text(encoding="utf-8")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(build_index_module, "_merge", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_dbpedia_index([dumps], out, workers=1, overwrite=True)
    fresh = builds / "fresh"
    with pytest.raises(KeyboardInterrupt):
        build_dbpedia_index([dumps], fresh, workers=1)
    assert not fresh.exists()
    assert _leftovers(builds, {"index"}) == []
    assert (out / IDS_FILE).read_text(encoding="utf-8") == before
    monkeypatch.undo()
    with EntityIndex(out) as index:
        assert index.entity_ids == ["<dbpedia:British_Airways>"]


_SIGNALLED_BUILD = """
import os, signal, sys, time
import elquery.indexing.build_index as builder
from elquery.indexing.cli import main

merge = builder._merge
def signalled_merge(*args, **kwargs):
    # the JVM is running by now (the partition was written in this process, --workers 1)
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(5)
    return merge(*args, **kwargs)
builder._merge = signalled_merge
sys.exit(main(["dbpedia", "--dumps", sys.argv[2], "--out", sys.argv[3], "--workers", "1"]))
"""


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_signal_during_build_leaves_nothing(tmp_path: Path, signal_name: str) -> None:
    """Ctrl-C or kill while the JVM runs: the JVM's own handlers would end the process at once,
    leaving the temporary build directory; the build must clean up and exit 130."""
    import subprocess
    import sys

    dumps = _tiny_dumps(tmp_path / "dumps")
    builds = tmp_path / "builds"
    builds.mkdir()
    completed = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_BUILD, signal_name, str(dumps), str(builds / "index")],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2],
    )
    assert completed.returncode == 130, completed.stderr[-2000:]
    assert completed.stderr.strip().splitlines()[-1] == "python -m elquery.indexing: interrupted"
    assert _leftovers(builds, set()) == []


def test_existing_index_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    first = _tiny_dumps(tmp_path / "first")
    second = _tiny_dumps(tmp_path / "second", TINY + f'<{R}KLM> <{LABEL}> "KLM"@en .\n<{R}KLM> <{COMMENT}> "Dutch."@en .\n')
    builds = tmp_path / "builds"
    out = builds / "index"
    build_dbpedia_index([first], out, workers=1)
    with pytest.raises(ElqueryError, match="already exists.*--overwrite"):
        build_dbpedia_index([second], out, workers=1)
    with EntityIndex(out) as index:
        assert index.entity_ids == ["<dbpedia:British_Airways>"]
    build_dbpedia_index([second], out, workers=1, overwrite=True)
    with EntityIndex(out) as index:
        assert sorted(index.entity_ids) == ["<dbpedia:British_Airways>", "<dbpedia:KLM>"]
    assert _leftovers(builds, {"index"}) == []


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_cli_missing_dumps_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "builds" / "index"
    status = indexing_main(["dbpedia", "--dumps", str(tmp_path / "nowhere"), "--out", str(out)])
    assert status == 2
    line = _one_error_line(capsys)
    assert line.startswith("python -m elquery.indexing: error: ") and str(tmp_path / "nowhere") in line
    assert not out.exists()


def test_cli_existing_out_and_truncated_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dumps = _tiny_dumps(tmp_path / "dumps")
    out = tmp_path / "builds" / "index"
    assert indexing_main(["dbpedia", "--dumps", str(dumps), "--out", str(out), "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "indexed 1 entities" in captured.out

    assert indexing_main(["dbpedia", "--dumps", str(dumps), "--out", str(out), "--workers", "1"]) == 2
    assert "already exists" in _one_error_line(capsys)

    bad = _tiny_dumps(tmp_path / "bad")
    truncated = _truncated_bz2(bad / "labels_en.ttl.bz2")
    other = tmp_path / "builds" / "other"
    assert indexing_main(["dbpedia", "--dumps", str(bad), "--out", str(other), "--workers", "1"]) == 2
    assert f"{truncated}: truncated or corrupt file" in _one_error_line(capsys)
    assert _leftovers(tmp_path / "builds", {"index"}) == []

    assert indexing_main(["stats", str(tmp_path / "nowhere")]) == 2
    assert "not an elquery index" in _one_error_line(capsys)


def test_cli_reports_malformed_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dumps = _tiny_dumps(tmp_path / "dumps", TINY + "not a triple\n")
    out = tmp_path / "index"
    assert indexing_main(["dbpedia", "--dumps", str(dumps), "--out", str(out), "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "(1 malformed lines skipped)" in captured.out
    assert f"{dumps / 'dbpedia_en.ttl'}:{TINY.count(chr(10)) + 1}: not an N-Triples statement" in captured.err


# --- determinism ----------------------------------------------------------------------------------------


def test_workers_1_and_2_give_identical_indexes(
    dbpedia_sample: Path, sample_index: EntityIndex, sample_index_path: Path, tmp_path: Path
) -> None:
    """The session index was built with --workers 2 (two spill workers); --workers 1 must give the
    same entity ids, lengths, statistics and stored documents."""
    out = tmp_path / "workers1"
    build_dbpedia_index([dbpedia_sample], out, workers=1)
    assert (out / IDS_FILE).read_bytes() == (sample_index_path / IDS_FILE).read_bytes()
    for name in TEXT_FIELDS:
        assert np.array_equal(np.load(out / length_file(name)), np.load(sample_index_path / length_file(name)))
    for name in ENTITY_COUNTS:
        assert np.array_equal(np.load(out / count_file(name)), np.load(sample_index_path / count_file(name)))
    assert json.loads((out / METADATA_FILE).read_text()) == json.loads((sample_index_path / METADATA_FILE).read_text())
    with EntityIndex(out) as single:
        stats = single.stats()
        expected = sample_index.stats()
        assert {k: v for k, v in stats.items() if k != "path"} == {k: v for k, v in expected.items() if k != "path"}
        for entity in sample_index.entity_ids:
            assert single.document(entity) == sample_index.document(entity), entity
    shutil.rmtree(out)


def test_opening_a_read_only_index_writes_nothing(sample_index_path: Path, sample_index: EntityIndex,
                                                  tmp_path: Path) -> None:
    """A shared or packaged index may be read-only: without its length caches, the lengths come
    from the doc values, kept in memory, and nothing is written into the index directory."""
    import shutil
    import stat

    from elquery.kb.index_format import length_file

    copy = tmp_path / "index"
    shutil.copytree(sample_index_path, copy)
    for field in TEXT_FIELDS:
        (copy / length_file(field)).unlink()
    for name in ENTITY_COUNTS:
        (copy / count_file(name)).unlink()
    before = sorted(p.name for p in copy.iterdir())
    for path in [copy, *copy.iterdir()]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        with EntityIndex(copy) as index:
            for field in TEXT_FIELDS:
                assert index.lengths(field).tolist() == sample_index.lengths(field).tolist()
            for name in ENTITY_COUNTS:
                assert index.entity_counts(name).tolist() == sample_index.entity_counts(name).tolist()
        assert sorted(p.name for p in copy.iterdir()) == before
    finally:
        for path in [copy, *copy.iterdir()]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_overwrite_replaces_only_an_index(dbpedia_sample: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """--overwrite refuses a plain file or a folder that is not an index (nothing deleted)."""
    from elquery.cli import main as elquery

    user_folder = tmp_path / "userdir"
    user_folder.mkdir()
    (user_folder / "notes.txt").write_text("mine")
    user_file = tmp_path / "emptycopy.txt"
    user_file.write_text("mine too")
    for target in (user_folder, user_file):
        assert elquery(["index", "dbpedia", "--dumps", str(dbpedia_sample), "--out", str(target), "--overwrite"]) == 2
        assert capsys.readouterr().err.strip().endswith("--overwrite replaces only one (nothing was deleted)")
    assert (user_folder / "notes.txt").read_text() == "mine" and user_file.read_text() == "mine too"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emptycopy.txt", "userdir"]


def test_a_killed_builds_work_folder_is_removed_by_the_next_build(tiny_dumps_for_stale: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    out = tmp_path / "index"
    finished = subprocess.Popen(["true"])  # a process that is surely gone
    finished.wait()
    gone_pid = finished.pid
    stale = tmp_path / f".index.building-{gone_pid}"
    (stale / "spill").mkdir(parents=True)
    (stale / "spill" / "part").write_text("x" * 1000)
    build_dbpedia_index([tiny_dumps_for_stale], out, workers=1)
    assert not stale.exists() and out.is_dir()
    assert f"removed {stale}" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


@pytest.fixture()
def tiny_dumps_for_stale(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_dumps(tmp_path_factory.mktemp("stale") / "dumps")


def test_the_replace_step_is_not_cut_by_ctrl_c(tmp_path: Path) -> None:
    """A signal arriving while the new artefact replaces the old one is held: the replacement
    completes, nothing is left beside it, and no interrupt is reported for work that is done."""
    import os
    import signal

    from elquery.indexing import build_outputs

    old, new = tmp_path / "index", tmp_path / ".index.building-1"
    old.mkdir()
    (old / "elquery.json").write_text("{}")
    new.mkdir()
    (new / "elquery.json").write_text('{"new": true}')
    real_rename = Path.rename

    def rename_then_interrupt(self: Path, target: Path) -> Path:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the replacement
        return real_rename(self, target)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "rename", rename_then_interrupt)
        build_outputs.replace(new, old)
    assert (old / "elquery.json").read_text() == '{"new": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


def test_surface_forms_overwrite_refuses_a_plain_file(dbpedia_sample: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.cli import main as elquery

    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert elquery(["index", "surface-forms", "--dumps", str(dbpedia_sample), "--out", str(notes), "--overwrite"]) == 2
    assert "not an elquery surface-form store" in capsys.readouterr().err
    assert notes.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
