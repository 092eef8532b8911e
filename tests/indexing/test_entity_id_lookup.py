"""Entity id -> docid without reading the whole id map (elquery/kb/entity_index.py): a fresh index
answers from Lucene's id field, reads the map only after many lookups (or when asked to), and
still refuses an id file that does not match the index."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.kb import entity_index
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import IDS_FILE


def _ids(index: Path) -> list[str]:
    return (index / IDS_FILE).read_text(encoding="utf-8").split("\n")[:-1]


def test_lookups_answer_from_lucene_then_from_the_map(demo_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _ids(demo_index)
    monkeypatch.setattr(entity_index, "LOOKUP_COST", 2)  # 54 entities: the map after 27 lookups
    with EntityIndex(demo_index) as index:
        assert "entity_ids" not in index.__dict__  # opening read no id list
        for docid, entity in enumerate(ids[:20]):
            assert index.find_docid(entity) == docid
        title = ids[3][len("<dbpedia:"):-1]
        # a title is looked up as given, then as its canonical id: two lookups each
        assert index.find_docid(title) == 3 == index.find_docid(f"http://dbpedia.org/resource/{title}")
        assert index.find_docid("<dbpedia:No_such_entity>") is None
        assert index.find_docid(ids[20]) == 20 and index.find_docid(ids[21]) == 21  # the 27th lookup
        assert "_docid_of" not in index.__dict__ and "entity_ids" not in index.__dict__
        assert index.find_docid(ids[22]) == 22
        assert "_docid_of" in index.__dict__  # the 28th lookup read the map
        assert [index.find_docid(entity) for entity in ids] == list(range(len(ids)))
        assert index.find_docid(title.replace("_", " ")) == 3 and index.find_docid("No_such_entity") is None


def test_prepare_reads_the_map(demo_index: Path) -> None:
    with EntityIndex(demo_index) as index:
        index.prepare()
        assert index.__dict__["_docid_of"] == {entity: docid for docid, entity in enumerate(_ids(demo_index))}


@pytest.mark.parametrize("change", ["one more", "one fewer", "last two swapped", "empty", "no final newline"])
def test_an_id_file_that_does_not_match_is_refused(demo_index: Path, tmp_path: Path, change: str) -> None:
    copy = tmp_path / "index"
    shutil.copytree(demo_index, copy, ignore=shutil.ignore_patterns("write.lock"))
    ids = _ids(demo_index)
    changed = {"one more": [*ids, "<dbpedia:Extra>"], "one fewer": ids[:-1], "empty": [],
               "last two swapped": [*ids[:-2], ids[-1], ids[-2]], "no final newline": ids}[change]
    text = "\n".join(changed) + ("\n" if changed and change != "no final newline" else "")
    (copy / IDS_FILE).write_text(text, encoding="utf-8")
    if change == "no final newline":
        with EntityIndex(copy) as index:
            assert index.find_docid(ids[-1]) == len(ids) - 1 and index.entity(len(ids) - 1) == ids[-1]
        return
    with pytest.raises(ElqueryError, match=f"{IDS_FILE} does not match the Lucene index; rebuild it"):
        EntityIndex(copy)


def test_a_line_more_inside_the_id_file_is_refused_when_the_ids_are_read(demo_index: Path, tmp_path: Path) -> None:
    """Opening reads the file's last line only; the ids in docid order are checked when read."""
    copy = tmp_path / "index"
    shutil.copytree(demo_index, copy, ignore=shutil.ignore_patterns("write.lock"))
    ids = _ids(demo_index)
    (copy / IDS_FILE).write_text("\n".join([*ids[:10], "<dbpedia:Extra>", *ids[10:]]) + "\n", encoding="utf-8")
    with EntityIndex(copy) as index:
        assert index.find_docid(ids[20]) == 20  # Lucene's id field answers
        with pytest.raises(ElqueryError, match=f"{IDS_FILE} does not match the Lucene index; rebuild it"):
            index.entity(0)
