"""``score_grid``: several (language model, text) over one candidate list in one Java call
(``EntityScores.scoreGrid``: each text analyzed once, each (field, term) pair read once), the
numbers ``score_each`` gives for the same scorings, one request each, to the bit (the LTR
features' language-model scores, methods.md §9), on the index of the real DBpedia sample (with
the LTR fields)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import LTR_FIELDS
from elquery.retrieval import CandidateScoring, lm, lm_dirichlet, mlm, prms, score_each
from elquery.retrieval.scoring import score_grid


@pytest.fixture(scope="module")
def ltr_index(sample_link_artefacts: tuple[Path, Path]) -> Iterator[EntityIndex]:
    with EntityIndex(sample_link_artefacts[0]) as index:
        yield index


def test_rows_are_score_each_to_the_bit_in_one_java_call(ltr_index: EntityIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unsorted candidates, texts with and without terms in the collection (no evidence: -inf),
    a line end in a text, texts sharing terms (read once there) and repeating one, every LTR field
    and MLM: each row equals score_each's answer bit for bit."""
    from elquery.retrieval import lucene

    candidates = ["<dbpedia:Rome>", "<dbpedia:British_Airways>", "<dbpedia:Normandy>", "<dbpedia:KLM>"]
    docids = np.array([ltr_index.docid(e) for e in candidates], dtype=np.int32)
    assert not np.all(np.diff(docids) > 0)  # not given in docid order
    texts = ["british airways flights to rome", "rome", "the of", "qqzzqq", "Airlines\nof Europe", "rome rome airways"]
    models = [*(lm(name) for name in LTR_FIELDS), mlm()]
    scorings = [(model, text) for text in texts for model in models]
    calls: list[str] = []
    call = lucene._call
    monkeypatch.setattr(lucene, "_call", lambda name, *args: calls.append(name) or call(name, *args))
    grid = score_grid(ltr_index, scorings, docids)
    assert calls == ["scoreGrid"]
    monkeypatch.setattr(lucene, "_call", call)
    expected = score_each(ltr_index, [CandidateScoring(model, text, docids) for model, text in scorings])
    assert grid.shape == (len(scorings), len(docids)) and grid.dtype == np.float64
    for row, result in zip(grid, expected):
        assert row.tobytes() == result.scores.tobytes()
    assert np.isneginf(grid[len(models) * 2:len(models) * 4]).all()  # "the of", "qqzzqq": no evidence
    assert np.isfinite(grid[:len(models)]).any() and len({row.tobytes() for row in grid}) > 10
    assert score_grid(ltr_index, [], docids).shape == (0, len(docids))


def test_other_models_and_orders_are_score_each_to_the_bit(ltr_index: EntityIndex) -> None:
    """Dirichlet smoothing, PRMS, an empty text, and scorings in any order (a text scored, then
    another, then the first again): the rows are still score_each's, bit for bit."""
    docids = np.array([ltr_index.docid(e) for e in ["<dbpedia:KLM>", "<dbpedia:Rome>", "<dbpedia:Normandy>"]],
                      dtype=np.int32)
    dirichlet, mapping, title = lm_dirichlet("content"), prms(), lm("title")
    scorings = [(dirichlet, "rome normandy"), (mapping, "british airways"), (title, "rome"), (mapping, "rome normandy"),
                (dirichlet, ""), (title, "british airways rome")]
    grid = score_grid(ltr_index, scorings, docids)
    expected = score_each(ltr_index, [CandidateScoring(model, text, docids) for model, text in scorings])
    for row, result in zip(grid, expected):
        assert row.tobytes() == result.scores.tobytes()
    assert np.isneginf(grid[4]).all() and np.isfinite(grid[[0, 1, 3]]).all()
