"""The ``ltr`` linking method (methods.md §9) on the real DBpedia sample, with a model trained here
by ``elquery ltr features`` and ``elquery ltr train``: LTR-greedy is GIF (s = 0.3) over the model's
scores computed independently (features -> LtrModel.score -> gif), the LTR ranking keeps each
entity's best pair, the command line (every format, --workers, --engine spark), the Python API and
an experiment config give the same answers, and a bad model is one line, exit 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.linking.gif import gif
from elquery.linking.linker import Linker
from elquery.linking.methods import open_linker
from elquery.linking.output import formatter
from elquery.linking.types import Mention, ScoredMention

QUERIES = {
    "named-1": "British Airways flights to Rome's Colosseum",
    "named-2": "saab 900 vs saab 9000",
    "named-3": "university of kentucky",
    "named-4": "sichuan hot pot in rome",
    "named-5": "lufthansa or klm to normandy",
    "trec-1": "kentucky derby museum",
    "trec-2": "mitchell college",
    "trec-3": "history games",
}
QRELS = """named-1\t1\t<dbpedia:British_Airways>\t<dbpedia:Rome>\t<dbpedia:Colosseum>
named-2\t1\t<dbpedia:Saab_900>\t<dbpedia:Saab_9000>
named-3\t1\t<dbpedia:University_of_Kentucky>
named-4\t1\t<dbpedia:Sichuan>\t<dbpedia:Hot_pot>\t<dbpedia:Rome>
named-5\t1\t<dbpedia:Lufthansa>\t<dbpedia:KLM>\t<dbpedia:Normandy>
trec-1
trec-2
trec-3
"""
LTR_GREEDY_S = 0.3  # methods.md §9


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ltr-linking")
    (root / "queries.json").write_text(json.dumps(QUERIES), encoding="utf-8")
    (root / "qrels-elq.txt").write_text(QRELS, encoding="utf-8")
    return root / "queries.json", root / "qrels-elq.txt"


@pytest.fixture(scope="module")
def model(sample_link_artefacts: tuple[Path, Path], inputs: tuple[Path, Path]) -> Path:
    """A forest of 40 trees trained on the labelled features of the queries above."""
    index, surface_forms = sample_link_artefacts
    queries, qrels = inputs
    features = queries.with_name("features.tsv")
    assert elquery(["ltr", "features", "--index", str(index), "--surface-forms", str(surface_forms),
                    "--queries", str(queries), "--qrels", str(qrels), "--out", str(features)]) == 0
    out = queries.with_name("model.onnx")
    assert elquery(["ltr", "train", "--features", str(features), "--out", str(out), "--trees", "40", "--seed", "3"]) == 0
    return out


def independent_triples(sample_link_artefacts: tuple[Path, Path], model: Path, query: str) -> list[ScoredMention]:
    """The candidate pairs' scores straight from the LTR package: features, then the model."""
    from elquery.linking.ltr import FeatureExtractor, LtrModel

    index, surface_forms = sample_link_artefacts
    with FeatureExtractor(index, surface_forms, 0.1) as extractor:
        pairs, matrix = extractor.extract(query)
    scores = LtrModel.load(model).score(matrix)
    return [ScoredMention(p.mention, p.entity, float(s), p.commonness) for p, s in zip(pairs, scores)]


def best_per_entity(triples: list[ScoredMention]) -> list[tuple[str, float, Mention]]:
    """The LTR ranking computed here: each entity's highest-scoring pair (ties: the earlier, then
    longer span), by score descending, then entity id."""
    best: dict[str, ScoredMention] = {}
    for t in triples:
        kept = best.get(t.entity)
        if kept is None or (t.score, -t.mention.start, t.mention.end) > (kept.score, -kept.mention.start, kept.mention.end):
            best[t.entity] = t
    return sorted(((t.entity, t.score, t.mention) for t in best.values()), key=lambda r: (-r[1], r[0]))


def test_ltr_greedy_is_gif_on_the_models_scores(sample_link_artefacts: tuple[Path, Path], model: Path) -> None:
    index, surface_forms = sample_link_artefacts
    with Linker(index, surface_forms, method="ltr", model=model) as linker:
        assert linker.describe() == "GIF-LTR (c=0.1, s=0.3)"
        linked_something = False
        for query in QUERIES.values():
            expected = independent_triples(sample_link_artefacts, model, query)
            result = linker.result(query)
            assert list(result.scored) == expected
            assert list(result.interpretations) == gif(expected, LTR_GREEDY_S)
            assert [(r.entity, r.score, r.mention) for r in result.ranking] == best_per_entity(expected)
            linked_something |= bool(result.interpretations)
    assert linked_something
    with Linker(index, surface_forms, method="ltr", model=model, top_ranked=True) as top:
        result = top.result(QUERIES["named-3"])
        assert [i.entities for i in result.interpretations] == [frozenset({result.ranking[0].entity})]


