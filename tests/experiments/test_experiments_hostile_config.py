"""Hostile experiment configs and inputs (issue 31, item 7): a config of bad bytes is one line; a
byte order mark is dropped (docs/formats.md); every number is checked by a registry parameter
(``depth = 100000000000`` reached Java as a NumberFormatException); and a given run or label file
of bad lines or bad bytes is found before the first write, so a failing experiment leaves no
output folder behind."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from elquery.base import ElqueryError, run
from elquery.experiments import load_config
from elquery.experiments.cli import register

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
DEMO = CONFIGS / "demo"


@pytest.fixture(autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo knowledge base, built once per session into this cache."""
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path_factory.getbasetemp() / "elquery-cache-hostile"))


def _demo_config(tmp_path: Path) -> str:
    """The shipped demo config, its data paths made absolute so the text can move."""
    return (CONFIGS / "demo.toml").read_text(encoding="utf-8").replace('"demo/', f'"{DEMO}/')


def _refused(config: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert run([register], "elquery", ["experiment", str(config), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("elquery: error: ") and "Traceback" not in captured.err, captured.err
    assert not out.exists()
    return lines[0].removeprefix("elquery: error: ")


# --- the bytes of the config ---------------------------------------------------------------

@pytest.mark.parametrize("raw", [b'name = "Y\xffERD"\n', b"\xff\xfe" + 'name = "x"\n'.encode("utf-16-le"),
                                 b'\xef\xbb\xbfname = "\xc3"\n'])
def test_a_config_of_bad_bytes_is_one_line(tmp_path: Path, raw: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bad.toml"
    config.write_bytes(raw)
    with pytest.raises(ElqueryError, match=rf"^{config}: not valid UTF-8 \(byte 0x[0-9a-f]{{2}} at offset \d+\)$"):
        load_config(config)
    assert _refused(config, tmp_path / "out", capsys).startswith(f"{config}: not valid UTF-8 (byte ")


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_text(_demo_config(tmp_path), encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    read = load_config(marked)
    assert read.name == "Demo KB" and dataclasses.replace(read, path=plain) == load_config(plain)


@pytest.mark.parametrize("value", ["[" * 100_000 + "]" * 100_000, "{x = " * 5000 + "1" + "}" * 5000])
def test_a_config_nested_too_deeply_is_one_line(tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "deep.toml"
    config.write_text(f"name = {value}\n", encoding="utf-8")
    assert _refused(config, tmp_path / "out", capsys) == f"{config}: not valid TOML (nested too deeply)"


def test_a_folder_as_config_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ElqueryError, match=rf"^{tmp_path}: not a readable experiment config \(Is a directory\)$"):
        load_config(tmp_path)


# --- numbers, checked by registry parameters -------------------------------------------------

RETRIEVAL = """knowledge_base = "demo"
queries = "{demo}/queries.json"
[crossval]
scheme = "leave-one-out"
[entity_retrieval]
qrels = "{demo}/qrels-er.txt"
depth = {depth}
[[entity_retrieval.methods]]
model = "bm25"
"""


@pytest.mark.parametrize("depth", ["100000000000", "100001", "0", "-5", "1.5", "nan", "inf"])
def test_a_ranking_depth_out_of_range_is_refused_before_any_work(tmp_path: Path, depth: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "er.toml"
    config.write_text(RETRIEVAL.format(demo=DEMO, depth=depth), encoding="utf-8")
    with pytest.raises(ElqueryError, match=rf"^{config}: entity_retrieval\.depth: depth must be "):
        load_config(config)
    line = _refused(config, tmp_path / "out", capsys)
    assert line.startswith(f"{config}: entity_retrieval.depth: depth must be ")
    if depth.lstrip("-").isdigit():
        assert line.endswith(f"depth must be 1 <= depth <= 100000, got {depth}")


def test_the_largest_depth_is_the_one_of_elquery_rank(tmp_path: Path) -> None:
    from elquery.retrieval.cli import MAX_K

    config = tmp_path / "er.toml"
    config.write_text(RETRIEVAL.format(demo=DEMO, depth=MAX_K), encoding="utf-8")
    assert load_config(config).entity_retrieval.depth == MAX_K == 100_000


@pytest.mark.parametrize(("old", "new", "message"), [
    ("[mention_detection]\ncommonness_threshold = 0", "[mention_detection]\ncommonness_threshold = 2",
     "mention_detection.commonness_threshold: commonness_threshold must be 0 <= commonness_threshold <= 1, got 2"),
    ("tolerance = 0.0001", "tolerance = inf", "expected.tolerance: tolerance must be a number, got inf"),
    ("tolerance = 0.0001", "tolerance = nan", "expected.tolerance: tolerance must be a number, got nan"),
    ("tolerance = 0.0001", "tolerance = -0.5", "expected.tolerance: tolerance must be 0 <= tolerance, got -0.5"),
    ('scheme = "leave-one-out"', 'scheme = "sessions"\nfolds = 1', "crossval.folds: folds must be 2 <= folds, got 1"),
    ('scheme = "leave-one-out"', 'scheme = "sessions"\nfolds = 1.5',
     "crossval.folds: folds must be a whole number, got 1.5"),
])
def test_every_number_is_checked_by_its_parameter(tmp_path: Path, old: str, new: str, message: str) -> None:
    text = _demo_config(tmp_path)
    assert old in text
    config = tmp_path / "numbers.toml"
    config.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(ElqueryError) as raised:
        load_config(config)
    assert str(raised.value) == f"{config}: {message}"


# --- the contents of given inputs, before the first write ------------------------------------

LINKING = """knowledge_base = "demo"
queries = "{demo}/queries.json"
[crossval]
scheme = "leave-one-out"
[interpretation_finding]
qrels = "{demo}/qrels-elq.txt"
[[interpretation_finding.methods]]
method = "cmns"
gif_threshold = [0.1]
[[interpretation_finding.methods]]
method = "run"
run = "{run}"
label = "Given"
[semantic_mapping]
qrels = "{demo}/qrels-er.txt"
[[semantic_mapping.methods]]
method = "cmns"
[[semantic_mapping.methods]]
method = "run"
run = "{sm_run}"
label = "Given"
"""
GOOD_ELQ = "0\t1.0\t<dbpedia:A>\n"
GOOD_TREC = "0 Q0 <dbpedia:A> 1 1.0 given\n"


@pytest.mark.parametrize(("elq", "trec", "error"), [
    ("garbage line\n", GOOD_TREC, r"if\.run:1: bad query id 'garbage line'"),
    (b"q1\t1.0\t<dbpedia:\xff>\n", GOOD_TREC, r"if\.run:1: not valid UTF-8"),
    (GOOD_ELQ, b"q1 Q0 <dbpedia:\xff> 1 1.0 x\n", r"sm\.run:1: not valid UTF-8"),
    (GOOD_ELQ, "q1 Q0 <dbpedia:A> one 1.0 x\n", r"sm\.run:1: "),
])
def test_a_given_run_of_bad_lines_is_refused_before_the_first_write(tmp_path: Path, elq: str | bytes,
                                                                    trec: str | bytes, error: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    runs = {"if.run": elq, "sm.run": trec}
    for name, content in runs.items():
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    config = tmp_path / "linking.toml"
    config.write_text(LINKING.format(demo=DEMO, run=tmp_path / "if.run", sm_run=tmp_path / "sm.run"), encoding="utf-8")
    out = tmp_path / "out"
    line = _refused(config, out, capsys)
    assert re.search(error, line), line
    assert "(the run of method 'Given' of linking.toml)" in line


def test_good_given_runs_pass_the_check(tmp_path: Path) -> None:
    from elquery.experiments.inputs import check_inputs

    (tmp_path / "if.run").write_text(GOOD_ELQ, encoding="utf-8")
    (tmp_path / "sm.run").write_text(GOOD_TREC, encoding="utf-8")
    config = tmp_path / "linking.toml"
    config.write_text(LINKING.format(demo=DEMO, run=tmp_path / "if.run", sm_run=tmp_path / "sm.run"), encoding="utf-8")
    check_inputs(load_config(config), tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("labels", ["garbage line\n", b"q\t1\t<dbpedia:\xff>\n"])
def test_learning_labels_of_bad_lines_are_refused_before_the_first_write(tmp_path: Path, labels: str | bytes,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """An LTR method trained on other queries (``train``): its qrels were read only once the
    features of every query had been cached into ``--out``."""
    pytest.importorskip("sklearn")
    import json

    queries = json.loads((DEMO / "queries.json").read_text(encoding="utf-8"))
    qids = sorted(queries)
    (tmp_path / "test.json").write_text(json.dumps({q: queries[q] for q in qids[:5]}), encoding="utf-8")
    (tmp_path / "train.json").write_text(json.dumps({q: queries[q] for q in qids[5:]}), encoding="utf-8")
    (tmp_path / "labels.txt").write_bytes(labels if isinstance(labels, bytes) else labels.encode("utf-8"))
    config = tmp_path / "ltr.toml"
    config.write_text(f"""knowledge_base = "demo"
queries = "test.json"
[crossval]
scheme = "leave-one-out"
[interpretation_finding]
qrels = "{DEMO}/qrels-elq.txt"
[[interpretation_finding.methods]]
method = "ltr"
gif_threshold = [0.3]
label = "LTR-greedy"
trees = 5
train = {{ queries = "train.json", qrels = "labels.txt" }}
""", encoding="utf-8")
    line = _refused(config, tmp_path / "out", capsys)
    assert line.startswith(f"{tmp_path / 'labels.txt'}:1: ")
    assert line.endswith("(train.qrels of method 'LTR-greedy' of ltr.toml)")
