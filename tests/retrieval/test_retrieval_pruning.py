"""SDM/FSDM ranking passes over entities whose score bound (methods.md section 4: the score without
any query term at the entity's length bucket, plus a bound of each matched term's gain) falls
below the k-th score: the top k must be exactly the first k of the full ranking (the same
entities, order and scores to the last bit), which is computed without any bound (k above the
number of entities ranked) and checked against the brute-force reference in
test_retrieval_dependence.py.

The index is Zipfian text over a small vocabulary, so common query terms match most entities and
most are passed over; field lengths run from 0 to a few thousand (exact and geometric buckets).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from elquery.indexing.entity_documents import EntityDocument
from elquery.kb.entity_index import EntityIndex
from elquery.retrieval import Searcher, fsdm, sdm
from elquery.retrieval.models import SequentialDependence
from test_retrieval_scoring import write_index  # pytest puts this folder on sys.path

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
WORDS = [SYLLABLES[i % 70] + SYLLABLES[(i * 7 + 3) % 70] + SYLLABLES[(i * 13 + 5) % 70] for i in range(400)]
ENTITIES = 3000


def zipf_words(rng: random.Random, count: int) -> str:
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    return " ".join(rng.choices(WORDS, weights, k=count))


@pytest.fixture(scope="module")
def zipf_index(tmp_path_factory: pytest.TempPathFactory) -> EntityIndex:
    rng = random.Random(19)
    documents = []
    for i in range(ENTITIES):
        names = tuple(zipf_words(rng, rng.randint(1, 4)) for _ in range(rng.choice([0, 1, 1, 2, 3])))
        content = tuple(zipf_words(rng, max(1, int(rng.lognormvariate(3.5, 1.2)))) for _ in range(rng.randint(0, 3)))
        documents.append(EntityDocument(f"<dbpedia:Z{(i * 7919) % ENTITIES:04d}>", names, content))
    with write_index(tmp_path_factory.mktemp("zipf") / "index", documents) as index:
        yield index


MODELS: dict[str, SequentialDependence] = {
    "sdm": sdm(),
    "sdm-small-mu": sdm(mu=5.0, window=3),
    "fsdm": fsdm(),
    "fsdm-components": fsdm({"names": 0.3, "content": 0.7}, {"names": 1.0, "content": 0.0},
                            {"names": 0.0, "content": 1.0}, lambdas=(0.6, 0.3, 0.1)),
    "fsdm-names": fsdm({"names": 1.0}, mu={"names": 2.0}),
}


def queries() -> list[str]:
    rng = random.Random(5)
    common = WORDS[:12]
    out = [" ".join(rng.sample(common, 3)) for _ in range(6)]
    out += [" ".join(rng.sample(WORDS[:60], 2)) for _ in range(4)]
    out += [f"{WORDS[0]} {WORDS[1]} {WORDS[0]}", f"{WORDS[2]} {WORDS[2]}", WORDS[3], f"{WORDS[5]} {WORDS[300]} {WORDS[6]}"]
    return out


@pytest.mark.parametrize("name", list(MODELS))
def test_top_k_is_the_prefix_of_the_full_ranking(zipf_index: EntityIndex, name: str) -> None:
    model = MODELS[name]
    with Searcher(zipf_index) as searcher:
        for query in queries():
            full = searcher.rank(query, model, ENTITIES + 1)
            assert len(full) > 100, query  # common terms: most entities are ranked
            for k in (1, 7, 50, 400):
                assert searcher.rank(query, model, k) == full[:k], (query, k)
