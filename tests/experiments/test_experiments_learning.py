"""`elquery experiment` learns inside each fold (issue 29.5, methods.md §9): a method ``ltr`` without
a model trains a random forest per fold on the other folds' queries, LTR-greedy is GIF on the
fold model's scores, a model trained on other queries (``train``) scores every query, bad learning
keys are one line before any output, and the published ECIR'17 configurations check runs shaped
like the authors' against methods.md §9.

The learning experiments run on the bundled demo knowledge base, whose ten queries are regrouped
into five search sessions of two (``s1_1``, ``s1_2``, ...), so five session folds hold one session
each."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from elquery.base import run
from elquery.evaluation.readers import read_elq
from elquery.experiments import load_config
from elquery.experiments.cli import register
from elquery.experiments.folds import session_of
from elquery.experiments.runner import _folds
from elquery.indexing.normalize import tokenize
from elquery.linking.gif import gif
from elquery.linking.ltr.cli import register as register_ltr
from elquery.linking.ltr.model import LtrModel
from elquery.linking.types import Mention, ScoredMention

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
DEMO = CONFIGS / "demo"
TREES, SEED = 20, 7
THRESHOLDS = (0.1, 0.2, 0.3, 0.5)


@pytest.fixture(scope="session")
def demo_kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo knowledge base's index and surface forms (built once, in this session's cache)."""
    from elquery.indexing.demo import demo_artefacts

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.getbasetemp() / "elquery-cache-check"))
        return demo_artefacts()


def session_ids() -> dict[str, str]:
    """Demo query id -> a session-shaped id: ten queries in five sessions of two."""
    qids = list(json.loads((DEMO / "queries.json").read_text()))
    return {qid: f"s{n // 2 + 1}_{n % 2 + 1}" for n, qid in enumerate(qids)}


def sessions_data(folder: Path) -> Path:
    """The demo queries and qrels under session-shaped ids in ``folder``."""
    ids = session_ids()
    queries = json.loads((DEMO / "queries.json").read_text())
    (folder / "queries.json").write_text(json.dumps({ids[q]: text for q, text in queries.items()}))
    for name in ("qrels-elq.txt", "qrels-er.txt"):
        lines = (DEMO / name).read_text().splitlines()
        renamed = []
        for line in lines:
            separator = "\t" if "\t" in line else " "
            first, _, rest = line.partition(separator)
            renamed.append(ids[first] + (separator + rest if rest else ""))
        (folder / name).write_text("\n".join(renamed) + "\n")
    return folder


def write_config(folder: Path, kb: tuple[Path, Path], ltr: str, scheme: str = 'scheme = "sessions"\nfolds = 5',
                 queries: str = "queries.json") -> Path:
    config = folder / "experiment.toml"
    config.write_text(f"""
index = "{kb[0]}"
surface_forms = "{kb[1]}"
queries = "{queries}"
[crossval]
{scheme}
[interpretation_finding]
qrels = "qrels-elq.txt"
baseline = "GIF-MLMcg"
[[interpretation_finding.methods]]
method = "mlmcg"
gif_threshold = [0.1, 0.25, 0.5, 1]
[[interpretation_finding.methods]]
method = "ltr"
gif_threshold = [{", ".join(map(str, THRESHOLDS))}]
label = "LTR-greedy"
{ltr}
[semantic_mapping]
qrels = "qrels-er.txt"
baseline = "MLMcg"
[[semantic_mapping.methods]]
method = "mlmcg"
[[semantic_mapping.methods]]
method = "ltr"
{ltr}
""")
    return config


def tsv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def gold_entities(qrels: Path) -> dict[str, set[str]]:
    """Per query, the entities of its ground-truth interpretations (read here from the qrels lines)."""
    gold: dict[str, set[str]] = defaultdict(set)
    for line in qrels.read_text().splitlines():
        qid, *rest = line.split("\t")
        gold[qid].update(rest[1:])
    return gold


