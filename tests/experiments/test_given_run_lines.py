"""A given run is combined into the cross-validated run by the one line reader's rules (issue
28.4; elquery.formats.lines): a byte order mark at the start and CR LF line ends change nothing.
Before, the runner split the run into queries with a reader of its own (``line.rstrip("\\n")``):
the first query's id kept the BOM, so it fell out of the cross-validated run, and every line kept
its CR."""

from __future__ import annotations

from pathlib import Path

import pytest

from elquery.experiments.runner import run_experiment

DEMO = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs" / "demo"
CONFIG = """queries = "{demo}/queries.json"
[crossval]
scheme = "leave-one-out"
[semantic_mapping]
qrels = "{demo}/qrels-er.txt"
[[semantic_mapping.methods]]
method = "run"
run = "{run}"
label = "Given"
"""


def given_lines() -> list[str]:
    """A TREC run ranking each demo query's relevant entities (qrels-er.txt), and one wrong entity first."""
    lines, ranks = [], {}
    for line in (DEMO / "qrels-er.txt").read_text(encoding="utf-8").splitlines():
        qid, _, entity, _ = line.split("\t")
        if qid not in ranks:
            ranks[qid] = 1
            lines.append(f"{qid} Q0 <dbpedia:Nowhere> 1 9.0 given")
        ranks[qid] += 1
        lines.append(f"{qid} Q0 {entity} {ranks[qid]} {9.0 - ranks[qid]:.1f} given")
    return lines


@pytest.mark.parametrize(("bom", "end"), [(b"", b"\n"), (b"\xef\xbb\xbf", b"\r\n")], ids=["plain", "bom-crlf"])
def test_a_given_run_is_combined_as_it_is_read(tmp_path: Path, bom: bytes, end: bytes) -> None:
    lines = given_lines()
    run = tmp_path / "given.trec"
    run.write_bytes(bom + b"".join(line.encode("utf-8") + end for line in lines))
    config = tmp_path / "given.toml"
    config.write_text(CONFIG.format(demo=DEMO, run=run), encoding="utf-8")
    result = run_experiment(config, tmp_path / "out", progress=False).method("sm", "Given")
    [sweep] = result.sweep.values()
    assert result.per_query == sweep  # every query, as the run is evaluated on its own
    assert len(result.per_query["map"]) == 10
    combined = result.run.read_bytes()
    assert combined == b"".join(line.encode("utf-8") + b"\n" for line in sorted(lines, key=lambda l: l.split()[0]))
