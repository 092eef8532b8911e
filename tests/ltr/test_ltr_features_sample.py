"""The 28 LTR features (methods.md §9) on the real DBpedia sample, each checked against a value
computed here from the dump lines: the .ttl.bz2 files parsed with a regular expression, field
texts and counts made from the statements, terms from Lucene's StandardAnalyzer with the 33 English
stop words (built from Lucene's classes; the reading and the analyzer: tests/raw_dumps.py), Eq. 16 computed with numpy, surface forms and
commonness counted from the anchor-text and label lines. Nothing here goes through elquery's
index, store or normalization code.

The queries: real ERD / Y-ERD queries whose words the sample's entities carry, and queries naming
sample entities by their titles (the real query sets hardly name the sample's 98 entities, and the
title features need such mentions)."""

from __future__ import annotations

import math
import re
import shutil
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from elquery.linking.ltr import FEATURES, FeatureExtractor
from conftest import index_without_ltr_texts
from raw_dumps import R, Analyzer, statements, uri_title  # tests/raw_dumps.py, on the path as pytest loads it

LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
ABSTRACT = "http://dbpedia.org/ontology/abstract"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
REDIRECT = "http://dbpedia.org/ontology/wikiPageRedirects"
WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink"
ANCHOR = "http://dbpedia.org/ontology/wikiPageWikiLinkText"
SUBJECT = "http://purl.org/dc/terms/subject"
# the datasets the index build does not read into content (anchors, links, ids, images, ...)
NOT_CONTENT = ("anchor_text", "page_links", "freebase_links", "page_ids", "out_degree", "revision_ids",
               "revision_uris", "wikipedia_links", "interlanguage_links", "external_links", "images", "disambiguations")
LAMBDA = 0.1
THRESHOLD = 0.1

QUERIES = {
    # real queries (Y-ERD trec-2013-31_5, trec-2013-32_4, trec-2010-30_1, trec-2010-32_2)
    "trec-2013-31_5": "kentucky derby museum",
    "trec-2013-32_4": "Churchill downs Kentucky derby museum",
    "trec-2010-30_1": "mitchell college",
    "trec-2010-32_2": "history games",
    # naming sample entities by their titles
    "named-1": "British Airways flights to Rome's Colosseum",
    "named-2": "saab 900 vs saab 9000",
    "named-3": "university of kentucky",
    "named-4": "sichuan hot pot in rome",
}

def norm(text: str) -> str:
    """methods.md §3: NFKC, casefold, every character that is not a letter or digit a separator."""
    return " ".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).casefold()))


def eid(iri: str) -> str:
    return f"<dbpedia:{iri[len(R):]}>"


@dataclass
class Dump:
    """The sample's statements, per subject."""

    literals: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    iris: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    content_literals: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    content_iris: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    labels: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    redirected_from: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    redirect_target: dict[str, str] = field(default_factory=dict)
    anchors: Counter = field(default_factory=Counter)

    def values(self, subject: str, predicate: str) -> list[str]:
        return sorted({v for p, v in self.literals[subject] if p == predicate})

    def objects(self, subject: str, predicate: str) -> list[str]:
        return sorted({o for p, o in self.iris[subject] if p == predicate})

    @property
    def entities(self) -> list[str]:
        return sorted(s for s in self.literals if s.startswith(R) and self.values(s, LABEL) and self.values(s, COMMENT))

    def resolve(self, iri: str) -> str:
        return self.labels[iri][0] if self.labels.get(iri) else uri_title(iri)

    def fields(self, subject: str) -> dict[str, list[str]]:
        """The values of each field of an entity, per the index's definition (index_format)."""
        links = [o for o in self.objects(subject, WIKI_LINK) if o.startswith(R) and o != R]
        content = [v for p, v in self.content_literals[subject] if p != SAME_AS]
        content += [self.resolve(o) for p, o in self.content_iris[subject] if p not in (SAME_AS, REDIRECT)]
        names = [v for p, v in self.literals[subject] if p in (LABEL, FOAF_NAME)]
        names += [self.resolve(r) for r in sorted(self.redirected_from[subject])]
        return {
            "title": self.values(subject, LABEL), "short_abstract": self.values(subject, COMMENT),
            "long_abstract": self.values(subject, ABSTRACT), "wiki_links": [uri_title(o) for o in links],
            "categories": [uri_title(o) for o in self.objects(subject, SUBJECT)], "content": content, "names": names,
        }


