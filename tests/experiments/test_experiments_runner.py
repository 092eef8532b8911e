"""run_experiment on a synthetic setting whose best GIF threshold is known in advance, with a
stand-in linking backend: sweep, cache reuse, cross-validation, outputs (methods.md §5, §7-8)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from elquery.base import run
from elquery.experiments import load_config, run_experiment
from elquery.experiments.cli import register
from elquery.experiments.sweep import Setting
from elquery.linking.methods import METHODS
from elquery.linking.params import MethodParams, load_params
from elquery.linking.output import number
from elquery.linking.types import Candidate, LinkResult, Mention, ScoredMention

# 12 queries in 6 sessions. Query q: "alpha beta"; the right entity R<q> on "alpha" scores 0.6-0.75,
# a wrong entity W<q> on "beta" scores 0.2-0.34. Sessions s5 has no entity in the ground truth.
# GIF: s = 0.2 keeps both (strict F 0), s = 0.5 keeps R only (F 1), s = 0.8 keeps nothing (F 0 where
# the ground truth has an entity): the best threshold is 0.5 in every fold.
QIDS = [f"s{s}_{i}" for s in range(6) for i in (1, 2)]
ALPHA, BETA = Mention("alpha", 0, 1), Mention("beta", 1, 2)


def right(qid: str) -> str:
    return f"<dbpedia:R_{qid}>"


def wrong(qid: str) -> str:
    return f"<dbpedia:W_{qid}>"


def has_gold(qid: str) -> bool:
    return not qid.startswith("s5")


class FakeBackend:
    """Triples as above; for "mlm" the wrong entity scores higher (a worse semantic mapping)."""

    def __init__(self) -> None:
        self.linked: list[tuple[str, float | None, int]] = []
        self.detected = 0

    def identity(self, method: str, fixed: object = ()) -> object:
        return ["fake", method]

    def triples(self, method: str, qid: str) -> list[ScoredMention]:
        n = QIDS.index(qid)
        good, bad = 0.6 + 0.0125 * n, 0.2 + 0.0125 * n
        if method == "mlm":
            good, bad = bad, good
        triples = [ScoredMention(BETA, wrong(qid), bad, bad)]
        if has_gold(qid):
            triples.append(ScoredMention(ALPHA, right(qid), good, good))
        return triples

    def link(self, method: str, c: float | None, fixed: object, queries: Mapping[str, str], progress
             ) -> Iterable[LinkResult]:
        self.linked.append((method, c, len(queries)))
        for qid, query in queries.items():
            scored = tuple(t for t in self.triples(method, qid) if c is None or t.commonness >= c)
            progress(1)
            yield LinkResult(qid, query, ("alpha", "beta"), scored, (),
                             tuple(METHODS.get(method).rank(scored)), ((0, 5), (6, 10)))

    def candidates(self, queries: Mapping[str, str], progress) -> Iterable[tuple[str, list[Candidate]]]:
        self.detected += 1
        for qid in queries:
            progress(1)
            session_zero = qid.startswith("s0")  # its right entity: a KB alias, rare on the web
            yield qid, [Candidate(ALPHA, right(qid), 0.05 if session_zero else 0.3, session_zero),
                        Candidate(BETA, wrong(qid), 0.3, True)]


CONFIG = """
name = "synthetic"
index = "index"
surface_forms = "sf.db"
queries = "queries.json"

[crossval]
folds = 3
seed = 7

[interpretation_finding]
qrels = "qrels-elq.txt"
metric = "strict.F"
baseline = "TopRanked-CMNS"

[[interpretation_finding.methods]]
method = "cmns"
finder = "top-ranked"

[[interpretation_finding.methods]]
method = "cmns"
commonness_threshold = 0
gif_threshold = [0.2, 0.5, 0.8]

[semantic_mapping]
qrels = "qrels-er.txt"
baseline = "MLM"

[[semantic_mapping.methods]]
method = "mlm"

[[semantic_mapping.methods]]
method = "cmns"
commonness_threshold = [0.1, 0.5]

