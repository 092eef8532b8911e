"""The entity-id file the store build's merge workers map: every id back by its number, whatever
its characters, and none for a build without entities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elquery.indexing.surface_forms.entity_names import (
    ENDS_FILE,
    IDS_FILE,
    MappedEntityNames,
    write_entity_names,
)

NAMES = ["<dbpedia:Rome>", "<dbpedia:São_Paulo>", "<dbpedia:東京>", "<dbpedia:A>", "<dbpedia:Ångström_(unit)>"]


def test_every_id_back_by_its_number(tmp_path: Path) -> None:
    write_entity_names(tmp_path, NAMES)
    names = MappedEntityNames(tmp_path)
    assert len(names) == 5
    assert [names[n] for n in range(5)] == NAMES
    assert names[-1] == NAMES[-1] and names[1:4] == NAMES[1:4] and list(names) == NAMES
    assert (tmp_path / IDS_FILE).read_bytes() == "".join(NAMES).encode("utf-8")
    assert names.take(np.array([4, 0, 2, 2, 1])) == [NAMES[4], NAMES[0], NAMES[2], NAMES[2], NAMES[1]]
    assert names.ranks.tolist() == [sorted(NAMES).index(name) for name in NAMES]  # Python's order of strings
    with pytest.raises(IndexError):
        names[5]


def test_no_entities(tmp_path: Path) -> None:
    write_entity_names(tmp_path, [])
    names = MappedEntityNames(tmp_path)
    assert len(names) == 0 and list(names) == [] and (tmp_path / ENDS_FILE).exists() and len(names.ranks) == 0