@pytest.fixture(scope="module")
def learned(demo_kb: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of a demo experiment whose LTR methods learn inside the session folds."""
    folder = sessions_data(tmp_path_factory.mktemp("learned"))
    config = write_config(folder, demo_kb, f"trees = {TREES}\nseed = {SEED}")
    assert run([register], "elquery", ["experiment", str(config), "--out", str(folder / "out")]) == 0
    return folder


def test_folds_keep_sessions_together(elq_data: Path, dbpedia_sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample Y-ERD config's folds (the ones its LTR models are trained in): every session's
    queries are in one fold, each query in exactly one."""
    monkeypatch.setenv("ELQUERY_DATA", str(elq_data.parent))
    config = load_config(CONFIGS / "sample-y-erd.toml", artefacts=dbpedia_sample)
    qids = list(json.loads(config.queries.read_text()))
    folds = _folds(config, qids)
    fold_of: dict[str, set[int]] = defaultdict(set)
    for fold in folds:
        for qid in fold.test:
            fold_of[session_of(qid)].add(fold.index)
    assert len(folds) == 5 and sorted(q for f in folds for q in f.test) == sorted(qids)
    assert all(len(indices) == 1 for indices in fold_of.values())
    assert len(fold_of) == len({session_of(q) for q in qids}) > 5


def test_a_fold_model_never_sees_its_test_queries(learned: Path) -> None:
    out = learned / "out"
    fold_of = {row["qid"]: int(row["fold"]) for row in tsv(out / "folds.tsv")}
    assert {session_of(q): fold_of[q] for q in fold_of} == {session_of(q): fold_of[q] for q in reversed(list(fold_of))}
    judged = set(gold_entities(learned / "qrels-elq.txt"))
    models = [row for row in tsv(out / "ltr-models.tsv") if row["method"] == "LTR-greedy"]
    held_out_sets = sorted(tuple(map(int, row["held_out"].split(","))) for row in models)
    assert held_out_sets == [(0,), (0, 1), (0, 2), (0, 3), (0, 4), (1,), (1, 2), (1, 3), (1, 4), (2,), (2, 3), (2, 4),
                             (3,), (3, 4), (4,)]  # a model per fold, one per pair (the inner folds)
    for row in models:
        held_out = {int(i) for i in row["held_out"].split(",")}
        trained_on = LtrModel.read_info(out / row["model"]).training["qids"]
        assert not {q for q in trained_on if fold_of[q] in held_out}
        assert sorted(trained_on) == sorted(q for q in judged if fold_of[q] not in held_out)
        assert int(row["queries"]) == len(trained_on) == 10 - 2 * len(held_out)
    # semantic mapping's LTR uses the very same models
    assert {r["model"] for r in tsv(out / "ltr-models.tsv") if r["method"] == "LTR"} == {r["model"] for r in models}


def features_of(qids: list[str], folder: Path, kb: tuple[Path, Path], name: str) -> list[dict[str, str]]:
    """The rows of `elquery ltr features` for ``qids`` (in that order), with labels."""
    queries = json.loads((folder / "queries.json").read_text())
    (folder / f"{name}.json").write_text(json.dumps({q: queries[q] for q in qids}))
    out = folder / f"{name}.tsv"
    assert run([register_ltr], "elquery", ["ltr", "features", "--index", str(kb[0]), "--surface-forms", str(kb[1]),
                                           "--queries", str(folder / f"{name}.json"), "--qrels",
                                           str(folder / "qrels-elq.txt"), "--out", str(out)]) == 0
    return tsv(out)


def test_ltr_greedy_of_a_fold_is_gif_over_that_fold_model_scores(learned: Path, demo_kb: tuple[Path, Path]) -> None:
    """Recomputed apart from the experiment: each fold's forest fitted by scikit-learn on the
    `elquery ltr features` rows of the other folds' queries (in query id order, the order the
    experiment trains in), its predictions on the fold's queries, GIF with the fold's chosen s;
    the cross-validated run holds exactly those interpretations (and their scores)."""
    from sklearn.ensemble import RandomForestRegressor

    from elquery.linking.ltr.features import FEATURES

    out = learned / "out"
    fold_of = {row["qid"]: int(row["fold"]) for row in tsv(out / "folds.tsv")}
    chosen = {int(r["fold"]): float(r["s"]) for r in tsv(out / "parameters.tsv") if r["method"] == "LTR-greedy"}
    run_lines = read_elq(out / "runs" / "LTR-greedy" / "cross-validated.elq")
    scores = {}
    for line in (out / "runs" / "LTR-greedy" / "cross-validated.elq").read_text().splitlines():
        qid, *rest = line.split("\t")
        if rest:
            scores[(qid, frozenset(rest[1:]))] = float(rest[0])
    queries = json.loads((learned / "queries.json").read_text())
    compared = 0
    for fold in sorted(chosen):
        train = features_of(sorted(q for q in fold_of if fold_of[q] != fold), learned, demo_kb, f"train{fold}")
        test = features_of(sorted(q for q in fold_of if fold_of[q] == fold), learned, demo_kb, f"test{fold}")
        forest = RandomForestRegressor(n_estimators=TREES, max_features=3, random_state=SEED)
        forest.fit(np.array([[float(r[f]) for f in FEATURES] for r in train]), [int(r["label"]) for r in train])
        predicted = forest.predict(np.array([[float(r[f]) for f in FEATURES] for r in test]))
        for qid in sorted(q for q in fold_of if fold_of[q] == fold):
            tokens = tokenize(queries[qid])
            triples = []
            for row, score in zip(test, predicted):
                if row["qid"] == qid:
                    start = next(i for i, t in enumerate(tokens) if t.start == int(row["start"]))
                    end = next(i for i, t in enumerate(tokens) if t.end == int(row["end"])) + 1
                    triples.append(ScoredMention(Mention(row["mention"], start, end), row["entity"], float(score),
                                                 float(row["commonness"])))
            expected = gif(triples, chosen[fold])
            assert run_lines.get(qid, frozenset()) == {frozenset(a.entity for a in i.annotations) for i in expected}
            for interpretation in expected:
                entities = frozenset(a.entity for a in interpretation.annotations)
                assert scores[(qid, entities)] == pytest.approx(interpretation.score, abs=1e-12)
                compared += 1
    assert compared >= 5  # the comparison is not vacuous: the folds' forests link something


def test_a_fold_model_links_its_fold_as_the_ltr_linker_does(learned: Path, demo_kb: tuple[Path, Path]) -> None:
    """Each fold's model file, given to the registry's LTR linker (what `elquery link --method ltr`
    runs) with the fold's chosen s, links the fold's queries as the cross-validated run does."""
    from elquery.linking.linker import Linker

    out = learned / "out"
    fold_of = {row["qid"]: int(row["fold"]) for row in tsv(out / "folds.tsv")}
    chosen = {int(r["fold"]): float(r["s"]) for r in tsv(out / "parameters.tsv") if r["method"] == "LTR-greedy"}
    model_of = {int(r["held_out"]): out / r["model"] for r in tsv(out / "ltr-models.tsv")
                if r["method"] == "LTR-greedy" and "," not in r["held_out"]}
    run_lines = read_elq(out / "runs" / "LTR-greedy" / "cross-validated.elq")
    queries = json.loads((learned / "queries.json").read_text())
    for fold, s in chosen.items():
        with Linker(demo_kb[0], demo_kb[1], method="ltr", model=model_of[fold], gif_threshold=s) as linker:
            for qid in (q for q in fold_of if fold_of[q] == fold):
                linked = {frozenset(a.entity for a in i.annotations) for i in linker.link(queries[qid])}
                assert linked == run_lines.get(qid, frozenset())


def model_bytes(out: Path) -> dict[str, bytes]:
    """Each model file of an experiment's output folder, by its held-out folds."""
    return {r["held_out"]: (out / r["model"]).read_bytes() for r in tsv(out / "ltr-models.tsv")}


def test_the_same_models_for_a_seed_and_others_for_another(learned: Path, demo_kb: tuple[Path, Path],
                                                           tmp_path: Path) -> None:
    sessions_data(tmp_path)
    again = write_config(tmp_path, demo_kb, f"trees = {TREES}\nseed = {SEED}")
    assert run([register], "elquery", ["experiment", str(again), "--out", str(tmp_path / "again")]) == 0
    first, second = model_bytes(learned / "out"), model_bytes(tmp_path / "again")
    assert first == second
    assert (learned / "out" / "results.md").read_text() == (tmp_path / "again" / "results.md").read_text()
    other = write_config(tmp_path, demo_kb, f"trees = {TREES}\nseed = {SEED + 1}")
    assert run([register], "elquery", ["experiment", str(other), "--out", str(tmp_path / "other")]) == 0
    third = model_bytes(tmp_path / "other")
    assert third.keys() == first.keys() and all(third[k] != first[k] for k in first)


def test_a_model_trained_on_other_queries_scores_every_query(demo_kb: tuple[Path, Path], tmp_path: Path) -> None:
    """ERD-dev's way: ``train`` names other queries; one model, trained on exactly those (the
    judged ones), scores every query of the experiment, cross-validated by leave-one-out."""
    sessions_data(tmp_path)
    queries = json.loads((tmp_path / "queries.json").read_text())
    training = {q: t for q, t in queries.items() if session_of(q) in ("s1", "s2", "s3")}
    (tmp_path / "train.json").write_text(json.dumps(training))
    (tmp_path / "test.json").write_text(json.dumps({q: t for q, t in queries.items() if q not in training}))
    train = f'train = {{ queries = "train.json", qrels = "qrels-elq.txt" }}\ntrees = {TREES}'
    config = write_config(tmp_path, demo_kb, train, 'scheme = "leave-one-out"', "test.json")
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out")]) == 0
    (model,) = {r["model"] for r in tsv(tmp_path / "out" / "ltr-models.tsv")}
    assert all(r["held_out"] == "" for r in tsv(tmp_path / "out" / "ltr-models.tsv"))
    assert sorted(LtrModel.read_info(tmp_path / "out" / model).training["qids"]) == sorted(training)
    linked = read_elq(tmp_path / "out" / "runs" / "LTR-greedy" / "cross-validated.elq")
    assert set(linked) == set(queries) - set(training)
    # a training query that is also an experiment query is refused before anything is written
    (tmp_path / "train.json").write_text(json.dumps({**training, "s4_1": queries["s4_1"]}))
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "refused")]) == 2
    assert not (tmp_path / "refused").exists()


