"""Entity-retrieval experiments (DBpedia-Entity v2 layout): config parsing against the retrieval
model registry, given fold files, per-category NDCG@10 / NDCG@100 / MAP@100 against an independent
computation on a hand-made ranking, significance against scipy, the table layout, and
cross-validation per category with a stand-in ranker (no index, no JVM)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import pytest
from scipy import stats

from elquery.base import ElqueryError, run
from elquery.experiments import load_config, run_experiment
from elquery.experiments.cli import register
from elquery.experiments.config import GIVEN, Category, RetrievalTaskSpec
from elquery.experiments.folds import given_folds
from elquery.experiments.sweep import Setting, grid
from elquery.experiments.tables import category_columns
from elquery.retrieval.models import BM25, DEFAULT_K, MODELS
from elquery.retrieval.searcher import RankedEntity
from conftest import data_root, require_data  # tests/conftest.py, on the path as pytest loads it

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"

# Two categories of 6 queries: "Alpha" (ids A-1..A-6) and "Beta" (B_x-1..B_x-3, B_y-1..B_y-3).
ALPHA = [f"A-{i}" for i in range(1, 7)]
BETA = [f"B_{p}-{i}" for p in "xy" for i in range(1, 4)]
QIDS = ALPHA + BETA
# Graded qrels: per query two relevant entities (grades 2 and 1), one judged non-relevant, and the
# query "B_y-3" has a third relevant entity the rankings never return.
QRELS = {q: {f"{q}:good": 2, f"{q}:fair": 1, f"{q}:bad": 0} for q in QIDS}
QRELS["B_y-3"]["B_y-3:missed"] = 1
NOISE = [f"n{i}" for i in range(12)]


def ranking(qid: str, k1: float, k: int) -> list[str]:
    """The stand-in ranking of ``qid``: with k1 = 1 the Alpha queries find their entities at
    rank 1 and at rank 3, 4 or 5 and the Beta queries at ranks 11 and 12 (beyond NDCG@10); with
    k1 = 2 the other way round. Query A-6 finds nothing with k1 = 2 (an empty ranking)."""
    good_first = (qid in ALPHA) == (k1 == 1.0)
    if qid == "A-6" and k1 == 2.0:
        return []
    if good_first:
        gap = QIDS.index(qid) % 3 + 1
        entities = [f"{qid}:good", *NOISE[:gap], f"{qid}:fair", *NOISE[gap:]]
    else:
        entities = [*NOISE[:10], f"{qid}:good", f"{qid}:fair", f"{qid}:bad", *NOISE[10:]]
    return entities[:k]


class FakeRanker:
    """Rankings of :func:`ranking` for a BM25 model's k1 (b shifts nothing)."""

    def __init__(self) -> None:
        self.ranked: list[tuple[str, int]] = []

    def identity(self) -> object:
        return ["fake-index"]

    def rank(self, model: BM25, queries: Mapping[str, str], k: int, progress, links=None):  # type: ignore[no-untyped-def]
        self.ranked.append((repr(model), k))
        for qid in queries:
            progress(1)
            yield qid, [RankedEntity(r, e, 1.0 / r) for r, e in enumerate(ranking(qid, model.k1, k), 1)]


# --- an independent computation of the metrics (trec_eval's definitions) ----------------------

def ndcg(qid: str, entities: list[str], k: int) -> float:
    """NDCG@k with the grade as gain and log2(rank + 1) discount (trec_eval ndcg_cut)."""
    gains = [QRELS[qid].get(e, 0) for e in entities[:k]]
    dcg = sum(g / math.log2(r + 1) for r, g in enumerate(gains, 1))
    ideal = sorted(QRELS[qid].values(), reverse=True)[:k]
    return dcg / sum(g / math.log2(r + 1) for r, g in enumerate(ideal, 1))


def average_precision(qid: str, entities: list[str], k: int) -> float:
    """AP of the ranking cut at k, over all relevant entities (trec_eval map_cut_k)."""
    relevant = {e for e, g in QRELS[qid].items() if g >= 1}
    found, total = 0, 0.0
    for rank, entity in enumerate(entities[:k], 1):
        if entity in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


METRICS = {"ndcg@10": lambda q, e: ndcg(q, e, 10), "ndcg@100": lambda q, e: ndcg(q, e, 100),
           "map@100": lambda q, e: average_precision(q, e, 100)}


