"""The scorer's memory-mapped side files (issue 30.4): the exact field lengths ``FIELD_length.npy``
and the tie order ``entity_id_rank.npy`` are what rankings and scores read, an index built
without them (before they existed) is served with the same answers, and a tie order that does
not match the index is refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.indexing.build_index import build_dbpedia_index
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import ID_RANK_FILE, METADATA_FILE, length_file
from elquery.retrieval.models import BM25, Model, fsdm, lm, mlm, sdm
from elquery.retrieval import searcher as searcher_module
from elquery.retrieval.searcher import Searcher
from test_retrieval_scoring import write_synthetic_dumps  # pytest puts this folder on sys.path

QUERIES = ["river valley", "paris paris garden", "north castle king", "rock", "music band tower"]
MODELS: list[Model] = [mlm(), lm(), sdm(), fsdm(), BM25()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dumps = tmp_path_factory.mktemp("side-dumps")
    write_synthetic_dumps(dumps)
    out = tmp_path_factory.mktemp("side") / "index"
    build_dbpedia_index([dumps], out, workers=1)
    return out


def _copy(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "index"
    shutil.copytree(built, copy)
    return copy


def _answers(path: Path) -> list[object]:
    """Every model's top 100 and the scores of every entity, for every query."""
    with Searcher(path) as searcher:
        ids = searcher.index.entity_ids
        return [(searcher.rank(q, m, 100), None if isinstance(m, BM25) else searcher.score(q, ids, m))
                for q in QUERIES for m in MODELS]


@pytest.fixture(scope="module")
def reference(built: Path) -> list[object]:
    return _answers(built)


def test_the_build_writes_the_tie_order(built: Path) -> None:
    with EntityIndex(built) as index:
        ids = index.entity_ids
        assert index.metadata["entity_id_rank"] is True
    rank = np.load(built / ID_RANK_FILE)
    assert [ids[d] for d in np.argsort(rank)] == sorted(ids)


def test_an_index_without_side_files_gives_the_same_answers(built: Path, reference: list[object], tmp_path: Path) -> None:
    """An index built before entity_id_rank.npy (order computed from the ids) and without length
    files (lengths from the doc values) ranks and scores byte-identically."""
    old = _copy(built, tmp_path)
    (old / ID_RANK_FILE).unlink()
    for lengths in old.glob("*_length.npy"):
        lengths.unlink()
    metadata = json.loads((old / METADATA_FILE).read_text(encoding="utf-8"))
    del metadata["entity_id_rank"]
    (old / METADATA_FILE).write_text(json.dumps(metadata), encoding="utf-8")
    assert _answers(old) == reference


def test_rankings_follow_the_tie_order_file(built: Path, reference: list[object], tmp_path: Path) -> None:
    """Reversing the order in entity_id_rank.npy reverses every run of tied entities, in Java's
    rankings (language models, SDM/FSDM, BM25) alike: the file is what both sides read."""
    copy = _copy(built, tmp_path)
    rank = np.load(copy / ID_RANK_FILE)
    np.save(copy / ID_RANK_FILE, (len(rank) - 1 - rank).astype(np.int32))
    reversed_answers = _answers(copy)
    assert reversed_answers != reference
    tied_runs = 0
    for (ranking, _), (expected, _) in zip(reversed_answers, reference, strict=True):
        assert [e.score for e in ranking] == [e.score for e in expected]
        cut = expected[-1].score if expected else None  # the last score's run may be cut at k
        for score in {e.score for e in expected} - {cut}:
            tied_runs += sum(e.score == score for e in expected) > 1
            assert [e.entity for e in ranking if e.score == score] == [e.entity for e in expected if e.score == score][::-1]
    assert tied_runs >= 5


def test_scores_read_the_length_files(built: Path, reference: list[object], tmp_path: Path) -> None:
    """The lengths the scorer uses are the memory-mapped names_length.npy / content_length.npy:
    doubling one entity's content length changes that entity's language-model score only."""
    copy = _copy(built, tmp_path)
    lengths = np.load(copy / length_file("content"))
    target = int(np.argmax(lengths))
    lengths[target] *= 2
    np.save(copy / length_file("content"), lengths)
    with Searcher(copy) as searcher:
        entity = searcher.index.entity_ids[target]
        changed = {s.entity: s.log_score for s in searcher.score("river valley", searcher.index.entity_ids, lm())}
    expected = {s.entity: s.log_score for s in reference[QUERIES.index("river valley") * len(MODELS) + 1][1]}
    assert {e for e in expected if changed[e] != expected[e]} == {entity}


def test_a_length_file_not_matching_the_index_is_not_used(built: Path, reference: list[object], tmp_path: Path) -> None:
    copy = _copy(built, tmp_path)
    np.save(copy / length_file("content"), np.load(copy / length_file("content"))[:-1])
    assert _answers(copy) == reference


@pytest.mark.parametrize("damage", ["short", "int64", "garbage", "missing"])
def test_a_tie_order_not_matching_the_index_is_refused(built: Path, tmp_path: Path, damage: str) -> None:
    copy = _copy(built, tmp_path)
    rank = np.load(copy / ID_RANK_FILE)
    if damage == "short":
        np.save(copy / ID_RANK_FILE, rank[:-1])
    elif damage == "int64":
        np.save(copy / ID_RANK_FILE, rank.astype(np.int64))
    elif damage == "garbage":
        (copy / ID_RANK_FILE).write_bytes(b"not an array")
    else:
        (copy / ID_RANK_FILE).unlink()
    with Searcher(copy) as searcher, pytest.raises(ElqueryError) as error:
        searcher.rank("river valley")
    assert str(error.value) == f"{copy}: {ID_RANK_FILE} does not match the Lucene index; rebuild it"


def test_opening_does_not_read_the_ids(built: Path) -> None:
    """A first ranking sorts no ids: the tie order is the mapped file."""
    with Searcher(built) as searcher:
        searcher.prepare()
        assert "entity_ids" not in searcher.index.__dict__


def test_a_first_ranking_names_its_entities_from_lucene_then_from_the_id_list(
        built: Path, reference: list[object], monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh searcher names ranked docids by Lucene's stored ids, without reading the id list,
    until it has named the entity count / STORED_NAME_COST of them; then it reads the list. The
    names are the list's either way (the reference read it first)."""
    monkeypatch.setattr(searcher_module, "STORED_NAME_COST", 20)  # 60 entities: 3 named from Lucene
    expected, _ = reference[0]
    assert len(expected) > 3
    with Searcher(built) as searcher:
        assert searcher.rank(QUERIES[0], MODELS[0], 3) == expected[:3]
        assert "entity_ids" not in searcher.index.__dict__
        assert searcher.rank(QUERIES[0], MODELS[0], 100) == expected
        assert "entity_ids" in searcher.index.__dict__