@pytest.mark.parametrize(("learning", "message"), [
    ("trees = 0", "ltr_method.trees: expected a number of trees between 1 and 10000, got 0"),
    ("trees = -5", "ltr_method.trees: expected a number of trees between 1 and 10000, got -5"),
    ("trees = 100000000000", "ltr_method.trees: expected a number of trees between 1 and 10000, got 100000000000"),
    ("trees = 1.5", "ltr_method.trees: expected int, got float 1.5"),
    ('trees = "many"', "ltr_method.trees: expected int, got str 'many'"),
    ("trees = true", "ltr_method.trees: expected int, got bool True"),
    ("seed = -1", "ltr_method.seed: expected a random seed between 0 and 4294967295, got -1"),
    ("seed = 4294967296", "ltr_method.seed: expected a random seed between 0 and 4294967295, got 4294967296"),
    ("seed = 0.5", "ltr_method.seed: expected int, got float 0.5"),
    ("max_features = 29", "ltr_method.max_features: expected features tried per split between 1 and 28, got 29"),
    ('model = "m.onnx"\ntrees = 10', "ltr_method.trees: goes with a model the experiment learns, but model names "
     "one (remove one of them)"),
    ('labels = "qrels-elq.txt"\ntrain = { queries = "q.json", qrels = "qrels-elq.txt" }',
     "ltr_method.labels: train = { queries, qrels } labels its queries with its own qrels; remove labels"),
    ('train = { queries = "q.json" }', "ltr_method.train.qrels: missing"),
    ('train = { queries = "q.json", qrels = "q.txt", folds = 2 }', "ltr_method.train.folds: unknown key"),
])
def test_bad_learning_keys_are_one_line_before_any_output(demo_kb: tuple[Path, Path], tmp_path: Path, learning: str,
                                                          message: str, capsys: pytest.CaptureFixture[str]) -> None:
    sessions_data(tmp_path)
    config = write_config(tmp_path, demo_kb, learning)
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    prefix = f"elquery: error: {config}: "
    assert err.splitlines() == [prefix + message.replace("ltr_method", "interpretation_finding.methods[1]")]
    assert not (tmp_path / "out").exists()