def folds_file(path: Path, groups: list[list[str]]) -> Path:
    """A fold file in DBpedia-Entity v2's format: fold i tests groups[i], trains on the rest."""
    everything = [q for group in groups for q in group]
    path.write_text(json.dumps({str(i): {"training": [q for q in everything if q not in group], "testing": group}
                                for i, group in enumerate(groups)}))
    return path


CONFIG = """
name = "synthetic retrieval"
index = "index"
queries = "queries.tsv"

[crossval]
scheme = "given"
files = ["alpha.json", "beta.json"]

[entity_retrieval]
qrels = "qrels.txt"
metric = "ndcg@10"
depth = 20
baseline = "BM25"

[entity_retrieval.categories]
"Alpha" = ["A"]
"Beta" = ["B_x", "B_y"]

[[entity_retrieval.methods]]
model = "bm25"
label = "BM25"

[[entity_retrieval.methods]]
model = "bm25"
label = "BM25 tuned"
params = { k1 = [1, 2], b = 0.5 }

[[entity_retrieval.methods]]
run = "given.trec"
label = "Given"
"""


@pytest.fixture()
def setting(tmp_path: Path) -> Path:
    (tmp_path / "queries.tsv").write_text("".join(f"{q}\tquery {q}\n" for q in QIDS))
    (tmp_path / "qrels.txt").write_text("".join(f"{q}\tQ0\t{e}\t{g}\n" for q in QIDS for e, g in QRELS[q].items()))
    folds_file(tmp_path / "alpha.json", [ALPHA[0:2], ALPHA[2:4], ALPHA[4:6]])
    folds_file(tmp_path / "beta.json", [BETA[0:3], BETA[3:6]])
    (tmp_path / "given.trec").write_text("".join(
        f"{q} Q0 {e} {r} {1 / r} given\n" for q in QIDS for r, e in enumerate(ranking(q, 1.0, 20), 1)))
    (tmp_path / "experiment.toml").write_text(CONFIG)
    return tmp_path / "experiment.toml"


@pytest.fixture(scope="session")
def dbpedia_entity() -> Path:
    """The DBpedia-Entity v2 collection (queries, graded qrels, folds)."""
    return require_data("dbpedia-entity-v2")


# --- config ----------------------------------------------------------------------------------

def test_config(setting: Path) -> None:
    config = load_config(setting)
    spec = config.entity_retrieval
    assert isinstance(spec, RetrievalTaskSpec)
    assert config.surface_forms is None and config.interpretation_finding is None
    assert config.crossval.scheme == GIVEN
    assert config.crossval.files == (setting.parent / "alpha.json", setting.parent / "beta.json")
    assert (spec.metric, spec.metrics, spec.depth, spec.baseline) == (
        "ndcg@10", ("ndcg@10", "ndcg@100", "map@100"), 20, "BM25")
    assert spec.categories == (Category("Alpha", ("A",)), Category("Beta", ("B_x", "B_y")))
    assert [m.label for m in spec.methods] == ["BM25", "BM25 tuned", "Given"]
    tuned = spec.methods[1]
    assert (tuned.method, tuned.params) == ("bm25", (("k1", ("1", "2")), ("b", ("0.5",))))
    assert grid(tuned) == [Setting(params=(("k1", "1"), ("b", "0.5"))), Setting(params=(("k1", "2"), ("b", "0.5")))]
    assert grid(spec.methods[0]) == [Setting()]
    assert spec.methods[2].run == setting.parent / "given.trec"
    assert [str(s) for s in grid(tuned)] == ["k1=1 b=0.5", "k1=2 b=0.5"]
    assert [s.slug for s in grid(tuned)] == ["k1-1_b-0.5", "k1-2_b-0.5"]


@pytest.mark.parametrize("model", sorted(MODELS.names()))
def test_every_model_of_the_registry_is_accepted(model: str, tmp_path: Path) -> None:
    path = tmp_path / "experiment.toml"
    links = 'links = "links.tsv"\n' if model.endswith("-elr") else ""  # the ELR models' linked entities
    path.write_text(f'index = "i"\nqueries = "q.tsv"\n[entity_retrieval]\nqrels = "r.txt"\n'
                    f'[[entity_retrieval.methods]]\nmodel = "{model}"\n{links}')
    method = load_config(path).entity_retrieval.methods[0]  # type: ignore[union-attr]
    assert (method.label, method.method, grid(method)) == (model, model, [Setting()])
    assert method.links == ((tmp_path / "links.tsv").resolve() if links else None)


