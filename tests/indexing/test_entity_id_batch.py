"""Entity ids -> docids of a whole query at once (``EntityIndex.find_docids``, issue 29.6: the LTR
features' candidates): find_docid's answers, from Lucene in one Java call, five ids a lookup of
find_docid's budget, then from the id map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elquery.kb import entity_index
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import IDS_FILE


class _CountingAccess:
    """The index's Java entry points, counting the id lookups."""

    def __init__(self, access: Any) -> None:
        self.access, self.calls = access, []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.access, name)

        def call(*args: Any) -> Any:
            self.calls.append(name)
            return method(*args)
        return call


def test_find_docids_answers_as_find_docid_in_one_call(demo_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = (demo_index / IDS_FILE).read_text(encoding="utf-8").split("\n")[:-1]
    title = ids[3][len("<dbpedia:"):-1]
    asked = [ids[5], "<dbpedia:No_such_entity>", title, ids[0], f"http://dbpedia.org/resource/{title}", ids[5],
             title.replace("_", " "), "No_such_entity", ids[-1]]
    expected = [5, None, 3, 0, 3, 5, 3, None, len(ids) - 1]
    monkeypatch.setattr(entity_index, "LOOKUP_COST", 2)  # 54 entities: the map after 27 lookups
    with EntityIndex(demo_index) as index:
        counting = _CountingAccess(index._access)
        index._access = counting
        assert index.find_docids([]) == [] and counting.calls == []
        # one call for the batch (9 ids: 2 lookups of the budget), one for the titles and URIs
        # retried as canonical ids (4: 1)
        assert index.find_docids(asked) == expected and counting.calls == ["firstDocids", "firstDocids"]
        for _ in range(2):  # 54 ids: 11 lookups each, 25 in all
            assert index.find_docids(ids) == list(range(len(ids)))
        assert counting.calls == ["firstDocids"] * 4 and "_docid_of" not in index.__dict__
        assert index.find_docids(ids) == list(range(len(ids)))  # 25 < 27: Lucene still, then 36
        assert counting.calls == ["firstDocids"] * 5 and "_docid_of" not in index.__dict__
        assert index.find_docids(asked) == expected  # past the budget: the map is read, and answers
        assert counting.calls == ["firstDocids"] * 5 and "_docid_of" in index.__dict__
