"""``score_grid`` reads each (field, term) pair's terms-dictionary entry through a cache shared by
every thread of the index (``ScoreGrid.TermCache``: the term's state, cf and df, or that the field
lacks it), and reads a pair's postings over the candidates either posting by posting or by
skipping to each candidate. Whatever the path, the rows are ``score_each``'s (which seeks every
term in Lucene itself, without the cache) to the bit: on a first call (entries read), on repeated
calls (entries from the cache), from several threads at once, over few candidates and many (both
ways of reading postings), on the index of the real DBpedia sample."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import LTR_FIELDS
from elquery.retrieval import CandidateScoring, lm, mlm, score_each
from elquery.retrieval.scoring import score_grid

TEXTS = ["british airways flights to rome", "rome", "the city of rome", "flights from the united states", "qqzzqq the",
         "also its world list", "river valley north"]  # from, its, also, united, states, world, list: df > 32


@pytest.fixture(scope="module")
def ltr_index(sample_link_artefacts: tuple[Path, Path]) -> Iterator[EntityIndex]:
    with EntityIndex(sample_link_artefacts[0]) as index:
        yield index


def candidate_sets(index: EntityIndex) -> list[np.ndarray]:
    """Four candidates (the postings of a term held by more than 32 entities, such as "from" in
    the catch-all field or "united" in the wiki links, skipped to each) and every other entity (every pair's postings read
    posting by posting)."""
    count = len(index.entity_ids)
    assert count > 50
    few = np.array([0, count // 3, count // 2, count - 1], dtype=np.int32)
    many = np.arange(0, count, 2, dtype=np.int32)
    return [few, many]


def expected_rows(index: EntityIndex, scorings: list, docids: np.ndarray) -> np.ndarray:
    return np.array([r.scores for r in score_each(index, [CandidateScoring(m, t, docids) for m, t in scorings])])


def test_cached_and_concurrent_grids_are_score_each_to_the_bit(ltr_index: EntityIndex) -> None:
    models = [*(lm(name) for name in LTR_FIELDS), mlm()]
    scorings = [(model, text) for text in TEXTS for model in models]
    for docids in candidate_sets(ltr_index):
        expected = expected_rows(ltr_index, scorings, docids)
        assert np.isfinite(expected).any() and np.isneginf(expected).any()
        first = score_grid(ltr_index, scorings, docids)
        again = score_grid(ltr_index, scorings, docids)
        assert first.tobytes() == again.tobytes() == expected.tobytes()
        # each thread its own order of texts, so that threads read and fill the cache at once
        orders = [TEXTS[k:] + TEXTS[:k] for k in range(4)]
        with ThreadPoolExecutor(4) as pool:
            grids = list(pool.map(
                lambda order: score_grid(ltr_index, [(m, t) for t in order for m in models], docids), orders * 3))
        for order, grid in zip(orders * 3, grids):
            rows = [(TEXTS.index(t), m) for t in order for m in range(len(models))]
            wanted = np.array([expected[text * len(models) + m] for text, m in rows])
            assert grid.tobytes() == wanted.tobytes()