@pytest.mark.parametrize(("old", "new", "message"), [
    ('model = "bm25"\nlabel = "BM25"', 'model = "bm99"\nlabel = "BM25"',
     r"entity_retrieval\.methods\[0\]\.model: unknown model 'bm99'; models are mlm, lm, "),
    ("b = 0.5", "b = [0.5, 2]", r"entity_retrieval\.methods\[1\]\.params: k1=1 b=2: bm25: b must be 0 <= b <= 1, got 2$"),
    ("b = 0.5", "b = -1", r"entity_retrieval\.methods\[1\]\.params: k1=1 b=-1: bm25: b must be 0 <= b <= 1, got -1$"),
    ("b = 0.5", "x = 0.5", r"entity_retrieval\.methods\[1\]\.params: k1=1 x=0\.5: bm25 has no parameter x; its "
                           r"parameters are field, k1, b$"),
    ("b = 0.5", "b = [0.5, 0.5]", r"methods\[1\]\.params\.b: a value is given twice"),
    ("b = 0.5", "b = []", r"methods\[1\]\.params\.b: expected a number, a string or a non-empty list"),
    ('run = "given.trec"', 'run = "given.trec"\nmodel = "bm25"', r"methods\[2\]\.model: give either model or run"),
    ('metric = "ndcg@10"', 'metric = "ndcg@x"', r"entity_retrieval\.metric: unknown metric"),
    ('metric = "ndcg@10"', 'metrics = []', r"entity_retrieval\.metrics: expected a list of distinct metric names"),
    ("depth = 20", "depth = 0", r"entity_retrieval\.depth: depth must be 1 <= depth <= 100000, got 0"),
    ('"Beta" = ["B_x", "B_y"]', '"Beta" = ["B_x", "A"]', r"categories\.Beta: prefix 'A' is in category 'Alpha' too"),
    ('"Beta" = ["B_x", "B_y"]', '"Beta" = ["B-x"]', r"categories\.Beta: expected a non-empty list of query id prefixes"),
    ('"Beta" = ["B_x", "B_y"]', '"Be:ta" = ["B_x"]', r"categories\.Be:ta: a category name holds no ':'"),
    ('files = ["alpha.json", "beta.json"]', "folds = 5", r"crossval\.folds: given takes its folds from the files"),
    ('files = ["alpha.json", "beta.json"]', "files = []", r"crossval\.files: expected a non-empty list of paths"),
    ('index = "index"\n', "", r"index: missing \(only an experiment that evaluates given runs goes without\)"),
    ('baseline = "BM25"', 'baseline = "BM26"', r"entity_retrieval\.baseline: 'BM26' is not a method label"),
    ('model = "bm25"\nlabel = "BM25 tuned"', 'model = "sdm-elr"\nlabel = "BM25 tuned"',
     r"entity_retrieval\.methods\[1\]\.model: sdm-elr needs links \(the queries' linked entities\)$"),
    ('label = "BM25"\n', 'label = "BM25"\nlinks = "given.trec"\n',
     r"entity_retrieval\.methods\[0\]\.links: links go with the ELR models \(sdm-elr, fsdm-elr, mlm-elr\), not bm25$"),
])
def test_errors_name_the_key(setting: Path, old: str, new: str, message: str) -> None:
    text = setting.read_text()
    assert old in text
    setting.write_text(text.replace(old, new))
    with pytest.raises(ElqueryError, match=message):
        load_config(setting)


def test_the_depth_defaults_to_the_k_of_every_ranking(setting: Path) -> None:
    """Without ``depth``, an experiment ranks as many entities per query as ``elquery rank`` and the
    service do without ``k`` (one DEFAULT_K)."""
    setting.write_text(setting.read_text().replace("depth = 20\n", ""))
    assert load_config(setting).entity_retrieval.depth == DEFAULT_K == 1000  # type: ignore[union-attr]


def test_expected_figures_of_entity_retrieval(setting: Path) -> None:
    setting.write_text(setting.read_text() + '[expected]\n"er/BM25/Alpha:ndcg@10" = 0.5\n')
    (figure,) = load_config(setting).expected
    assert (figure.task, figure.method, figure.metric) == ("er", "BM25", "Alpha:ndcg@10")