def read_dump(directory: Path) -> Dump:
    dump = Dump()
    for path in sorted(directory.glob("*.ttl.bz2")):
        in_content = not path.name.startswith(NOT_CONTENT)
        for subject, predicate, iri, value in statements(path):
            if iri is not None:
                dump.iris[subject].append((predicate, iri))
                if in_content:
                    dump.content_iris[subject].append((predicate, iri))
                if predicate == REDIRECT:
                    dump.redirected_from[iri].add(subject)
                    dump.redirect_target[subject] = iri
                continue
            dump.literals[subject].append((predicate, value))
            if in_content:
                dump.content_literals[subject].append((predicate, value))
            if predicate == LABEL:
                dump.labels[subject].append(value)
            if predicate == ANCHOR and norm(value):
                dump.anchors[(norm(value), subject)] += 1
    return dump


@dataclass
class Expected:
    """The independent computation of every feature."""

    dump: Dump
    analyzer: Analyzer
    entities: list[str] = field(init=False)
    counts: dict[str, dict[str, Counter]] = field(init=False)
    collection: dict[str, Counter] = field(init=False)

    def __post_init__(self) -> None:
        self.entities = self.dump.entities
        self.counts = {e: {f: Counter(t for v in values for t in self.analyzer.tokens(v))
                           for f, values in self.dump.fields(e).items()} for e in self.entities}
        self.collection = defaultdict(Counter)
        for per_field in self.counts.values():
            for name, counter in per_field.items():
                self.collection[name].update(counter)

    def titles(self, entity: str) -> list[str]:
        return [norm(t) for t in self.dump.values(entity, LABEL)]

    def surface_forms(self) -> dict[str, dict[str, float]]:
        """form -> {entity: commonness}: anchor counts (a redirect page's for its target), and KB
        aliases (label, foaf:name; a redirect page's label or title for its target) with
        commonness 0 unless the anchors count the pair."""
        target = self.dump.redirect_target
        counts = Counter()
        for (form, subject), n in self.dump.anchors.items():
            counts[(form, target.get(subject, subject))] += n
        totals = Counter()
        for (form, _), n in counts.items():
            totals[form] += n
        forms: dict[str, dict[str, float]] = defaultdict(dict)
        for (form, subject), n in counts.items():
            forms[form][eid(subject)] = n / totals[form]
        aliases = [(s, v) for s, values in self.dump.literals.items() for p, v in values if p in (LABEL, FOAF_NAME)]
        aliases += [(page, uri_title(page)) for page in target if not self.dump.labels.get(page)]
        for subject, value in aliases:
            if subject.startswith(R) and norm(value) and not value.endswith("(disambiguation)"):
                forms[norm(value)].setdefault(eid(target.get(subject, subject)), 0.0)
        return forms

    def lm(self, text: str, entity: str, weights: dict[str, float]) -> float:
        """exp(Eq. 16) with Jelinek-Mercer lambda 0.1 over the fields of ``weights``."""
        terms = Counter(self.analyzer.tokens(text))
        size = sum(terms.values())
        total = 0.0
        known = 0
        for term, n in terms.items():
            background = sum(w * self.collection[f][term] / sum(self.collection[f].values()) for f, w in weights.items())
            if background == 0:
                continue
            known += 1
            theta = 0.0
            for f, w in weights.items():
                length = sum(self.counts[entity][f].values())
                foreground = self.counts[entity][f][term] / length if length else 0.0
                theta += w * ((1 - LAMBDA) * foreground + LAMBDA * self.collection[f][term] / sum(self.collection[f].values()))
            total += n / size * (math.log(theta) - math.log(background))
        return math.exp(total) if known else 0.0

    def rows(self, query: str, threshold: float) -> dict[tuple[str, int, int, str], dict[str, float]]:
        """(mention, start, end, entity) -> features, for every candidate pair of ``query``."""
        tokens = [(m.group(), m.start(), m.end()) for m in re.finditer(r"[^\W_]+", query.casefold())]
        words = [t for t, _, _ in tokens]
        forms = self.surface_forms()
        in_index = set(map(eid, self.entities))
        by_id = {eid(e): e for e in self.entities}
        query_text = " ".join(words)
        found = {}
        for i in range(len(words)):
            for j in range(i + 1, len(words) + 1):
                mention = " ".join(words[i:j])
                for entity, commonness in forms.get(mention, {}).items():
                    if commonness < threshold or entity not in in_index:
                        continue
                    subject = by_id[entity]
                    titles = self.titles(subject)
                    ngrams = {" ".join(words[a:b]) for a in range(i, j) for b in range(a + 1, j + 1)}
                    short = norm(" ".join(self.dump.values(subject, COMMENT)))
                    position = f" {short} ".find(f" {mention} ")
                    start, end = tokens[i][1], tokens[j - 1][2]
                    text = query[start:end]
                    features = {
                        "len": j - i,
                        "ntem": sum(mention in self.titles(e) for e in self.entities),
                        "smil": sum(bool(ngrams & set(self.titles(e))) for e in self.entities),
                        "matches": len(forms[mention]),
                        "len_ratio": (j - i) / len(words),
                        "redirects": len(self.dump.redirected_from[subject]),
                        "links": len([o for o in self.dump.objects(subject, WIKI_LINK) if o.startswith(R) and o != R]),
                        "commonness": commonness,
                        "mct": any(f" {t} " in f" {mention} " for t in titles if t),
                        "tcm": any(f" {mention} " in f" {t} " for t in titles),
                        "tem": mention in titles,
                        "pos1": position if position >= 0 else 1000,
                        "qct": any(f" {t} " in f" {query_text} " for t in titles if t),
                        "tcq": any(f" {query_text} " in f" {t} " for t in titles),
                        "teq": query_text in titles,
                        "mlm-tc": self.lm(query, subject, {"names": 0.2, "content": 0.8}),
                    }
                    for suffix, name in (("title", "title"), ("sAbs", "short_abstract"), ("lAbs", "long_abstract"),
                                         ("links", "wiki_links"), ("cats", "categories"), ("catchall", "content")):
                        features[f"m{suffix}"] = self.lm(text, subject, {name: 1.0})
                        features[f"q{suffix}"] = self.lm(query, subject, {name: 1.0})
                    found[(mention, start, end, entity)] = {k: float(v) for k, v in features.items()}
        return found


