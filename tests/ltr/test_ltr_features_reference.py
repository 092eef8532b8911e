"""The LTR features (``FeatureExtractor.extract``: one Java call, ``PairFeatures``, for the
language-model scores and the string tests) equal, to the bit, the straightforward computation
they replaced, on many queries over the real DBpedia sample: candidates by
:func:`elquery.linking.mentions.detect`, every language-model score by its own
``score_each`` request (``EntityScores.scoreEach``, a model parsed and built per request, not
``ScoreGrid``), and the string tests in Python over the normalized titles and short abstracts
(:class:`~elquery.linking.ltr.stored.NormalizedTexts`). The queries: every Y-ERD and ERD-dev
query, and queries made of the sample's entity titles (alone, two together, with other words
around, as n-grams of a longer query), so every title feature, ntem and smil are exercised."""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest

from elquery.kb.normalize import tokenize
from elquery.kb.surface_forms.layout import KB
from elquery.linking.ltr import FEATURES, FeatureExtractor
from elquery.linking.ltr.features import FIELD_FEATURES, NOT_FOUND_POSITION
from elquery.linking.ltr.stored import NormalizedTexts
from elquery.linking.mentions import detect
from elquery.retrieval import lm, mlm
from elquery.retrieval.scoring import CandidateScoring, score_each
from conftest import index_without_ltr_texts


def reference(extractor: FeatureExtractor, query: str) -> tuple[list[tuple[object, ...]], np.ndarray]:
    """(mention, entity, start, end, commonness) per candidate pair and the feature matrix, computed
    pair by pair (the algorithm before ``PairFeatures``)."""
    index, store, threshold = extractor.index, extractor.store, extractor.commonness_threshold
    tokens = tokenize(query)
    texts = [t.text for t in tokens]
    matches = store.lookup_spans(texts)
    candidates = [(c, index.find_docid(c.entity)) for c in detect(texts, matches, threshold) if c.commonness >= threshold]
    candidates = [(c, d) for c, d in candidates if d is not None]
    if not candidates:
        return [], np.zeros((0, len(FEATURES)))
    spans = sorted({(c.mention.start, c.mention.end) for c, _ in candidates})
    docids = sorted({d for _, d in candidates})
    title_docids = {}  # the KB matches of every n-gram of a mention: the entities whose title may equal it
    for start, end in spans:
        for i in range(start, end):
            for j in range(i + 1, end + 1):
                found = (index.find_docid(m.entity) for m in matches.get((i, j), ()) if KB in m.sources)
                title_docids[(i, j)] = {d for d in found if d is not None}
    stored = sorted({*docids, *(d for found in title_docids.values() for d in found)})
    normalized = dict(zip(stored, NormalizedTexts(index).texts(stored)))

    def contains(outer: str, inner: str) -> bool:
        return f" {inner} " in f" {outer} "

    def position(text: str, inner: str) -> int:
        found = f" {text} ".find(f" {inner} ")
        return found if found >= 0 else NOT_FOUND_POSITION

    def title_equals(i: int, j: int) -> set[int]:
        return {d for d in title_docids[(i, j)] if " ".join(texts[i:j]) in normalized[d][0]}

    def scores(model: object, text: str) -> dict[int, float]:
        [result] = score_each(index, [CandidateScoring(model, text.replace("\t", " "), np.array(docids))])  # type: ignore[arg-type]
        return dict(zip(docids, np.exp(result.scores).tolist()))

    single = [lm(field) for _, field in FIELD_FEATURES]
    query_scores = [scores(model, query) for model in single]
    mlm_tc = scores(mlm(), query)
    mention_scores = {(s, e): [scores(model, query[tokens[s].start:tokens[e - 1].end]) for model in single]
                      for s, e in spans}
    query_text = " ".join(texts)
    redirects, links = index.entity_counts("redirects"), index.entity_counts("links")
    pairs, rows = [], []
    for candidate, docid in candidates:
        start, end = candidate.mention.start, candidate.mention.end
        mention = " ".join(texts[start:end])
        titles, abstract = normalized[docid]
        subgrams = set().union(*(title_equals(i, j) for i in range(start, end) for j in range(i + 1, end + 1)))
        row = {"len": end - start, "ntem": len(title_equals(start, end)), "smil": len(subgrams),
               "matches": len(matches[(start, end)]), "len_ratio": (end - start) / len(texts),
               "redirects": redirects[docid], "links": links[docid], "commonness": candidate.commonness,
               "mct": any(contains(mention, t) for t in titles), "tcm": any(contains(t, mention) for t in titles),
               "tem": mention in titles, "pos1": position(abstract, mention),
               "qct": any(contains(query_text, t) for t in titles), "tcq": any(contains(t, query_text) for t in titles),
               "teq": query_text in titles, "mlm-tc": mlm_tc[docid]}
        for (suffix, _), by_mention, by_query in zip(FIELD_FEATURES, mention_scores[(start, end)], query_scores):
            row["m" + suffix], row["q" + suffix] = by_mention[docid], by_query[docid]
        rows.append([float(row[name]) for name in FEATURES])
        pairs.append((candidate.mention, candidate.entity, tokens[start].start, tokens[end - 1].end, candidate.commonness))
    return pairs, np.array(rows, dtype=np.float64)