# --- folds ------------------------------------------------------------------------------------

def test_given_folds(tmp_path: Path) -> None:
    alpha = folds_file(tmp_path / "alpha.json", [ALPHA[0:2], ALPHA[2:4], ALPHA[4:6]])
    beta = folds_file(tmp_path / "beta.json", [BETA[0:3], BETA[3:6]])
    folds = given_folds([alpha, beta], QIDS)
    assert [f.index for f in folds] == [0, 1, 2, 3, 4]
    assert folds[0].test == ("A-1", "A-2") and folds[0].train == ("A-3", "A-4", "A-5", "A-6")
    assert folds[3].test == ("B_x-1", "B_x-2", "B_x-3") and folds[3].train == ("B_y-1", "B_y-2", "B_y-3")
    # restricted to the queries asked for: a fold left without a test query is dropped
    subset = given_folds([alpha, beta], ["A-1", "A-3", *BETA])
    assert [(f.train, f.test) for f in subset[:2]] == [(("A-3",), ("A-1",)), (("A-1",), ("A-3",))]
    assert len(subset) == 4


@pytest.mark.parametrize(("content", "message"), [
    ('{"0": {"training": ["A-1"], "testing": ["A-1", "A-2"]}}', "fold 0 trains on the query A-1 it tests"),
    ('{"0": {"training": [], "testing": ["A-1"]}, "1": {"training": [], "testing": ["A-1"]}}',
     "query A-1 is tested in .* too"),
    ('{"0": {"training": [], "testing": ["A-1"]}}', "1 queries are in no test fold of the fold files, e.g. A-2"),
    ('{"0": {"train": [], "testing": ["A-1"]}}', 'fold 0: expected {"training"'),
    ('{"0": {"training": [1], "testing": ["A-1"]}}', 'fold 0: expected {"training"'),
    ("[]", "expected a JSON object of folds"),
    ("{", "not a JSON fold file"),
])
def test_malformed_fold_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "folds.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        given_folds([path], ["A-1", "A-2"])


def test_missing_fold_file_is_a_one_line_error(setting: Path, tmp_path: Path) -> None:
    (setting.parent / "beta.json").unlink()
    with pytest.raises(ElqueryError, match=r"beta\.json: no such file \(crossval\.files of experiment\.toml\)"):
        run_experiment(setting, tmp_path / "out", ranker=FakeRanker(), progress=False)
    assert not (tmp_path / "out").exists()


def test_dbpedia_entity_v2_folds(dbpedia_entity: Path) -> None:
    """The collection's per-category fold files cover each of its 467 queries in exactly one test
    fold and train only on queries of the same category; all_queries.json covers them too."""
    qids = [line.split("\t")[0] for line in (dbpedia_entity / "queries-v2.txt").read_text().splitlines()]
    files = ["SemSearch-ES", "INEX-LD", "ListSearch", "QALD2"]
    folds = given_folds([dbpedia_entity / "folds" / f"{name}.json" for name in files], qids)
    assert len(folds) == 20
    assert sorted(q for f in folds for q in f.test) == sorted(qids)
    for fold in folds:
        category = {q.partition("-")[0].removeprefix("SemSearch_").split("_")[0] for q in fold.test}
        assert {q.partition("-")[0].removeprefix("SemSearch_").split("_")[0] for q in fold.train} <= category | {
            "LS", "INEX", "TREC"}
    assert [len(f.test) for f in folds[:5]] == [22, 22, 23, 23, 23]
    assert sum(len(f.test) for f in folds[5:10]) == 99  # INEX-LD; its fold 1 trains on 78, not 79
    everything = given_folds([dbpedia_entity / "folds" / "all_queries.json"], qids)
    assert [len(f.test) for f in everything] == [93, 94, 94, 94, 92]


# --- the experiment ---------------------------------------------------------------------------