@pytest.fixture(scope="module")
def expected(dbpedia_sample: Path) -> Expected:
    return Expected(read_dump(dbpedia_sample), Analyzer())


@pytest.fixture(scope="module")
def extractor(sample_link_artefacts: tuple[Path, Path]) -> FeatureExtractor:
    index, surface_forms = sample_link_artefacts
    with FeatureExtractor(index, surface_forms, THRESHOLD) as opened:
        yield opened


def extracted(extractor: FeatureExtractor, query: str) -> dict[tuple[str, int, int, str], dict[str, float]]:
    pairs, matrix = extractor.extract(query)
    assert matrix.shape == (len(pairs), len(FEATURES))
    return {(p.mention.text, p.start, p.end, p.entity): dict(zip(FEATURES, row.tolist())) for p, row in zip(pairs, matrix)}


def test_feature_names_are_the_28_of_the_paper() -> None:
    assert len(FEATURES) == len(set(FEATURES)) == 28
    assert FEATURES[:7] == ("len", "ntem", "smil", "matches", "len_ratio", "redirects", "links")
    assert FEATURES[-7:] == ("mlm-tc", "qtitle", "qsAbs", "qlAbs", "qlinks", "qcats", "qcatchall")


@pytest.mark.parametrize("qid", list(QUERIES))
def test_every_feature_equals_the_independent_computation(qid: str, extractor: FeatureExtractor, expected: Expected) -> None:
    query = QUERIES[qid]
    found = extracted(extractor, query)
    wanted = expected.rows(query, THRESHOLD)
    assert found.keys() == wanted.keys()
    assert found, f"no candidate in {query!r}"
    for pair, features in wanted.items():
        for name in FEATURES:
            assert found[pair][name] == pytest.approx(features[name], rel=1e-9, abs=1e-12), (pair, name)


def test_the_queries_exercise_every_feature(extractor: FeatureExtractor) -> None:
    """Across the queries each feature takes more than one value (except ``redirects``: no sample
    entity is the target of a redirect in the sample's dump), so a wrong feature cannot pass
    unseen behind a constant."""
    rows = np.vstack([extractor.extract(q)[1] for q in QUERIES.values()])
    constant = [name for name, column in zip(FEATURES, rows.T) if len(set(column.tolist())) < 2]
    assert constant == ["redirects"]


