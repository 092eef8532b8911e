"""A tiny experiment end to end against the real DBpedia sample (98 entities) and a subset of the
Y-ERD queries: every artefact built here, two thresholds per swept method, the command line, and
run files that agree with the linkers (methods.md §7-8). The sample shares no entity with the
Y-ERD ground truth, so the figures are tiny; the point is that the whole path runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elquery.base import run
from elquery.evaluation.interpretation import evaluate_interpretations
from elquery.evaluation.readers import read_elq
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.surface_forms.build import BuildOptions, build_store
from elquery.indexing.tagme.build import build_tagme
from elquery.experiments import run_experiment
from elquery.experiments.cli import register
from elquery.experiments.sweep import Setting
from elquery.linking.linker import Linker
from elquery.linking.output import write_results
from elquery.linking.tagme import TagmeLinker

QUERIES = 30


@pytest.fixture(scope="session")
def sample_artefacts(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Entity index, surface forms (KB aliases and anchors) and TAGME artefact of the sample."""
    root = tmp_path_factory.mktemp("experiment-artefacts")
    build_dbpedia_index([dbpedia_sample], root / "index")
    build_store(root / "sf.db", BuildOptions(dumps=(dbpedia_sample,), anchors=True, workers=1, progress=False))
    build_tagme([dbpedia_sample], root / "tagme")
    return {"index": root / "index", "surface_forms": root / "sf.db", "tagme": root / "tagme"}


@pytest.fixture()
def experiment(sample_artefacts: dict[str, Path], elq_data: Path, tmp_path: Path) -> Path:
    queries = json.loads((elq_data / "y-erd" / "queries.json").read_text())
    subset = dict(sorted(queries.items())[:QUERIES])
    (tmp_path / "queries.json").write_text(json.dumps(subset))
    y_erd = elq_data / "y-erd"
    config = tmp_path / "tiny.toml"
    config.write_text(f"""
name = "Y-ERD (first {QUERIES} queries, DBpedia sample)"
index = "{sample_artefacts['index']}"
surface_forms = "{sample_artefacts['surface_forms']}"
tagme = "{sample_artefacts['tagme']}"
queries = "queries.json"
[crossval]
folds = 3
[interpretation_finding]
qrels = "{y_erd / 'qrels-elq.txt'}"
baseline = "TAGME"
[[interpretation_finding.methods]]
method = "tagme"
rho_threshold = [0.05, 0.2]
[[interpretation_finding.methods]]
method = "mlmcg"
gif_threshold = [0.5, 2]
[[interpretation_finding.methods]]
method = "cmns"
finder = "top-ranked"
[semantic_mapping]
qrels = "{y_erd / 'qrels-er.txt'}"
baseline = "CMNS"
[[semantic_mapping.methods]]
method = "cmns"
[[semantic_mapping.methods]]
method = "mlmcg"
[mention_detection]
""")
    return config


def test_tiny_experiment_end_to_end(experiment: Path, sample_artefacts: dict[str, Path], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert run([register], prog="elquery", argv=["experiment", str(experiment), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed == (out / "results.md").read_text()
    assert "| method | strict P | strict R | strict F | lean P | lean R | lean F |" in printed
    assert "| method | MAP | S@1 | MRR |" in printed and "| KB+Web |" in printed
    for label, sweep in (("TAGME", 2), ("GIF-MLMcg", 2), ("TopRanked-CMNS", 1), ("CMNS", 1), ("MLMcg", 1)):
        files = sorted(p.name for p in (out / "runs" / label).iterdir())
        assert len(files) == sweep + 1 and any(f.startswith("cross-validated.") for f in files)
    assert len((out / "parameters.tsv").read_text().splitlines()) == 1 + 3 * 5
    assert len((out / "folds.tsv").read_text().splitlines()) == 1 + QUERIES

    # Re-running reuses every run: the result is the same and no file is rewritten.
    cache = {p: p.stat().st_mtime_ns for p in (out / "cache").iterdir()} | {
        p: p.stat().st_mtime_ns for p in (out / "runs").rglob("*.*.elq")}
    again = run_experiment(experiment, out, progress=False)
    assert again.report == printed
    assert {p: p.stat().st_mtime_ns for p in cache} == cache

    # The swept runs are what the linkers write with the same settings; the cross-validated run
    # scores as reported.
    queries = json.loads((tmp_path / "queries.json").read_text())
    gif = again.method("if", "GIF-MLMcg")
    for setting, path in gif.runs.items():
        linker = Linker(sample_artefacts["index"], sample_artefacts["surface_forms"], "mlmcg",
                        commonness_threshold=setting.c, gif_threshold=setting.s)
        direct = tmp_path / f"direct-{setting.slug}.elq"
        write_results(linker.link_many(sorted(queries.items())), direct, "elq", "direct")
        assert path.read_text() == direct.read_text()
    tagme = TagmeLinker(sample_artefacts["tagme"], rho_na=0.05)
    tagme_run = read_elq(again.method("if", "TAGME").runs[Setting(None, 0.05)])
    assert {q: tagme_run[q] for q in queries} == {
        q: frozenset(i.entities for i in tagme.link(text)) for q, text in queries.items()}
    tagme.close()
    spec = again.config.interpretation_finding
    assert spec is not None
    qrels = {q: i for q, i in read_elq(spec.qrels).items() if q in queries}
    scored = evaluate_interpretations(qrels, read_elq(gif.run))
    assert scored.strict.f == pytest.approx(gif.mean("strict.F"))
    assert scored.lean.p == pytest.approx(gif.mean("lean.P"))


def test_whitelist_post_filters_tagme(experiment: Path, sample_artefacts: dict[str, Path], tmp_path: Path) -> None:
    """With a whitelist, TAGME's output is post-filtered with it, as GIF's candidates are."""
    texts = ["british airways flights to rome", "rome italy", "the city of rome in italy and british airways"]
    queries = {q: texts[i % len(texts)] for i, q in enumerate(json.loads((tmp_path / "queries.json").read_text()))}
    (tmp_path / "queries.json").write_text(json.dumps(queries))
    with TagmeLinker(sample_artefacts["tagme"], rho_na=0.0) as tagme:
        annotations = {q: tagme.annotate(text) for q, text in queries.items()}
    linked = sorted({t.entity for found in annotations.values() for t in found})
    assert len(linked) >= 2
    allowed = set(linked[1:])  # drop one entity TAGME does link
    whitelist = tmp_path / "whitelist.txt"
    whitelist.write_text("".join(f"{e}\n" for e in sorted(allowed)))
    experiment.write_text(experiment.read_text().replace('queries = "queries.json"',
                                                         f'queries = "queries.json"\nwhitelist = "{whitelist}"'))
    result = run_experiment(experiment, tmp_path / "out", progress=False)
    run = read_elq(result.method("if", "TAGME").runs[Setting(None, 0.05)])
    expected = {q: frozenset(i.entities for i in TagmeLinker.interpretations(
        [t for t in found if t.entity in allowed and t.score >= 0.05])) for q, found in annotations.items()}
    assert {q: run[q] for q in queries} == expected
    assert all(e in allowed for interpretations in run.values() for i in interpretations for e in i)