def test_per_category_figures_against_an_independent_computation(setting: Path, tmp_path: Path) -> None:
    ranker = FakeRanker()
    result = run_experiment(setting, tmp_path / "out", ranker=ranker, progress=False)
    assert ranker.ranked == [(repr(BM25()), 20), (repr(BM25(k1=1.0, b=0.5)), 20), (repr(BM25(k1=2.0, b=0.5)), 20)]
    base, tuned, given = (result.method("er", label) for label in ("BM25", "BM25 tuned", "Given"))
    # BM25 (k1 = 0.9): neither 1 nor 2, so good first only for Beta; the tuned one chooses
    # k1 = 1 on the Alpha folds and k1 = 2 on the Beta folds: every query good first.
    base_rankings = {q: ranking(q, 0.9, 20) for q in QIDS}
    tuned_rankings = {q: ranking(q, 1.0 if q in ALPHA else 2.0, 20) for q in QIDS}
    for method, rankings in ((base, base_rankings), (tuned, tuned_rankings), (given, {q: ranking(q, 1.0, 20) for q in QIDS})):
        for metric, compute in METRICS.items():
            expected = {q: compute(q, rankings[q]) for q in QIDS}
            assert method.per_query[metric] == pytest.approx(expected, abs=1e-12)
            for name, members in (("Alpha", ALPHA), ("Beta", BETA)):
                assert method.per_query[f"{name}:{metric}"] == pytest.approx(
                    {q: expected[q] for q in members}, abs=1e-12)
    assert [str(c.setting) for c in tuned.choices] == ["k1=1 b=0.5"] * 3 + ["k1=2 b=0.5"] * 2
    assert tuned.per_query["Alpha:ndcg@10"]["A-6"] == pytest.approx(ndcg("A-6", tuned_rankings["A-6"], 10))
    # the summary: means and the paired t-test of scipy against the baseline, per group
    summary = {(r["method"], r["metric"]): r for r in result.summary()}
    for metric in ("ndcg@10", "Alpha:ndcg@10", "Alpha:map@100", "map@100"):
        qids = sorted(tuned.per_query[metric])
        expected_p = stats.ttest_rel([tuned.per_query[metric][q] for q in qids],
                                     [base.per_query[metric][q] for q in qids]).pvalue
        assert summary[("BM25 tuned", metric)]["p_value"] == pytest.approx(expected_p, rel=1e-12)
        assert summary[("BM25 tuned", metric)]["value"] == pytest.approx(
            sum(tuned.per_query[metric].values()) / len(qids), abs=1e-15)
    assert summary[("BM25", "ndcg@10")]["p_value"] is None
    assert summary[("BM25 tuned", "Beta:ndcg@10")]["p_value"] == 1.0  # the same rankings
    assert summary[("Given", "Beta:ndcg@10")]["p_value"] < 0.01  # worse on every Beta query


def test_table_in_the_layout_of_the_paper(setting: Path, tmp_path: Path) -> None:
    result = run_experiment(setting, tmp_path / "out", ranker=FakeRanker(), progress=False)
    lines = result.report.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| Model |"))
    assert lines[header] == ("| Model | Alpha NDCG@10 | Alpha NDCG@100 | Alpha MAP@100 | Beta NDCG@10 | "
                             "Beta NDCG@100 | Beta MAP@100 | Total NDCG@10 | Total NDCG@100 | Total MAP@100 |")
    assert lines[header + 1] == "|---|" + "---:|" * 9
    tuned = result.method("er", "BM25 tuned").per_query
    cells = lines[header + 3].split(" | ")
    assert cells[0] == "| BM25 tuned"
    assert cells[1] == f"{sum(tuned['Alpha:ndcg@10'].values()) / 6:.4f}".lstrip("0") + "‡"
    assert cells[4] == f"{sum(tuned['Beta:ndcg@10'].values()) / 6:.4f}".lstrip("0")  # p = 1: no marker
    assert [line.split(" | ")[0] for line in lines[header + 2:header + 5]] == ["| BM25", "| BM25 tuned", "| Given"]
    assert "Queries: Alpha 6, Beta 6, Total 12. Top 20 entities per query." in result.report
    assert "the 5 folds of `alpha.json`, `beta.json`" in result.report
    assert "| er | BM25 tuned | k1=1 b=0.5 (3), k1=2 b=0.5 (2) |" in result.report
    out = tmp_path / "out"
    assert (out / "results.md").read_text() == result.report
    parameters = (out / "parameters.tsv").read_text().splitlines()
    assert parameters[0] == "task\tmethod\tfold\tc\ts\tparams\ttrain_score"
    assert parameters[6].startswith("er\tBM25 tuned\t0\t\t\tk1=1 b=0.5\t")
    runs = sorted(p.name.rsplit(".", 2)[0] for p in (out / "runs" / "BM25 tuned").iterdir())
    assert runs == ["cross-validated", "k1-1_b-0.5", "k1-2_b-0.5"]  # cross-validated.trec: no hash
    first = (out / "runs" / "BM25 tuned" / "cross-validated.trec").read_text().splitlines()[0]
    assert first == "A-1 Q0 A-1:good 1 1.0 BM25_tuned"
    per_query = (out / "per_query.tsv").read_text()
    assert f"er\tBM25 tuned\tA-1\tAlpha:ndcg@10\t{ndcg('A-1', ranking('A-1', 1.0, 20), 10):.10g}\n" in per_query