def title_queries(index: Path, count: int, seed: int = 7) -> list[str]:
    """Queries made of the sample's entity titles: one, two, or one inside other words."""
    titles = [unquote(line[len("<dbpedia:"):-1]).replace("_", " ")
              for line in (index / "entity_ids.txt").read_text(encoding="utf-8").split()]
    rng = random.Random(seed)
    words = ["the", "of", "new", "in", "vs", "history", "rome's", "museum", "best", "2015"]
    queries = [title for title in titles]
    while len(queries) < count:
        parts = [rng.choice(titles), *(rng.choice(titles) for _ in range(rng.randint(0, 1)))]
        parts.insert(rng.randint(0, len(parts)), rng.choice(words))
        if rng.random() < 0.5:
            parts.append(rng.choice(words))
        queries.append(" ".join(parts))
    return queries


@pytest.fixture(scope="module")
def queries(sample_link_artefacts: tuple[Path, Path], elq_data: Path) -> list[str]:
    real = [text for name in ("y-erd", "erd-dev")
            for text in json.loads((elq_data / name / "queries.json").read_text(encoding="utf-8")).values()]
    return [*title_queries(sample_link_artefacts[0], 400), *real]


def assert_same(extractor: FeatureExtractor, queries: list[str]) -> int:
    """Every query's pairs and features equal the reference's to the bit; the pairs compared."""
    compared = 0
    for query in queries:
        pairs, matrix = extractor.extract(query)
        wanted_pairs, wanted = reference(extractor, query)
        assert [(p.mention, p.entity, p.start, p.end, p.commonness) for p in pairs] == wanted_pairs, query
        assert matrix.dtype == wanted.dtype and matrix.shape == wanted.shape, query
        assert np.array_equal(matrix, wanted), (query, [FEATURES[c] for c in np.argwhere(matrix != wanted)[:, 1]])
        compared += len(pairs)
    return compared


@pytest.mark.parametrize("threshold", [0.1, 0.0])
def test_features_equal_the_pair_by_pair_computation(sample_link_artefacts: tuple[Path, Path], queries: list[str],
                                                     threshold: float) -> None:
    with FeatureExtractor(*sample_link_artefacts, threshold) as extractor:
        compared = assert_same(extractor, queries)
        rows = np.vstack([extractor.extract(q)[1] for q in queries[:400]])
    assert compared > 1000
    exercised = {name: len(set(column.tolist())) for name, column in zip(FEATURES, rows.T)}
    assert all(values > 1 for name, values in exercised.items() if name != "redirects"), exercised
    assert exercised["ntem"] >= 2 and exercised["smil"] >= 3


def test_an_index_without_normalized_texts_gives_the_same_features(sample_link_artefacts: tuple[Path, Path],
                                                                   queries: list[str], tmp_path: Path) -> None:
    """The stored-fields path (texts given to Java by Python) equals the reference too."""
    index, surface_forms = sample_link_artefacts
    older = index_without_ltr_texts(index, tmp_path / "index")
    with FeatureExtractor(older, surface_forms, 0.1) as extractor:
        assert assert_same(extractor, queries[:150]) > 300


def test_positions_count_code_points_beyond_the_basic_plane(sample_link_artefacts: tuple[Path, Path], queries: list[str],
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pos1`` is an offset in characters (code points), as Python counts them, also after a
    character beyond the Basic Multilingual Plane (two UTF-16 units in Java): short abstracts
    given a prefix of two such letters (CJK Extension B, letters to the normalization) agree with
    the reference, and the offsets found are the prefix's 5 characters further."""
    index, surface_forms = sample_link_artefacts
    older = index_without_ltr_texts(index, tmp_path / "index")
    pos1 = FEATURES.index("pos1")
    with FeatureExtractor(older, surface_forms, 0.1) as extractor:
        plain = [extractor.extract(q)[1][:, pos1] for q in queries[:150]]
        texts = NormalizedTexts.texts
        monkeypatch.setattr(NormalizedTexts, "texts", lambda self, docids: [
            (titles, "\U0002070e\U00020731 x " + abstract) for titles, abstract in texts(self, docids)])
        assert assert_same(extractor, queries[:150]) > 300
        shifted = [extractor.extract(q)[1][:, pos1] for q in queries[:150]]
    found = np.concatenate(plain) != NOT_FOUND_POSITION
    assert found.sum() > 50
    assert np.array_equal(np.concatenate(shifted)[found], np.concatenate(plain)[found] + 5)
