"""`evaluate elq|rank|compare` through elquery.evaluation.cli.main."""

import argparse
import json
from pathlib import Path

import pytest

from elquery.evaluation.cli import main, register

QRELS = "q1\nq2\t1\t<a>\nq3\nq4\t1\t<a>\t<b>\nq5\t1\t<a>\t<c>\nq5\t1\t<b>\t<c>\nq6\t1\t<a>\t<b>\n"
RUN = ("q1\nq3\t0.5\t<a>\nq4\t0.9\t<a>\nq5\t0.8\t<a>\t<c>\nq5\t0.2\t<d>\n"
       "q6\t0.7\t<a>\t<b>\nq6\t0.6\t<a>\nextra\t1\t<z>\n")
# Per query strict F: q1 1, q2 0, q3 0, q4 0, q5 1/2, q6 2/3 (see test_eval_interpretation).
RUN_B = "q1\nq2\t1\t<a>\nq4\t1\t<a>\t<b>\n"
# Per query strict F: q1 1, q2 1, q3 1, q4 1, q5 0, q6 0.

TREC_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq3 0 d4 2\n"
TREC_RUN = "q1 Q0 d2 1 2.0 a\nq1 Q0 d1 2 1.0 a\nq2 Q0 d3 1 1.0 a\nq3 Q0 d4 1 1.0 a\n"
TREC_RUN_B = "q1 Q0 d1 1 2.0 b\nq2 Q0 d9 1 1.0 b\n"


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, text in {"qrels": QRELS, "run": RUN, "run_b": RUN_B, "tqrels": TREC_QRELS,
                       "trun": TREC_RUN, "trun_b": TREC_RUN_B}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = str(tmp_path / name)
    return out


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_elq_json(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["evaluate", "elq", "--qrels", files["qrels"], "--run", files["run"]])
    assert set(data) == {"queries", "strict", "lean", "entity"}
    assert data["queries"] == 6
    for part in ("strict", "lean", "entity"):
        assert set(data[part]) == {"P", "R", "F", "F_of_means"}
    assert data["strict"] == pytest.approx({"P": 1 / 3, "R": 5 / 12, "F": 13 / 36,
                                            "F_of_means": 10 / 27})
    assert data["lean"]["F"] == pytest.approx(233 / 504)


def test_elq_warns_about_run_queries_not_in_qrels(
        files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "elq", "--qrels", files["qrels"], "--run", files["run"]]) == 0
    captured = capsys.readouterr()
    assert "1 of 6 queries are not in the qrels" in captured.err
    assert "strict" in captured.out and "F_of_means" in captured.out


def test_elq_per_query(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["evaluate", "elq", "--qrels", files["qrels"], "--run", files["run"],
                             "--per-query"])
    assert sorted(data["per_query"]) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert data["per_query"]["q4"]["entity"] == pytest.approx({"P": 1, "R": 0.5, "F": 2 / 3})
    assert main(["evaluate", "elq", "--qrels", files["qrels"], "--run", files["run"],
                 "--per-query"]) == 0
    table = capsys.readouterr().out
    assert "strict.P" in table and "\nq4 " in table


def test_rank_json_keyed_by_names_as_given(
        files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["evaluate", "rank", "--qrels", files["tqrels"], "--run",
                             files["trun"], "--metrics", "map@100,P@1,ndcg@10,mrr,Success@1"])
    assert data == {"queries": 3, "aggregate": pytest.approx({
        "map@100": (0.5 + 1 + 1) / 3, "P@1": 2 / 3, "ndcg@10": (1 / 1.5849625007211562 + 2) / 3,
        "mrr": (0.5 + 1 + 1) / 3, "Success@1": 2 / 3})}