def test_rome_in_a_query_names_rome(extractor: FeatureExtractor) -> None:
    """A worked pair: "rome" in "sichuan hot pot in rome" -> <dbpedia:Rome>: its title equals the
    mention and is in the query, the short abstract begins with it."""
    features = extracted(extractor, QUERIES["named-4"])[("rome", 19, 23, "<dbpedia:Rome>")]
    assert (features["tem"], features["tcm"], features["mct"], features["pos1"]) == (1, 1, 1, 0)
    assert (features["qct"], features["tcq"], features["teq"], features["ntem"], features["smil"]) == (1, 0, 0, 1, 1)
    assert features["len_ratio"] == 1 / 5


def test_threshold_zero_keeps_the_kb_only_and_rare_pairs(sample_link_artefacts: tuple[Path, Path], expected: Expected) -> None:
    index, surface_forms = sample_link_artefacts
    with FeatureExtractor(index, surface_forms, 0.0) as extractor:
        found = extracted(extractor, QUERIES["named-1"])
    wanted = expected.rows(QUERIES["named-1"], 0.0)
    assert found.keys() == wanted.keys()
    assert any(f["commonness"] < THRESHOLD for f in found.values())
    for pair, features in wanted.items():
        assert found[pair] == pytest.approx(features, rel=1e-9, abs=1e-12), pair


