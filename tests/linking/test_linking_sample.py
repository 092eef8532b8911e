"""All Y-ERD and ERD-dev queries linked against the real DBpedia sample (index and surface forms
from its anchor texts): no error, and the ELQ run names every qid (methods.md §7: a missing query
would count as empty)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elquery.cli import main as elquery
from elquery.evaluation.readers import read_elq, read_jsonl


@pytest.mark.parametrize("collection", ["y-erd", "erd-dev"])
def test_every_query_is_linked(collection: str, elq_data: Path, sample_link_artefacts: tuple[Path, Path], tmp_path: Path) -> None:
    queries = elq_data / collection / "queries.json"
    qids = set(json.loads(queries.read_text(encoding="utf-8")))
    index, sf = sample_link_artefacts
    common = ["link", "--index", str(index), "--surface-forms", str(sf), "--queries", str(queries)]
    # s = 0.25: the sample's collection is tiny, so exp-scores are far below the full-KB default
    assert elquery([*common, "--gif-threshold", "0.25", "--out", str(tmp_path / "run.elq")]) == 0
    run = read_elq(tmp_path / "run.elq")
    assert set(run) == qids
    assert any(run.values())  # the sample's entities are found in some queries
    assert elquery([*common, "--method", "cmns", "--format", "jsonl", "--out", str(tmp_path / "run.jsonl")]) == 0
    records = read_jsonl(tmp_path / "run.jsonl")
    assert {r["qid"] for r in records} == qids
    assert any(r["interpretations"] for r in records)