def test_rank_per_query_table(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "rank", "--qrels", files["tqrels"], "--run", files["trun"],
                 "--metrics", "map", "--per-query"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "queries: 3"
    assert lines[1].split() == ["qid", "map"]
    assert lines[2].split() == ["q1", "0.5000"]
    assert lines[-1].split() == ["all", "0.8333"]


def test_rank_scores_judged_queries_missing_from_the_run_as_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """trec_eval -c / ir_measures: q1..q3 judged, the run answers only q1 (correctly): MAP is
    (1 + 0 + 0) / 3, not 1.0 over the answered query alone."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n", encoding="utf-8")
    run.write_text("q1 Q0 a 1 1.0 x\nq9 Q0 a 1 1.0 x\n", encoding="utf-8")
    argv = ["evaluate", "rank", "--qrels", str(qrels), "--run", str(run), "--metrics", "map"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "queries: 3"
    assert captured.out.splitlines()[-1].split() == ["all", "0.3333"]
    assert "2 of 3 judged queries are missing from the run and score 0" in captured.err
    assert "1 of 2 queries are not in the qrels" in captured.err


def test_rank_skip_missing_is_the_explicit_opt_out(
        files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "rank", "--qrels", files["tqrels"], "--run", files["trun_b"],
            "--metrics", "map"]
    data = run_json(capsys, argv + ["--per-query"])
    assert data["queries"] == 3 and data["per_query"]["q3"] == {"map": 0.0}
    assert data["aggregate"]["map"] == pytest.approx((1 + 0 + 0) / 3)
    skipped = run_json(capsys, argv + ["--skip-missing"])
    assert skipped["queries"] == 2 and skipped["aggregate"]["map"] == pytest.approx(0.5)


def test_compare_elq(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["evaluate", "compare", "--qrels", files["qrels"], files["run"],
                             files["run_b"], "--metric", "strict.F"])
    assert data["metric"] == "strict.F" and data["queries"] == 6
    assert data["run_a"] == {"path": files["run"], "mean": pytest.approx(13 / 36)}
    assert data["run_b"]["mean"] == pytest.approx(4 / 6)
    assert data["difference"] == pytest.approx(13 / 36 - 4 / 6)
    assert set(data["t_test"]) == {"statistic", "p_value"}
    assert data["randomization"]["trials"] == 10000 and data["randomization"]["seed"] == 0
    # 2^6 = 64 <= trials: the exact test
    assert 0 < data["randomization"]["p_value"] <= 1


def test_compare_rank(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["evaluate", "compare", "--qrels", files["tqrels"], files["trun"],
                             files["trun_b"], "--metric", "map", "--trials", "100", "--seed", "7"])
    # per query A (0.5, 1, 1), B (1, 0, 0: q3 missing from B scores 0)
    assert data["queries"] == 3
    assert (data["run_a"]["mean"], data["run_b"]["mean"]) == pytest.approx((2.5 / 3, 1 / 3))
    assert data["randomization"]["seed"] == 7
    assert main(["evaluate", "compare", "--qrels", files["tqrels"], files["trun"],
                 files["trun_b"], "--metric", "map"]) == 0
    assert "paired t-test" in capsys.readouterr().out


def test_bad_input_is_one_error_line(files: dict[str, str], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("q1\t1\t<a>\nq1\tx\t<a>\n", encoding="utf-8")
    assert main(["evaluate", "elq", "--qrels", files["qrels"], "--run", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {bad}:2: score 'x' is not a number")
    assert captured.err.count("\n") == 1


def test_missing_file(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "rank", "--qrels", files["tqrels"], "--run", "/nonexistent"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "/nonexistent" in err and err.count("\n") == 1


def test_no_evaluable_query(files: dict[str, str], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    other.write_text("zz Q0 d1 1 1.0 a\n", encoding="utf-8")
    data = run_json(capsys, ["evaluate", "rank", "--qrels", files["tqrels"], "--run", str(other),
                             "--metrics", "map"])
    assert data == {"queries": 3, "aggregate": {"map": 0.0}}
    assert main(["evaluate", "rank", "--qrels", files["tqrels"], "--run", str(other),
                 "--skip-missing"]) == 2
    assert "no query of the run" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["evaluate", "rank", "--qrels", "q", "--run", "r", "--metrics", "map,foo"],
    ["evaluate", "rank", "--qrels", "q", "--run", "r", "--metrics", "map,map"],
    ["evaluate", "compare", "--qrels", "q", "a", "b", "--metric", "strict.X"],
    ["evaluate", "compare", "--qrels", "q", "a", "b", "--metric", "map", "--trials", "0"],
    ["evaluate"],
])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2


def test_register_adds_one_evaluate_command() -> None:
    parser = argparse.ArgumentParser(prog="elquery")
    subparsers = parser.add_subparsers(dest="command")
    register(subparsers)
    assert list(subparsers.choices) == ["evaluate"]
    args = parser.parse_args(["evaluate", "elq", "--qrels", "q", "--run", "r"])
    assert callable(args.func) and args.format == "table" and not args.per_query
    args = parser.parse_args(["evaluate", "rank", "--qrels", "q", "--run", "r"])
    assert args.metrics == ["map@100", "p@10", "ndcg@10", "mrr"]