def test_a_model_per_fold_needs_session_folds(demo_kb: tuple[Path, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    sessions_data(tmp_path)
    config = write_config(tmp_path, demo_kb, "trees = 10", 'scheme = "leave-one-out"')
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"elquery: error: {config}: interpretation_finding.methods[1]: ltr without a model learns one per fold, which "
        "needs the session folds (crossval.scheme = \"sessions\"; leave-one-out would train a model per fold of it); "
        "give train = { queries = ..., qrels = ... } to learn one model on other queries"]
    assert not (tmp_path / "out").exists()


# --- the published ECIR'17 runs --------------------------------------------------------------------

N = 10_000
"""Synthetic queries per collection: figures of 4 decimals are exact counts of 1/N."""


def interpretation_counts(p: int, r: int, f: int, lean: int) -> dict[str, int]:
    """How many queries of each kind give strict P, R, F and lean F of p, r, f, lean / N (the
    hand-computed per-query values of methods.md §7, Eq. 2-7):

    * ``right``: the one ground-truth interpretation {a} answered {a}: P = R = F = lean F = 1;
    * ``half``: ground truth {a}, {b} answered {a}: P = 1, R = 1/2, F = 2/3, lean P 1, R 1/2, F 2/3;
    * ``extra``: ground truth {a} answered {a}, {c}: P = 1/2, R = 1, F = 2/3; lean F 2/3 as well;
    * ``merged``: ground truth {a} answered {a, c}: strict 0; entity P 1/2, R 1: lean P 1/4, R 1/2, F 1/3;
    * the rest answered {c}: every figure 0.

    P - F = half/3 - extra/6 and R - P = (extra - half)/2 give ``half`` and ``extra``."""
    half = 6 * (p - f) + 2 * (r - p)
    extra = half + 2 * (r - p)
    right = p - half - extra // 2
    merged = 3 * (lean - f)
    assert min(half, extra, right, merged) >= 0 and extra % 2 == 0 and right + half + extra + merged <= N
    return {"right": right, "half": half, "extra": extra, "merged": merged}


def ranking_counts(average_precision: int, p1: int) -> dict[str, int]:
    """How many queries of each kind give MAP and P@1 of ``average_precision`` / N and ``p1`` / N:
    ``top`` (every relevant entity ranked first: AP 1, P@1 1), ``second`` (the one relevant entity
    second: AP 1/2, P@1 0), ``half`` (of two relevant entities one, first: AP 1/2, P@1 1); the rest
    rank nothing relevant."""
    if average_precision >= p1:
        return {"top": p1, "second": 2 * (average_precision - p1), "half": 0}
    half = 2 * (p1 - average_precision)
    return {"top": p1 - half, "second": 0, "half": half}


def published_collection(root: Path, data: Path, collection: str, expected: dict[str, float]) -> None:
    """Queries (under ``data``), qrels and runs (under ``root``, in the layout of the authors'
    repository: Freebase ids, ELQ runs with scores, TREC runs with the paper's tags) whose figures
    are ``expected`` (the config's)."""
    prefix, name, short = ("trec-2010", "Y-ERD", "yerd") if collection == "y-erd" else ("TREC", "ERD", "erd")
    qids = [f"{prefix}-{n}_1" for n in range(N)]
    (data / "elq" / collection).mkdir(parents=True)
    (data / "elq" / collection / "queries.json").write_text(json.dumps({q: f"query {n}" for n, q in enumerate(qids)}))
    for folder in ("qrels", "runs/dis", "runs/cer"):
        (root / folder).mkdir(parents=True, exist_ok=True)

    def figure(key: str) -> int:
        return round(expected[key] * N)

    metrics = ("strict.P", "strict.R", "strict.F", "lean.F")
    counts = {run: interpretation_counts(*(figure(f"if/{label}/{m}") for m in metrics))
              for run, label in (("mlmcg-greedy", "MLMcg-greedy"), ("ltr-greedy", "LTR-greedy"))}
    two = max(c["half"] for c in counts.values())  # queries 0 .. two-1 have two interpretations {a}, {b}
    qrels = [line for n, q in enumerate(qids) for line in
             ([f"{q}\t1\t/m/0a{n}"] + ([f"{q}\t1\t/m/0b{n}"] if n < two else []))]
    (root / "qrels" / f"{name}_elq.qrels").write_text("\n".join(qrels) + "\n")
    for run, c in counts.items():
        kinds = {n: "half" for n in range(c["half"])}
        single = iter(range(two, N))
        kinds |= {next(single): kind for kind in ("right", "extra", "merged") for _ in range(c[kind])}
        answers = {"half": ["0.9\t/m/0a{n}"], "right": ["0.9\t/m/0a{n}"], "extra": ["0.8\t/m/0a{n}", "0.35\t/m/0c{n}"],
                   "merged": ["0.6\t/m/0a{n}\t/m/0c{n}"], "wrong": ["0.33\t/m/0c{n}"]}
        lines = [f"{q}\t" + answer.format(n=n) for n, q in enumerate(qids) for answer in answers[kinds.get(n, "wrong")]]
        (root / "runs" / "dis" / f"{short}-{run}.run").write_text("\n".join(lines) + "\n")

    ranks = {run: ranking_counts(figure(f"sm/{label}/map"), figure(f"sm/{label}/p@1"))
             for run, label in (("cmns", "CMNS"), ("mlmcg", "MLMcg"), ("ltr", "LTR"))}
    two = max(c["half"] for c in ranks.values())  # queries 0 .. two-1 have two relevant entities
    judged = [line for n, q in enumerate(qids) for line in
              ([f"{q}\t0\t/m/0a{n}\t1"] + ([f"{q}\t0\t/m/0b{n}\t1"] if n < two else []))]
    (root / "qrels" / f"{name}_trec.qrels").write_text("\n".join(judged) + "\n")
    for run, c in ranks.items():
        kinds = {n: "half" for n in range(c["half"])}
        single = iter(range(two, N))
        kinds |= {next(single): "second" for _ in range(c["second"])}
        rest = (n for n in range(N) if n not in kinds)
        kinds |= {next(rest): "top" for _ in range(c["top"])}
        rankings = {"top": ["a", "b", "c"], "second": ["c", "a"], "half": ["a", "c"], "none": ["c"]}
        lines = [f"{q}\tQ0\t/m/0{e}{n}\t{rank}\t{1 / rank:.6f}\t-{run}-t1000-m3"
                 for n, q in enumerate(qids)
                 for rank, e in enumerate([e for e in rankings[kinds.get(n, "none")] if e != "b" or n < two], 1)]
        (root / "runs" / "cer" / f"{short}-{run}.run").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("config", "collection"), [("ecir17-published", "y-erd"),
                                                    ("ecir17-erd-dev-published", "erd-dev")])