[mention_detection]
commonness_threshold = 0.1
"""


@pytest.fixture()
def setting(tmp_path: Path) -> Path:
    """The experiment folder: config, queries and qrels."""
    (tmp_path / "queries.json").write_text(json.dumps({q: "alpha beta" for q in QIDS}))
    (tmp_path / "qrels-elq.txt").write_text(
        "".join(f"{q}\t1\t{right(q)}\n" if has_gold(q) else f"{q}\n" for q in QIDS))
    (tmp_path / "qrels-er.txt").write_text(
        "".join(f"{q}\tQ0\t{right(q)}\t1\n" for q in QIDS if has_gold(q)))
    (tmp_path / "experiment.toml").write_text(CONFIG)
    return tmp_path / "experiment.toml"


def test_best_threshold_known_in_advance(setting: Path, tmp_path: Path) -> None:
    result = run_experiment(setting, tmp_path / "out", backend=FakeBackend(), progress=False)
    gif = result.method("if", "GIF-CMNS")
    assert [c.setting for c in gif.choices] == [Setting(0.0, 0.5)] * 3
    assert [gif.sweep[Setting(0.0, s)]["strict.F"] for s in (0.2, 0.5, 0.8)] == [
        {q: 0.0 for q in QIDS}, {q: 1.0 for q in QIDS},
        {q: 0.0 if has_gold(q) else 1.0 for q in QIDS}]
    assert gif.mean("strict.F") == 1.0 and gif.mean("lean.F") == 1.0
    top = result.method("if", "TopRanked-CMNS")
    assert top.per_query["strict.F"] == {q: 1.0 if has_gold(q) else 0.0 for q in QIDS}
    assert [c.setting for c in top.choices] == [Setting(0.1, None)] * 3
    # Semantic mapping: CMNS ranks the right entity first at any c; MLM ranks it second.
    cmns, mlm = result.method("sm", "CMNS"), result.method("sm", "MLM")
    assert cmns.mean("map") == 1.0 and mlm.mean("map") == 0.5 and mlm.mean("success@1") == 0.0
    assert [c.setting for c in cmns.choices] == [Setting(0.1, None)] * 3  # a tie: first listed
    assert {s: r.recall for s, r in result.mention_recall.items()} == {"KB": 0.2, "Web": 0.8, "KB+Web": 1.0}
    assert len(result.folds) == 3


def test_outputs(setting: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_experiment(setting, out, backend=FakeBackend(), progress=False)
    names = sorted(p.name for p in (out / "runs" / "GIF-CMNS").iterdir())
    assert [re.sub(r"\.[0-9a-f]{16}\.elq$", "", name) for name in names] == [
        "c0_s0.2", "c0_s0.5", "c0_s0.8", "cross-validated.elq"]
    lines = (out / "runs" / "GIF-CMNS" / "cross-validated.elq").read_text().splitlines()
    assert [line.split("\t") for line in lines[:2]] == [
        ["s0_1", number(0.6), right("s0_1")], ["s0_2", number(0.6 + 0.0125), right("s0_2")]]
    assert lines[-1] == "s5_2"
    assert (out / "runs" / "CMNS" / "cross-validated.trec").read_text().splitlines()[0] == (
        f"s0_1 Q0 {right('s0_1')} 1 {number(0.6)} CMNS")
    parameters = (out / "parameters.tsv").read_text().splitlines()
    assert parameters[0] == "task\tmethod\tfold\tc\ts\tparams\ttrain_score"
    assert "if\tGIF-CMNS\t0\t0\t0.5\t\t1" in parameters
    per_query = (out / "per_query.tsv").read_text().splitlines()
    assert per_query[0] == "task\tmethod\tqid\tmetric\tvalue"
    assert "if\tGIF-CMNS\ts0_1\tstrict.F\t1" in per_query
    assert len(per_query) == 1 + len(result.rows())
    folds = (out / "folds.tsv").read_text().splitlines()
    assert len(folds) == 1 + len(QIDS)
    report = (out / "results.md").read_text()
    assert report == result.report
    assert "| GIF-CMNS | 1.0000 | 1.0000 | 1.0000 | 1.0000 | 1.0000 | 1.0000 |" in report  # p = 0.17
    assert "| CMNS | 1.0000‡ | 1.0000‡ | 1.0000‡ |" in report
    assert "| GIF-CMNS | c=0 s=0.5 (3) |" in report
    assert not list(out.rglob("*.tmp"))
    summary = {(r["task"], r["method"], r["metric"]): r for r in result.summary()}
    assert summary[("sm", "MLM", "map")]["p_value"] is None
    assert summary[("sm", "CMNS", "map")]["p_value"] < 0.01


def test_rerun_reuses_finished_runs(setting: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_experiment(setting, out, backend=FakeBackend(), progress=False)
    again = FakeBackend()
    second = run_experiment(setting, out, backend=again, progress=False)
    assert again.linked == [] and again.detected == 0
    assert second.report == first.report
    # A new score threshold reuses the scored triples: no linking, one new run file.
    setting.write_text(CONFIG.replace("[0.2, 0.5, 0.8]", "[0.2, 0.5, 0.55, 0.8]"))
    third = FakeBackend()
    result = run_experiment(setting, out, backend=third, progress=False)
    assert third.linked == []
    assert len(list((out / "runs" / "GIF-CMNS").glob("c0_s0.55.*.elq"))) == 1
    assert [c.setting for c in result.method("if", "GIF-CMNS").choices] == [Setting(0.0, 0.5)] * 3
    # Other queries change every hash.
    queries = json.loads((tmp_path / "queries.json").read_text())
    del queries["s0_1"]
    (tmp_path / "queries.json").write_text(json.dumps(queries))
    fourth = FakeBackend()
    run_experiment(setting, out, backend=fourth, progress=False)
    assert sorted(fourth.linked) == [("cmns", 0.0, 11), ("cmns", 0.1, 11), ("cmns", 0.5, 11),
                                     ("mlm", 0.0, 11)]


def test_leave_one_out(setting: Path, tmp_path: Path) -> None:
    setting.write_text(CONFIG.replace("folds = 3\nseed = 7", 'scheme = "leave-one-out"'))
    result = run_experiment(setting, tmp_path / "out", backend=FakeBackend(), progress=False)
    assert [f.test for f in result.folds] == [(q,) for q in sorted(QIDS)]
    assert result.method("if", "GIF-CMNS").mean("strict.F") == 1.0
    assert "leave-one-out" in result.report


def test_config_errors_name_the_key(setting: Path, tmp_path: Path, capsys) -> None:
    setting.write_text(CONFIG.replace("gif_threshold = [0.2, 0.5, 0.8]", "gif_threshold = 'x'"))
    assert run([register], prog="elquery", argv=["experiment", str(setting), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "interpretation_finding.methods[1].gif_threshold: expected int or float or list" in err
    setting.write_text(CONFIG.replace('baseline = "MLM"', 'baseline = "BM25"'))
    with pytest.raises(Exception, match=r"semantic_mapping\.baseline: 'BM25' is not a method label"):
        load_config(setting)


def test_changed_code_never_reuses_cached_results(setting: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache keys cover the code: after a change to a scoring module, everything is recomputed."""
    from elquery.experiments import sweep

    sources = {f"{p.parent.name}/{p.name}" for p in sweep.code_sources()}
    assert {"methods/mlmcg.py", "linking/gif.py", "retrieval/scoring.py", "indexing/normalize.py"} <= sources
    out = tmp_path / "out"
    run_experiment(setting, out, backend=FakeBackend(), progress=False)
    monkeypatch.setattr(sweep, "code_version", lambda: "0.1.0+a-fixed-scorer")
    after_fix = FakeBackend()
    run_experiment(setting, out, backend=after_fix, progress=False)
    assert sorted(after_fix.linked) == [("cmns", 0.0, 12), ("cmns", 0.1, 12), ("cmns", 0.5, 12), ("mlm", 0.0, 12)]