def test_category_columns() -> None:
    columns = category_columns(["X", "Y"], ["ndcg@10", "map@100"])
    assert [(c.header, c.metric) for c in columns] == [
        ("X NDCG@10", "X:ndcg@10"), ("X MAP@100", "X:map@100"), ("Y NDCG@10", "Y:ndcg@10"),
        ("Y MAP@100", "Y:map@100"), ("Total NDCG@10", "ndcg@10"), ("Total MAP@100", "map@100")]


def test_runs_are_reused(setting: Path, tmp_path: Path) -> None:
    first = run_experiment(setting, tmp_path / "out", ranker=FakeRanker(), progress=False)
    again = FakeRanker()
    second = run_experiment(setting, tmp_path / "out", ranker=again, progress=False)
    assert again.ranked == [] and second.report == first.report
    setting.write_text(setting.read_text().replace("depth = 20", "depth = 15"))
    run_experiment(setting, tmp_path / "out", ranker=again, progress=False)
    assert [k for _, k in again.ranked] == [15, 15, 15]


def test_a_query_in_no_category_is_an_error(setting: Path, tmp_path: Path) -> None:
    setting.write_text(setting.read_text().replace('"Beta" = ["B_x", "B_y"]', '"Beta" = ["B_x"]'))
    with pytest.raises(ElqueryError, match=r"query B_y-1 is in no category of \[entity_retrieval\.categories\]"):
        run_experiment(setting, tmp_path / "out", ranker=FakeRanker(), progress=False)


# --- the shipped config on the real DBpedia sample ----------------------------------------------

def test_sample_config_reproduces_its_pinned_figures(dbpedia_sample: Path, dbpedia_entity: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """sample-dbpedia-entity.toml end to end: the index of the real sample (with its relations) and
    its surface forms built here under the names `elquery build` writes, the links of the 467
    queries computed by the experiment with elquery's CMNS linker as its header says, every model
    ranked over them, `--check` OK on every pinned figure (the reproduction matrix, pinned with
    the links file of `elquery link --method cmns --format jsonl`), and the paper's layout with
    its four categories."""
    from elquery.indexing.artefacts import ArtefactPaths
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.surface_forms.build import BuildOptions, build_store

    sample = ArtefactPaths.of(tmp_path / "sample")
    build_dbpedia_index([dbpedia_sample], sample.index, relations=True)
    build_store(sample.surface_forms, BuildOptions((dbpedia_sample,), anchors=True, workers=2, progress=False))
    monkeypatch.setenv("ELQUERY_SAMPLE", str(tmp_path / "sample"))
    monkeypatch.setenv("ELQUERY_DATA", str(data_root()))
    config = CONFIGS / "sample-dbpedia-entity.toml"
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out"), "--check"]) == 0
    out = capsys.readouterr().out
    checks = [line for line in out.splitlines() if line.startswith(("OK", "FAIL"))]
    assert len(checks) == len(load_config(config).expected) == 77
    assert all(line.startswith("OK   ") for line in checks), [c for c in checks if not c.startswith("OK")]
    assert "OK   er/BM25/ndcg@10: 0.010485 (expected 0.010485 ± 1e-06)" in checks
    assert "Queries: SemSearch ES 113, INEX-LD 99, ListSearch 115, QALD-2 140, Total 467." in out
    assert "| Model | SemSearch ES NDCG@10 | SemSearch ES NDCG@100 | SemSearch ES MAP@100 | INEX-LD NDCG@10 |" in out
    assert [line.split(" | ")[0] for line in out.splitlines() if line.startswith("| ") and " | " in line][1:9] == [
        "| BM25", "| LM", "| LM-Dirichlet", "| MLM", "| BM25F", "| PRMS", "| SDM", "| FSDM"]
    assert [line.split(" | ")[0] for line in out.splitlines() if line.startswith("| ") and " | " in line][9:12] == [
        "| MLM+ELR", "| SDM+ELR", "| FSDM+ELR"]
    assert "cross-validation: the 20 folds of `SemSearch-ES.json`, `INEX-LD.json`, `ListSearch.json`, `QALD2.json`" in out
    # --artefacts: the same folder, named on the command line (its links and runs are reused)
    monkeypatch.delenv("ELQUERY_SAMPLE")
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out"), "--check",
                                       "--artefacts", str(tmp_path / "sample")]) == 0
    assert capsys.readouterr().out.count("\nOK   ") == 77


