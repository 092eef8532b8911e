"""``elquery ltr features`` / ``train`` / ``info`` and the model API on the real DBpedia sample:
the features file (TSV and LETOR) and its labels, a model round trip (train, save, load: the
predictions of scikit-learn's own forest fitted here on the same rows), determinism for a seed, and
one line, exit 2 for bad input (a features file missing a column or with an unknown one, a model
for other features or other artefacts)."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.linking.ltr import FEATURES, FeatureExtractor, LtrModel

QUERIES = {
    "trec-2013-31_5": "kentucky derby museum",
    "trec-2010-30_1": "mitchell college",
    "trec-2010-32_2": "history games",
    "named-1": "British Airways flights to Rome's Colosseum",
    "named-2": "saab 900 vs saab 9000",
    "named-3": "university of kentucky",
    "named-4": "sichuan hot pot in rome",
    "named-5": "lufthansa or klm to normandy",
}
QRELS = """trec-2013-31_5
trec-2010-30_1
trec-2010-32_2
named-1\t1\t<dbpedia:British_Airways>\t<dbpedia:Rome>\t<dbpedia:Colosseum>
named-2\t1\t<dbpedia:Saab_900>\t<dbpedia:Saab_9000>
named-3\t1\t<dbpedia:University_of_Kentucky>
named-4\t1\t<dbpedia:Sichuan>\t<dbpedia:Hot_pot>\t<dbpedia:Rome>
named-4\t1\t<dbpedia:Hot_pot>\t<dbpedia:Rome>
named-5\t1\t<dbpedia:Lufthansa>\t<dbpedia:KLM>\t<dbpedia:Normandy>
"""
TREES = 60
SEED = 7


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> str:
    capsys.readouterr()
    assert elquery(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("elquery: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ltr-inputs")
    (root / "queries.json").write_text(json.dumps(QUERIES), encoding="utf-8")
    (root / "qrels-elq.txt").write_text(QRELS, encoding="utf-8")
    return root / "queries.json", root / "qrels-elq.txt"


def artefact_args(sample_link_artefacts: tuple[Path, Path]) -> list[str]:
    index, surface_forms = sample_link_artefacts
    return ["--index", str(index), "--surface-forms", str(surface_forms)]


@pytest.fixture(scope="module")
def features_file(sample_link_artefacts: tuple[Path, Path], inputs: tuple[Path, Path],
                  tmp_path_factory: pytest.TempPathFactory) -> Path:
    queries, qrels = inputs
    out = tmp_path_factory.mktemp("ltr-features") / "features.tsv"
    assert elquery(["ltr", "features", *artefact_args(sample_link_artefacts), "--queries", str(queries),
                    "--qrels", str(qrels), "--out", str(out)]) == 0
    return out


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def matrix_and_labels(rows: list[dict[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([[float(r[f]) for f in FEATURES] for r in rows]), np.array([int(r["label"]) for r in rows]))


@pytest.fixture(scope="module")
def model_file(features_file: Path) -> Path:
    out = features_file.with_name("model.onnx")
    assert elquery(["ltr", "train", "--features", str(features_file), "--out", str(out), "--trees", str(TREES),
                    "--seed", str(SEED)]) == 0
    return out


# --- the features file ------------------------------------------------------------------------------


def test_features_file_rows_are_the_extractor_rows_with_qrels_labels(
        features_file: Path, sample_link_artefacts: tuple[Path, Path]) -> None:
    rows = read_tsv(features_file)
    assert list(rows[0]) == ["qid", "mention", "start", "end", "entity", "label", *FEATURES]
    truth: dict[str, set[str]] = {}
    for line in QRELS.splitlines():
        qid, *rest = line.split("\t")
        truth.setdefault(qid, set()).update(rest[1:])
    with FeatureExtractor(*sample_link_artefacts) as extractor:
        expected = []
        for qid, query in QUERIES.items():
            pairs, matrix = extractor.extract(query)
            for pair, row in zip(pairs, matrix):
                assert query[pair.start:pair.end].casefold().replace("'", " ") == pair.mention.text
                expected.append((qid, pair.mention.text, str(pair.start), str(pair.end), pair.entity,
                                 str(int(pair.entity in truth[qid])), *row.tolist()))
    found = [(r["qid"], r["mention"], r["start"], r["end"], r["entity"], r["label"], *(float(r[f]) for f in FEATURES))
             for r in rows]
    assert found == expected
    labels = [r["label"] for r in rows]
    assert labels.count("1") >= 8 and labels.count("0") >= 5
    meta = json.loads(features_file.with_name(features_file.name + ".meta.json").read_text(encoding="utf-8"))
    assert meta["rows"] == len(rows) and meta["features"] == list(FEATURES) and meta["commonness_threshold"] == 0.1
    assert meta["queries"]["count"] == len(QUERIES)


def test_letor_format_holds_the_same_rows(features_file: Path, sample_link_artefacts: tuple[Path, Path],
                                          inputs: tuple[Path, Path], tmp_path: Path) -> None:
    queries, qrels = inputs
    out = tmp_path / "features.letor"
    assert elquery(["ltr", "features", *artefact_args(sample_link_artefacts), "--queries", str(queries),
                    "--qrels", str(qrels), "--format", "letor", "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    assert all(f"{n}:{name}" in header[0] for n, name in enumerate(FEATURES, 1))
    body = [line for line in lines if not line.startswith("#")]
    tsv = read_tsv(features_file)
    assert len(body) == len(tsv)
    ordinals = {qid: n for n, qid in enumerate(QUERIES, 1)}
    for line, row in zip(body, tsv):
        data, comment = line.split(" # ")
        label, qid, *values = data.split(" ")
        assert label == row["label"] and qid == f"qid:{ordinals[row['qid']]}"
        assert [v.split(":") for v in values] == [[str(n), row[f]] for n, f in enumerate(FEATURES, 1)]
        assert comment == f"{row['qid']} {row['mention']} {row['entity']}"


def test_without_qrels_the_labels_are_empty(sample_link_artefacts: tuple[Path, Path], inputs: tuple[Path, Path],
                                            tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "unlabelled.tsv"
    assert elquery(["ltr", "features", *artefact_args(sample_link_artefacts), "--queries", str(inputs[0]),
                    "--out", str(out)]) == 0
    assert {r["label"] for r in read_tsv(out)} == {""}
    one_error_line(capsys, ["ltr", "train", "--features", str(out), "--out", str(tmp_path / "m.onnx")],
                   f"{out}:2: no label")
    assert not (tmp_path / "m.onnx").exists()
    # --max-features beyond the 28 features is refused before the file is read (not its "no label")
    one_error_line(capsys, ["ltr", "train", "--features", str(out), "--out", str(tmp_path / "m.onnx"),
                            "--max-features", str(len(FEATURES) + 1)],
                   f"--max-features must be at most {len(FEATURES)} (the features), got {len(FEATURES) + 1}")
    one_error_line(capsys, ["ltr", "train", "--features", str(out), "--out", str(tmp_path / "m.onnx"),
                            "--trees", "10001"], "--trees must be at most 10000, got 10001")


# --- the model ---------------------------------------------------------------------------------------


def test_round_trip_gives_scikit_learns_predictions(model_file: Path, features_file: Path,
                                                     sample_link_artefacts: tuple[Path, Path]) -> None:
    from sklearn.ensemble import RandomForestRegressor

    matrix, labels = matrix_and_labels(read_tsv(features_file))
    forest = RandomForestRegressor(n_estimators=TREES, max_features=3, random_state=SEED).fit(matrix, labels)
    index, surface_forms = sample_link_artefacts
    rng = np.random.default_rng(0)
    probes = np.vstack([matrix, matrix * rng.uniform(0.5, 1.5, matrix.shape)])  # the rows and values between them
    predicted = forest.predict(probes)
    assert len(set(predicted.round(6).tolist())) > 5
    for engine in ("compiled", "onnxruntime"):
        model = LtrModel.load(model_file, artefacts={"index": index, "surface_forms": surface_forms}, engine=engine)
        scores = model.score(probes)
        assert np.abs(scores - predicted).max() <= 1e-5
        assert np.array_equal(scores, predicted)  # the same numbers, not merely close
        assert model.score(np.zeros((0, len(FEATURES)))).shape == (0,)


def test_model_records_what_it_was_trained_on(model_file: Path, features_file: Path,
                                               sample_link_artefacts: tuple[Path, Path]) -> None:
    import onnx

    index, surface_forms = sample_link_artefacts
    rows = read_tsv(features_file)
    info = LtrModel.read_info(model_file)
    assert info.features == FEATURES
    assert (info.learner["trees"], info.learner["max_features"], info.learner["seed"]) == (TREES, 3, SEED)
    assert info.training == {"file": "features.tsv", "sha256": hashlib.sha256(features_file.read_bytes()).hexdigest(),
                             "rows": len(rows), "queries": len({r["qid"] for r in rows}),
                             "positives": sum(r["label"] == "1" for r in rows)}
    index_id = json.loads((index / "provenance.json").read_text(encoding="utf-8"))["id"]
    with sqlite3.connect(surface_forms) as db:
        store_id = json.loads(db.execute("SELECT value FROM meta WHERE key = 'provenance'").fetchone()[0])["id"]
    assert info.artefacts == {"index": index_id, "surface_forms": store_id}
    assert info.commonness_threshold == 0.1
    model = onnx.load(model_file)  # a plain ONNX model: one ai.onnx.ml TreeEnsemble, no pickle
    assert [(n.op_type, n.domain) for n in model.graph.node] == [("TreeEnsemble", "ai.onnx.ml")]


def test_info_prints_the_metadata_and_checks_artefacts(model_file: Path, sample_link_artefacts: tuple[Path, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert elquery(["ltr", "info", str(model_file), *artefact_args(sample_link_artefacts)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["features"] == list(FEATURES) and printed["learner"]["trees"] == TREES


def test_training_is_deterministic_for_a_seed(features_file: Path, model_file: Path, tmp_path: Path) -> None:
    again, threads, other = tmp_path / "again.onnx", tmp_path / "threads.onnx", tmp_path / "other.onnx"
    common = ["ltr", "train", "--features", str(features_file), "--trees", str(TREES)]
    assert elquery([*common, "--seed", str(SEED), "--out", str(again)]) == 0
    assert elquery([*common, "--seed", str(SEED), "--workers", "2", "--out", str(threads)]) == 0
    assert elquery([*common, "--seed", str(SEED + 1), "--out", str(other)]) == 0
    assert again.read_bytes() == threads.read_bytes() == model_file.read_bytes()
    assert other.read_bytes() != model_file.read_bytes()


# --- bad input ----------------------------------------------------------------------------------------


def rewrite_columns(source: Path, target: Path, drop: str | None = None, rename: tuple[str, str] | None = None) -> Path:
    rows = [line.split("\t") for line in source.read_text(encoding="utf-8").splitlines()]
    header = rows[0]
    if drop is not None:
        at = header.index(drop)
        rows = [r[:at] + r[at + 1:] for r in rows]
    if rename is not None:
        rows[0] = [rename[1] if name == rename[0] else name for name in rows[0]]
    target.write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    return target


@pytest.mark.parametrize(("change", "message"), [
    ({"drop": "mcats"}, ":1: missing column 'mcats'"),
    ({"drop": "label"}, ":1: missing column 'label'"),
    ({"rename": ("qlinks", "qlynx")}, ":1: unknown feature name 'qlynx'"),
])
def test_a_features_file_with_a_bad_header_is_one_line(change: dict, message: str, features_file: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    bad = rewrite_columns(features_file, tmp_path / "bad.tsv", **change)
    one_error_line(capsys, ["ltr", "train", "--features", str(bad), "--out", str(tmp_path / "m.onnx")], f"{bad}{message}")
    assert list(tmp_path.iterdir()) == [bad]


def test_columns_in_another_order_train_the_same_model(features_file: Path, model_file: Path, tmp_path: Path) -> None:
    rows = [line.split("\t") for line in features_file.read_text(encoding="utf-8").splitlines()]
    shuffled = tmp_path / "shuffled.tsv"
    shuffled.write_text("".join("\t".join(r[::-1]) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "model.onnx"
    assert elquery(["ltr", "train", "--features", str(shuffled), "--out", str(out), "--trees", str(TREES),
                    "--seed", str(SEED)]) == 0
    probes = matrix_and_labels(read_tsv(features_file))[0]
    assert np.array_equal(LtrModel.load(out).score(probes), LtrModel.load(model_file).score(probes))


def with_metadata(model_file: Path, target: Path, **changes: object) -> Path:
    import onnx

    model = onnx.load(model_file)
    for prop in model.metadata_props:
        if prop.key == "elquery-ltr":
            prop.value = json.dumps({**json.loads(prop.value), **changes})
    onnx.save(model, target)
    return target


def test_a_model_for_other_features_is_refused(model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = with_metadata(model_file, tmp_path / "other.onnx", features=[*FEATURES[:-1], "qwiki"])
    with pytest.raises(ElqueryError, match="other features than elquery's .it lacks qcatchall; it has qwiki"):
        LtrModel.load(other)
    one_error_line(capsys, ["ltr", "info", str(other)], "trained on other features", "lacks qcatchall")
    reordered = with_metadata(model_file, tmp_path / "reordered.onnx", features=[FEATURES[1], FEATURES[0], *FEATURES[2:]])
    with pytest.raises(ElqueryError, match="the same names in another order"):
        LtrModel.load(reordered)


def test_a_model_of_other_artefacts_is_refused(features_file: Path, sample_link_artefacts: tuple[Path, Path],
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Features extracted over another index (their .meta.json names it) give a model that the
    sample's artefacts refuse; without artefacts to check against, it loads."""
    copied = tmp_path / "features.tsv"
    copied.write_bytes(features_file.read_bytes())
    meta = json.loads(features_file.with_name(features_file.name + ".meta.json").read_text(encoding="utf-8"))
    meta["artefacts"]["index"] = "0123456789abcdef"
    copied.with_name(copied.name + ".meta.json").write_text(json.dumps(meta), encoding="utf-8")
    model = tmp_path / "model.onnx"
    assert elquery(["ltr", "train", "--features", str(copied), "--out", str(model), "--trees", "5"]) == 0
    index, surface_forms = sample_link_artefacts
    with pytest.raises(ElqueryError, match="another index .provenance id 0123456789abcdef"):
        LtrModel.load(model, artefacts={"index": index, "surface_forms": surface_forms})
    one_error_line(capsys, ["ltr", "info", str(model), *artefact_args(sample_link_artefacts)],
                   "trained on features of another index")
    assert LtrModel.load(model).score(np.zeros((1, len(FEATURES)))).shape == (1,)


