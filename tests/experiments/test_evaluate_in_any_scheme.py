"""``elquery evaluate --index`` and the MCP ``evaluate`` tool over qrels and runs written in any
identifier scheme (issue 32.3, docs/identifiers.md), on the artefacts, queries, runs and qrels of
test_qrels_in_any_scheme.py (the real DBpedia sample with a Wikidata links file; the qrels
rewritten into each scheme from the dump lines, not through elquery): with the index's identifiers
table, Wikidata, Freebase, URL, page-id and mixed qrels give the DBpedia qrels' figures, and the run
written with ``--entity-ids wikidata`` the DBpedia run's; the MCP tool over those artefacts answers
as the command. Without ``--index`` the command compares as written (the figures differ), and
``--index`` on a folder without an identifiers table is one line, exit 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from elquery.cli import main as elquery
from test_qrels_in_any_scheme import (SCHEMES, _ids, _write_qrels, _writer, setup,  # noqa: F401 (fixtures)
                                      spellings)

KINDS = {"elq": ("qrels-elq.txt", "run-{}.elq"), "rank": ("qrels-er.txt", "run-{}.trec")}


@pytest.fixture(scope="module")
def qrels(setup: Path, spellings: dict) -> dict[str, Path]:
    """Per scheme (dbpedia and :data:`SCHEMES`), the folder of its ELQ and TREC qrels."""
    folders = {}
    for scheme in ("dbpedia", *SCHEMES):
        folders[scheme] = setup / f"evaluate-qrels-{scheme}"
        _write_qrels(folders[scheme], _writer(scheme, spellings))
    return folders


def _evaluate(kind: str, qrels: Path, run: Path, *options: str,
              capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any] | None, str]:
    """``elquery evaluate KIND --format json --per-query``: the status, the answer and stderr."""
    capsys.readouterr()
    status = elquery(["evaluate", kind, "--qrels", str(qrels), "--run", str(run), "--format", "json", "--per-query",
                      *options])
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if status == 0 else None, captured.err


def _figures(kind: str, setup: Path, folder: Path, run: str, *options: str,
             capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    qrels_name, run_name = KINDS[kind]
    status, answer, err = _evaluate(kind, folder / qrels_name, setup / run_name.format(run), *options, capsys=capsys)
    assert status == 0, err
    assert "compared as written" not in err
    assert answer is not None
    return answer


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_qrels_in_any_scheme_give_the_dbpedia_figures_with_index(kind: str, setup: Path, qrels: dict[str, Path],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    dbpedia = _figures(kind, setup, qrels["dbpedia"], "dbpedia", capsys=capsys)
    aggregate = dbpedia["strict"]["F"] if kind == "elq" else dbpedia["aggregate"]["map@100"]
    assert aggregate > 0.3 and dbpedia["queries"] == 12  # not a trivial figure
    index = ["--index", str(setup / "art" / "index")]
    assert _figures(kind, setup, qrels["dbpedia"], "dbpedia", *index, capsys=capsys) == dbpedia
    for scheme in SCHEMES:
        for run in ("dbpedia", "wikidata"):
            assert _figures(kind, setup, qrels[scheme], run, *index, capsys=capsys) == dbpedia, (scheme, run)
    artefacts = ["--artefacts", str(setup / "art")]
    assert _figures(kind, setup, qrels["wikidata"], "wikidata", *artefacts, capsys=capsys) == dbpedia
    # without --index the ids are compared as written: Wikidata qrels match no DBpedia id of the run
    assert _figures(kind, setup, qrels["wikidata"], "dbpedia", capsys=capsys) != dbpedia


def test_compare_with_index_reads_both_runs_in_the_qrels_scheme(setup: Path, qrels: dict[str, Path],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    answers = {}
    for scheme, options in (("dbpedia", []), ("wikidata", ["--index", str(setup / "art" / "index")])):
        capsys.readouterr()
        assert elquery(["evaluate", "compare", "--qrels", str(qrels[scheme] / "qrels-er.txt"),
                        str(setup / "run-wikidata.trec"), str(setup / "run-dbpedia.trec"), "--metric", "map",
                        "--format", "json", *options]) == 0
        answers[scheme] = json.loads(capsys.readouterr().out)
    dbpedia, wikidata = answers["dbpedia"], answers["wikidata"]
    assert wikidata["difference"] == 0 and wikidata["run_a"]["mean"] == wikidata["run_b"]["mean"] > 0.3
    # as written, the Wikidata run's QIDs match none of the DBpedia qrels: only the other entities count
    assert dbpedia["run_a"]["mean"] < dbpedia["run_b"]["mean"] == wikidata["run_b"]["mean"]


def test_ids_that_resolve_to_nothing_are_counted_in_one_line(setup: Path, spellings: dict,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    elq, trec = _write_qrels(setup / "evaluate-qrels-unknown", _writer("wikidata", spellings),
                             extra_elq="q01\t1\tQ999999999\t/m/0zzzzzz\n", extra_trec="q02 0 curid:1 1\n")
    index = ["--index", str(setup / "art" / "index")]
    status, _, err = _evaluate("elq", elq, setup / "run-dbpedia.elq", *index, capsys=capsys)
    assert status == 0
    assert [line for line in err.splitlines() if "compared as written" in line] == [
        f"elquery evaluate: {elq}: 2 of {len(set(_ids(elq)))} entity ids name no entity in the index's identifiers "
        "table and are compared as written (e.g. '/m/0zzzzzz')"]
    status, _, err = _evaluate("rank", trec, setup / "run-wikidata.trec", *index, capsys=capsys)
    assert status == 0
    assert [line for line in err.splitlines() if "compared as written" in line] == [
        f"elquery evaluate: {trec}: 1 of {len(set(_ids(trec)))} entity ids name no entity in the index's identifiers "
        "table and are compared as written (e.g. 'curid:1')"]


@pytest.mark.parametrize("where", ["empty folder", "index without table", "no folder", "artefacts without index"])
def test_index_without_an_identifiers_table_is_one_line_before_any_work(
        where: str, setup: Path, qrels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if where == "index without table":
        index = tmp_path / "index"
        index.mkdir()
        for part in (setup / "art" / "index").iterdir():  # the index's files, its identifiers table left out
            if part.name != "identifiers.db":
                (index / part.name).symlink_to(part)
        option = ["--index", str(index)]
    elif where == "artefacts without index":
        option = ["--artefacts", str(tmp_path)]
    else:
        option = ["--index", str(tmp_path if where == "empty folder" else tmp_path / "absent")]
    for kind in KINDS:
        status, answer, err = _evaluate(kind, qrels["wikidata"] / KINDS[kind][0],
                                        setup / KINDS[kind][1].format("dbpedia"), *option, capsys=capsys)
        assert status == 2 and answer is None
        assert len(err.splitlines()) == 1 and err.startswith("elquery: error: "), err
        assert ("identifiers table" in err) if where != "artefacts without index" else ("index" in err)


def test_the_mcp_tool_resolves_through_the_served_identifiers_table(setup: Path, qrels: dict[str, Path],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.mcp.server import create_server
    from elquery.serve.app import Artefacts
    from elquery.serve.service import Limits, Service

    art = setup / "art"
    server = create_server(Service(Artefacts(art / "index", art / "surface-forms.db"), Limits()))
    unknown = "q01\t1\tQ999999999\n"
    calls: dict[tuple[str, str, str], dict[str, Any]] = {
        (kind, scheme, run): {"kind": kind, "per_query": True,
                              "qrels": (qrels[scheme] / KINDS[kind][0]).read_text(encoding="utf-8"),
                              "run": (setup / KINDS[kind][1].format(run)).read_text(encoding="utf-8")}
        for kind in KINDS for scheme in ("dbpedia", "wikidata", "mixed") for run in ("dbpedia", "wikidata")}
    calls[("elq", "unknown", "dbpedia")] = {**calls[("elq", "wikidata", "dbpedia")]}
    calls[("elq", "unknown", "dbpedia")]["qrels"] += unknown

    async def run() -> dict[Any, Any]:
        async with Client(server) as client:
            found = {}
            for key, arguments in calls.items():
                result = await client.call_tool("evaluate", arguments)
                assert not result.is_error, result.content
                found[key] = result.structured_content
            return found
    answers = asyncio.run(run())
    for kind in KINDS:
        cli = _figures(kind, setup, qrels["wikidata"], "dbpedia", "--index", str(art / "index"), capsys=capsys)
        for scheme in ("dbpedia", "wikidata", "mixed"):
            for written in ("dbpedia", "wikidata"):
                answer = dict(answers[(kind, scheme, written)])
                assert answer.pop("warnings") == [], (kind, scheme, written)
                assert answer == cli, (kind, scheme, written)
    warnings = answers[("elq", "unknown", "dbpedia")]["warnings"]
    qrels_ids = len(set(_ids(qrels["wikidata"] / "qrels-elq.txt"))) + 1
    assert warnings == [f"qrels: 1 of {qrels_ids} entity ids name no entity in the index's identifiers table and are "
                        "compared as written (e.g. 'Q999999999')"]