def _count_calls(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts of the grid-scoring, Java and stored-field calls the features make from now on."""
    import elquery.linking.ltr.features as features
    import elquery.linking.ltr.stored as stored
    from elquery.retrieval import lucene

    calls: Counter = Counter()

    def counted(name: str, function):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls[name] += 1
            return function(*args, **kwargs)
        return wrapper

    class Helper:  # the features' Java class, its calls counted
        def __init__(self, java):  # type: ignore[no-untyped-def]
            self.features = counted("features", java.features)

    class Job:  # the features' Java job class (two threads), its jobs counted
        def __init__(self, java):  # type: ignore[no-untyped-def]
            self.of = counted("job", java.of)

    helper, job = Helper(features._helper()), Job(features._job())
    monkeypatch.setattr(features, "_helper", lambda: helper)
    monkeypatch.setattr(features, "_job", lambda: job)
    monkeypatch.setattr(stored, "stored_values", counted("stored_values", stored.stored_values))
    monkeypatch.setattr(lucene, "_call", counted("java", lucene._call))
    return calls


@pytest.mark.parametrize("threads", [1, 2])
def test_a_query_costs_one_java_call_and_no_stored_fields_call(sample_link_artefacts: tuple[Path, Path], threads: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Every language-model feature of a query (the query's 7, each mention's 6) and every string
    test comes from one Java call (on two threads, one job whose two halves run at once), which
    reads the titles and short abstracts from the index's normalized copy (``ltr_texts.bin``), not
    Lucene's stored fields; a query without candidates makes no call."""
    with FeatureExtractor(*sample_link_artefacts, THRESHOLD, threads=threads) as extractor:
        calls = _count_calls(monkeypatch)
        pairs, _ = extractor.extract(QUERIES["named-1"])
        one = {"features": 1} if threads == 1 else {"job": 1}
        assert len({(p.start, p.end) for p in pairs}) >= 3
        assert calls == one
        assert extractor.extract("zzzz qqqq")[0] == [] and calls == one


def test_two_threads_give_the_features_of_one(sample_link_artefacts: tuple[Path, Path]) -> None:
    """The features computed in two halves at once (``PairFeaturesJob``) are those of the one call,
    to the bit, for every query (at thresholds 0 and c)."""
    for threshold in (0.0, THRESHOLD):
        with FeatureExtractor(*sample_link_artefacts, threshold, threads=1) as one, \
                FeatureExtractor(*sample_link_artefacts, threshold, threads=2) as two:
            for query in QUERIES.values():
                (pairs, matrix), (pairs_two, matrix_two) = one.extract(query), two.extract(query)
                assert pairs == pairs_two and matrix.tobytes() == matrix_two.tobytes(), (query, threshold)


def test_a_job_answers_the_call_whoever_runs_its_halves(sample_link_artefacts: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``PairFeaturesJob``: its answer is the one call's bytes whether its halves ran before (either
    order, one of them twice, as when the caller runs again a half the helper thread has started)
    or not at all (the answer runs them)."""
    import elquery.linking.ltr.features as features

    calls = []

    class Recorder:  # the one call's arguments, recorded
        def __init__(self, java):  # type: ignore[no-untyped-def]
            self.java = java

        def features(self, *arguments):  # type: ignore[no-untyped-def]
            calls.append(arguments)
            return self.java.features(*arguments)

    recorder = Recorder(features._helper())
    monkeypatch.setattr(features, "_helper", lambda: recorder)
    with FeatureExtractor(*sample_link_artefacts, THRESHOLD, threads=1) as extractor:
        linked = sum(1 for query in QUERIES.values() if extractor.extract(query)[0])
        assert len(calls) == linked > 5
        for arguments in calls:
            wanted = recorder.java.features(*arguments).tostring()
            for runs in ([], [0, 1], [1, 0], [1, 1, 0], [0]):
                job = features._job().of(*arguments)
                for part in runs:
                    job.run(part)
                assert job.answer().tostring() == wanted, runs


def test_the_index_holds_the_normalized_titles_and_short_abstracts(sample_link_artefacts: tuple[Path, Path],
                                                                    expected: Expected) -> None:
    """``ltr_texts.bin`` at the offsets of ``ltr_text_offsets.npy``: per docid (``entity_ids.txt``
    order) the normalized labels, one a line, then the normalized short abstract, as computed here
    from the dump."""
    index = sample_link_artefacts[0]
    ids = (index / "entity_ids.txt").read_text(encoding="utf-8").split()
    offsets = np.load(index / "ltr_text_offsets.npy").tolist()
    data = (index / "ltr_texts.bin").read_bytes()
    assert len(offsets) == 2 * len(ids) + 1 and offsets[-1] == len(data)
    by_entity = {eid(s): s for s in expected.entities}
    checked = 0
    for docid, entity in enumerate(ids):
        titles = data[offsets[2 * docid]:offsets[2 * docid + 1]].decode("utf-8")
        abstract = data[offsets[2 * docid + 1]:offsets[2 * docid + 2]].decode("utf-8")
        if entity in by_entity:
            subject = by_entity[entity]
            assert titles.split("\n") == [t for t in map(norm, expected.dump.values(subject, LABEL)) if t], entity
            assert abstract == norm(" ".join(expected.dump.values(subject, COMMENT))), entity
            checked += 1
    assert checked == len(expected.entities) > 50


def test_an_index_without_the_normalized_texts_reads_the_stored_fields(
        sample_link_artefacts: tuple[Path, Path], expected: Expected, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An index built before ``ltr_texts.bin`` existed (no files, no ``ltr_texts`` in
    ``elquery.json``) gives the same features, from one stored-fields call a query."""
    index, surface_forms = sample_link_artefacts
    older = index_without_ltr_texts(index, tmp_path / "index")
    with FeatureExtractor(older, surface_forms, THRESHOLD) as extractor:
        calls = _count_calls(monkeypatch)
        for query in QUERIES.values():
            found = extracted(extractor, query)
            wanted = expected.rows(query, THRESHOLD)
            assert found.keys() == wanted.keys()
            for pair, features in wanted.items():
                assert found[pair] == pytest.approx(features, rel=1e-9, abs=1e-12), (pair, query)
    assert calls["stored_values"] == len(QUERIES)


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_normalized_texts_that_do_not_match_the_index_are_one_line(
        sample_link_artefacts: tuple[Path, Path], tmp_path: Path, damage: str) -> None:
    from elquery.base import ElqueryError

    index, surface_forms = sample_link_artefacts
    damaged = tmp_path / "index"
    shutil.copytree(index, damaged, ignore=shutil.ignore_patterns("write.lock"))
    texts = damaged / "ltr_texts.bin"
    if damage == "missing":
        texts.unlink()
    else:
        texts.write_bytes(texts.read_bytes()[:-1])
    with pytest.raises(ElqueryError, match=r"ltr_texts.bin does not match the Lucene index; rebuild it$"):
        FeatureExtractor(damaged, surface_forms, THRESHOLD)