def test_an_interrupted_experiment_leaves_only_finished_files_and_resumes(setting: Path, tmp_path: Path) -> None:
    """Ctrl-C in the middle: no half-written file and no results are left, only the finished cache
    entries, which the next run of the same config resumes from (documented behaviour)."""

    class Interrupted(FakeBackend):
        def link(self, method, c, fixed, queries, progress):  # type: ignore[no-untyped-def]
            if len(self.linked) == 2:
                raise KeyboardInterrupt
            yield from super().link(method, c, fixed, queries, progress)

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(setting, out, backend=Interrupted(), progress=False)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert not any(name.endswith(".tmp") or "/." in name or name.startswith(".") for name in files)
    assert "results.md" not in files
    finished = [name for name in files if name.startswith("cache/")]
    resumed = FakeBackend()
    again = run_experiment(setting, out, backend=resumed, progress=False)
    assert len(finished) == 2 and len(resumed.linked) == 4 - len(finished)  # finished (method, c) caches reused
    assert again.report == run_experiment(setting, tmp_path / "fresh", backend=FakeBackend(), progress=False).report


def test_the_tuned_thresholds_are_written_for_link(setting: Path, tmp_path: Path) -> None:
    """params.json holds the GIF method's (c, s) with the best strict F over all 12 queries (s = 0.5,
    F = 1 on every query); TopRanked and semantic mapping tune no GIF threshold and are left out."""
    out = tmp_path / "out"
    result = run_experiment(setting, out, backend=FakeBackend(), progress=False)
    params = load_params(out / "params.json")
    assert params == result.params
    assert params.methods == {"cmns": MethodParams(0.0, 0.5, tuned={
        "label": "GIF-CMNS", "metric": "strict.F", "value": 1.0, "queries": len(QIDS)})}
    assert params.experiment == {"config": str(setting), "name": "synthetic", "task": "interpretation_finding",
                                 "metric": "strict.F"}
    assert "| cmns | 0 | 0.5 | GIF-CMNS | strict.F 1.0000 |" in result.report
    # without a GIF or TAGME method in interpretation finding, there is nothing to tune
    setting.write_text(CONFIG.replace('commonness_threshold = 0\ngif_threshold = [0.2, 0.5, 0.8]', 'finder = "top-ranked"\nlabel = "Top"'))
    again = run_experiment(setting, tmp_path / "out2", backend=FakeBackend(), progress=False)
    assert again.params is None and not (tmp_path / "out2" / "params.json").exists()