def test_whitelist_and_thresholds(sample_link_artefacts: tuple[Path, Path], model: Path) -> None:
    index, surface_forms = sample_link_artefacts
    query = QUERIES["named-1"]
    expected = independent_triples(sample_link_artefacts, model, query)
    keep = frozenset({"<dbpedia:Rome>", "<dbpedia:Colosseum>"})
    with Linker(index, surface_forms, method="ltr", model=model, whitelist=keep, gif_threshold=0.0) as linker:
        result = linker.result(query)
    assert list(result.scored) == [t for t in expected if t.entity in keep]
    assert list(result.interpretations) == gif([t for t in expected if t.entity in keep], 0.0)


@pytest.mark.parametrize("fmt", ["elq", "trec", "jsonl"])
def test_cli_and_api_give_the_same_run(sample_link_artefacts: tuple[Path, Path], model: Path, inputs: tuple[Path, Path],
                                       tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``elquery link --method ltr --model`` in this process and in two (the worker links with the
    linker the config rebuilds), and the API's results in the run's format: the same lines."""
    import elquery.linking.batch as batch
    from elquery.indexing.provenance import run_metadata

    index, surface_forms = sample_link_artefacts
    queries, _ = inputs
    common = ["link", "--method", "ltr", "--model", str(model), "--index", str(index), "--surface-forms",
              str(surface_forms), "--queries", str(queries), "--format", fmt]
    assert elquery([*common, "--out", str(tmp_path / "one")]) == 0
    assert "with GIF-LTR (c=0.1, s=0.3) [c: default, s: default]" in capsys.readouterr().err
    monkeypatch.setattr(batch, "MIN_QUERIES_PER_WORKER", 1)
    assert elquery([*common, "--workers", "2", "--out", str(tmp_path / "two")]) == 0
    metadata = run_metadata("link", {"index": index, "surface_forms": surface_forms})
    metadata["model"] = {"file": model.name, "sha256": hashlib.sha256(model.read_bytes()).hexdigest()}
    encode = formatter(fmt, "elquery-ltr", metadata)
    with open_linker("ltr", {"index": index, "surface_forms": surface_forms}, model=model) as linker:
        expected = [line for qid, query in QUERIES.items() for line in encode(linker.result(query, qid))]
    assert (tmp_path / "one").read_text(encoding="utf-8").splitlines() == expected
    assert (tmp_path / "two").read_text(encoding="utf-8") == (tmp_path / "one").read_text(encoding="utf-8")
    if fmt != "jsonl":  # the run's provenance, the model's SHA-256 with it, beside the run
        assert json.loads((tmp_path / "one.meta.json").read_text(encoding="utf-8")) == metadata


def test_spark_engine_gives_the_local_run(spark, sample_link_artefacts: tuple[Path, Path], model: Path,
                                          inputs: tuple[Path, Path], tmp_path: Path) -> None:
    index, surface_forms = sample_link_artefacts
    common = ["link", "--method", "ltr", "--model", str(model), "--index", str(index), "--surface-forms",
              str(surface_forms), "--queries", str(inputs[0]), "--format", "jsonl"]
    assert elquery([*common, "--out", str(tmp_path / "local.jsonl")]) == 0
    assert elquery([*common, "--engine", "spark", "--master", "local[2]", "--out", str(tmp_path / "spark.jsonl")]) == 0
    assert (tmp_path / "spark.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert elquery(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == "", captured.err
    return lines[0]


def test_a_bad_model_is_one_line(sample_link_artefacts: tuple[Path, Path], model: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    index, surface_forms = sample_link_artefacts
    artefacts = ["--index", str(index), "--surface-forms", str(surface_forms)]
    run = tmp_path / "run.elq"
    missing = tmp_path / "missing.onnx"
    argv = ["link", "rome", "--method", "ltr", *artefacts, "--out", str(run)]
    assert one_error_line(capsys, [*argv, "--model", str(missing)]) == f"elquery: error: {missing}: no such model file"
    not_a_model = tmp_path / "model.onnx"
    not_a_model.write_text("not a model")
    assert one_error_line(capsys, [*argv, "--model", str(not_a_model)]) == \
        f"elquery: error: {not_a_model}: not an ONNX model file"
    assert one_error_line(capsys, argv) == ("elquery: error: ltr needs model: the model file of `elquery ltr train` "
                                            "(methods.md §9)")
    # the demo knowledge base is another index than the one the model's features came from
    other = one_error_line(capsys, ["link", "rome", "--method", "ltr", "--model", str(model), "--out", str(run)])
    assert other.startswith(f"elquery: error: {model}: the model was trained on features of another index (provenance id ")
    assert one_error_line(capsys, ["link", "rome", *artefacts, "--model", str(model)]) == \
        "elquery: error: not options of --method mlmcg: --model"
    assert not run.exists()
    with pytest.raises(ElqueryError, match=f"^{missing}: no such model file$"):
        Linker(index, surface_forms, method="ltr", model=missing)
    with pytest.raises(ElqueryError, match=r"^ltr needs model: "):
        Linker(index, surface_forms, method="ltr")
    with pytest.raises(ElqueryError, match=r"^ltr: model must be a path, got 3$"):
        Linker(index, surface_forms, method="ltr", model=3)


CONFIG = """
name = "ltr"
index = "{index}"
surface_forms = "{surface_forms}"
queries = "{queries}"

[crossval]
scheme = "leave-one-out"

[interpretation_finding]
qrels = "{qrels}"
[[interpretation_finding.methods]]
method = "ltr"
model = "{model}"
gif_threshold = [0.3, 0.5]

[semantic_mapping]
qrels = "{trec_qrels}"
[[semantic_mapping.methods]]
method = "ltr"
model = "{model}"
"""


def test_an_experiment_links_with_the_model(sample_link_artefacts: tuple[Path, Path], model: Path,
                                            inputs: tuple[Path, Path], tmp_path: Path) -> None:
    """A config with ``method = "ltr"`` and ``model``: its GIF-LTR run at s = 0.3 is
    ``elquery link --method ltr`` 's, its params file holds LTR's c and s, and linking with that
    params file takes them from it."""
    from elquery.evaluation.readers import read_elq
    from elquery.experiments import load_config, run_experiment

    index, surface_forms = sample_link_artefacts
    queries, qrels = inputs
    trec_qrels = tmp_path / "qrels-sm.txt"
    trec_qrels.write_text("named-3 0 <dbpedia:University_of_Kentucky> 1\n", encoding="utf-8")
    config = tmp_path / "ltr.toml"
    config.write_text(CONFIG.format(index=index, surface_forms=surface_forms, queries=queries, qrels=qrels,
                                    model=model, trec_qrels=trec_qrels), encoding="utf-8")
    spec = load_config(config).interpretation_finding
    assert spec is not None and spec.methods[0].label == "GIF-LTR"
    assert spec.methods[0].fixed == (("model", str(model)),)
    result = run_experiment(config, tmp_path / "out", progress=False)
    [linked_run] = (tmp_path / "out" / "runs" / "GIF-LTR").glob("c0.1_s0.3.*.elq")
    run = tmp_path / "link.elq"
    assert elquery(["link", "--method", "ltr", "--model", str(model), "--index", str(index), "--surface-forms",
                    str(surface_forms), "--queries", str(queries), "--out", str(run)]) == 0
    assert read_elq(linked_run) == read_elq(run)
    params = json.loads((tmp_path / "out" / "params.json").read_text())["methods"]["ltr"]
    assert set(params) == {"commonness_threshold", "gif_threshold", "tuned"}
    assert result.method("sm", "LTR").per_query
    again = tmp_path / "params.elq"
    assert elquery(["link", "--method", "ltr", "--model", str(model), "--index", str(index), "--surface-forms",
                    str(surface_forms), "--queries", str(queries), "--params", str(tmp_path / "out" / "params.json"),
                    "--out", str(again)]) == 0
    gif_threshold = params["gif_threshold"]
    with Linker(index, surface_forms, method="ltr", model=model, gif_threshold=gif_threshold) as linker:
        expected = {qid: frozenset(i.entities for i in linker.link(text)) for qid, text in QUERIES.items()}
    assert read_elq(again) == expected


def test_an_experiment_refuses_a_missing_model_before_it_runs(sample_link_artefacts: tuple[Path, Path], model: Path,
                                                              inputs: tuple[Path, Path], tmp_path: Path) -> None:
    from elquery.experiments import run_experiment

    index, surface_forms = sample_link_artefacts
    queries, qrels = inputs
    config = tmp_path / "ltr.toml"
    text = CONFIG.format(index=index, surface_forms=surface_forms, queries=queries, qrels=qrels,
                         model=tmp_path / "none.onnx", trec_qrels=qrels)
    config.write_text(text.split("[semantic_mapping]")[0], encoding="utf-8")
    with pytest.raises(ElqueryError, match=r"none\.onnx: no such file \(the model of method 'GIF-LTR' of ltr\.toml\)$"):
        run_experiment(config, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()