def test_the_published_configs_check_runs_shaped_like_the_published_ones(
        config: str, collection: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Synthetic runs and qrels in the layout of the authors' repository (Freebase ids; ELQ runs
    with scores, TREC runs with the paper's tags), built to give exactly the figures of methods.md
    §9 the config expects: every figure is checked and OK; two queries fewer right FAIL (Y-ERD)."""
    monkeypatch.setenv("ELQUERY_ECIR17", str(tmp_path / "published"))
    monkeypatch.setenv("ELQUERY_DATA", str(tmp_path / "data"))
    path = CONFIGS / f"{config}.toml"
    expected = {figure.key: figure.value for figure in load_config(path).expected}
    section9 = {"ecir17-published": (.7087, .7090, .7084, .7165, .7865, .7870, .7861, .7967,
                                     .7831, .7779, .8536, .8280, .8667, .8479),
                "ecir17-erd-dev-published": (.7143, .7125, .7114, .7260, .8516, .8282, .8341, .8341,
                                             .7037, .7556, .8543, .8444, .8606, .8222)}[config]
    keys = [f"if/{run}/{m}" for run in ("MLMcg-greedy", "LTR-greedy")
            for m in ("strict.P", "strict.R", "strict.F", "lean.F")]
    keys += [f"sm/{run}/{m}" for run in ("CMNS", "MLMcg", "LTR") for m in ("map", "p@1")]
    assert expected == dict(zip(keys, section9))
    published_collection(tmp_path / "published", tmp_path / "data", collection, expected)
    arguments = ["experiment", str(path), "--out", str(tmp_path / "out"), "--check"]
    assert run([register], "elquery", arguments) == 0
    checks = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("OK", "FAIL"))]
    assert sorted(line.split()[1].rstrip(":") for line in checks) == sorted(expected)
    assert all(line.startswith("OK   ") for line in checks)

    if collection != "y-erd":
        return
    ltr = tmp_path / "published" / "runs" / "dis" / "yerd-ltr-greedy.run"
    lines = ltr.read_text().splitlines()
    for n in [n for n, line in enumerate(lines) if "\t0.9\t" in line][-2:]:  # the last two right answers
        lines[n] = lines[n].replace("/m/0a", "/m/0x")
    ltr.write_text("\n".join(lines) + "\n")
    assert run([register], "elquery", arguments) == 1
    out = capsys.readouterr().out
    strict_f = expected["if/LTR-greedy/strict.F"]
    assert f"FAIL if/LTR-greedy/strict.F: {strict_f - 2 / N:.4f} (expected {strict_f:.4f} ± 0.0001)" in out
    assert "OK   if/MLMcg-greedy/strict.F" in out