def test_not_a_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00not a model at all\xff" * 10)
    one_error_line(capsys, ["ltr", "info", str(junk)], f"{junk}: not an ONNX model file")
    one_error_line(capsys, ["ltr", "info", str(tmp_path / "missing.onnx")], "no such model file")


def test_queries_missing_from_the_qrels_are_refused_before_any_work(
        sample_link_artefacts: tuple[Path, Path], inputs: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(line + "\n" for line in QRELS.splitlines() if not line.startswith("named-3")), encoding="utf-8")
    out = tmp_path / "features.tsv"
    one_error_line(capsys, ["ltr", "features", *artefact_args(sample_link_artefacts), "--queries", str(inputs[0]),
                            "--qrels", str(qrels), "--out", str(out)], "1 of the 8 queries are not in the qrels", "named-3")
    assert not out.exists()


def test_an_index_without_the_ltr_fields_is_refused(dbpedia_sample: Path, sample_link_artefacts: tuple[Path, Path],
                                                    inputs: tuple[Path, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.build_index import build_dbpedia_index

    index = tmp_path / "index"
    build_dbpedia_index([dbpedia_sample], index, workers=2, ltr_fields=False)
    out = tmp_path / "features.tsv"
    one_error_line(capsys, ["ltr", "features", "--index", str(index), "--surface-forms", str(sample_link_artefacts[1]),
                            "--queries", str(inputs[0]), "--out", str(out)], "the LTR features", "title")
    assert not out.exists()


def test_a_store_without_kb_aliases_is_refused(dbpedia_sample: Path, sample_link_artefacts: tuple[Path, Path],
                                               inputs: tuple[Path, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.surface_forms.build import BuildOptions, build_store

    store = tmp_path / "sf.db"
    build_store(store, BuildOptions((dbpedia_sample,), anchors=True, kb_aliases=False, workers=1, progress=False))
    one_error_line(capsys, ["ltr", "features", "--index", str(sample_link_artefacts[0]), "--surface-forms", str(store),
                            "--queries", str(inputs[0]), "--out", str(tmp_path / "f.tsv")], "no KB aliases")