@pytest.mark.parametrize("name", ["dbpedia-entity", "dbpedia-entity-published", "sample-dbpedia-entity"])
def test_shipped_retrieval_configs(name: str, dbpedia_entity: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shipped DBpedia-Entity v2 config reads the collection's files, names models of the
    registry, and expects only figures it reports (a method label, a metric or CATEGORY:METRIC)."""
    for variable in ("ELQUERY_INDEX", "ELQUERY_SAMPLE", "ELQUERY_PUBLISHED_RUNS"):
        monkeypatch.setenv(variable, f"/artefacts/{variable.lower()}")
    monkeypatch.setenv("ELQUERY_DATA", str(dbpedia_entity.parent))
    config = load_config(CONFIGS / f"{name}.toml")
    spec = config.entity_retrieval
    assert spec is not None and spec.qrels.resolve() == (dbpedia_entity / "qrels-v2.txt").resolve() and spec.qrels.exists()
    assert config.queries.resolve() == (dbpedia_entity / "queries-v2_stopped.txt").resolve()
    assert all(path.exists() for path in config.crossval.files)
    assert [c.name for c in spec.categories] == ["SemSearch ES", "INEX-LD", "ListSearch", "QALD-2"]
    assert all(m.method in MODELS or m.run is not None for m in spec.methods)
    reported = {*spec.metrics, *(f"{c.name}:{m}" for c in spec.categories for m in spec.metrics)}
    labels = {m.label for m in spec.methods}
    assert all(f.task == "er" and f.method in labels and f.metric in reported for f in config.expected)
    assert len(config.expected) == {"dbpedia-entity": 0, "dbpedia-entity-published": 120,
                                    "sample-dbpedia-entity": 77}[name]


def test_searcher_backend_ranks_the_elr_models_with_the_links_file(tmp_path: Path) -> None:
    """An ELR method's ``links`` file reaches the ranking: each query with its own linked
    entities (a query the file does not name has none), as the searcher ranks them."""
    from elquery.experiments.backend import SearcherBackend
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.demo import dumps
    from elquery.retrieval import LinkedQuery, Searcher, sdm_elr

    build_dbpedia_index(dumps(), tmp_path / "index", relations=True)
    links = tmp_path / "links.tsv"
    links.write_text("q1\tManhattan\t0.7\nq1\t<dbpedia:New_York_City>\t0.3\n", encoding="utf-8")
    backend = SearcherBackend(tmp_path / "index")
    queries = {"q1": "pizza", "q2": "obama mother"}
    ranked = dict(backend.rank(sdm_elr(), queries, 5, lambda n: None, links))
    unlinked = dict(backend.rank(sdm_elr(), queries, 5, lambda n: None))
    with Searcher(tmp_path / "index") as searcher:
        assert ranked["q1"] == searcher.rank(
            LinkedQuery("pizza", (("<dbpedia:Manhattan>", 0.7), ("<dbpedia:New_York_City>", 0.3))), sdm_elr(), 5)
        assert ranked["q2"] == unlinked["q2"] == searcher.rank("obama mother", sdm_elr(), 5)
    assert ranked["q1"] != unlinked["q1"]
    links.write_text("q1\tNo_such_entity_here\t1\n", encoding="utf-8")
    with pytest.raises(ElqueryError, match="not in the index"):
        list(backend.rank(sdm_elr(), queries, 5, lambda n: None, links))
