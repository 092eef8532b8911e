"""The figures `elquery experiment` draws beside its tables (elquery.experiments.figures): for the
demo experiment, a sweep of c and s on the real DBpedia sample and entity retrieval on the real
DBpedia-Entity v2 queries over the sample's index, every plotted value (read back from the drawn
artists into figures/figures.json) equals the numbers of the tables: sweep.tsv, parameters.tsv,
per_query.tsv and results.md; every series is an element of the SVG; the same run gives the same
bytes; the Markdown and HTML reports name and show every figure, and the HTML opens offline."""

from __future__ import annotations

import csv
import json
import math
import re
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from statistics import fmean

import pytest

from elquery.base import run
from elquery.experiments import run_experiment
from elquery.experiments.cli import register
from elquery.experiments.figures import write_figures
from elquery.experiments.runner import ExperimentResult

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
SVG = "{http://www.w3.org/2000/svg}"


# --- the tables, read back as the files they are -----------------------------------------------

def tsv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def setting_text(row: Mapping[str, str]) -> str:
    """A row's setting as the report prints it: ``c=0.1 s=0.5``, ``k1=0.9 b=0.4``, ``default``."""
    parts = [f"{name}={float(row[name]):g}" for name in ("c", "s") if row[name]]
    return " ".join(parts + ([row["params"]] if row["params"] else [])) or "default"


def markdown_cells(report: str, heading: str) -> dict[str, dict[str, str]]:
    """The table under ``## heading``: row name -> column header -> cell (markers stripped)."""
    section = report.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    headers = [h.strip() for h in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip().rstrip("†‡") for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(headers[1:], cells[1:]))
    return rows


def paper(value: float) -> str:
    text = f"{value:.4f}"
    return text[1:] if text.startswith("0.") else text


def check_figures(out: Path, objective: Mapping[str, str]) -> dict[str, dict]:
    """Every figure of ``out`` against its tables; returns the figures by name.
    ``objective``: the metric each task optimizes (and compares with its baseline)."""
    index = json.loads((out / "figures" / "figures.json").read_text())
    assert index["format"] == "elquery-figures/1"
    sweep = {(r["task"], r["method"], setting_text(r), r["metric"]): float(r["value"]) for r in tsv(out / "sweep.tsv")}
    chosen: dict[tuple[str, str], Counter[str]] = {}
    for r in tsv(out / "parameters.tsv"):
        chosen.setdefault((r["task"], r["method"]), Counter())[setting_text(r)] += 1
    per_query: dict[tuple[str, str, str], dict[str, float]] = {}
    for r in tsv(out / "per_query.tsv"):
        per_query.setdefault((r["task"], r["method"], r["metric"]), {})[r["qid"]] = float(r["value"])
    report = (out / "results.md").read_text()
    figures = {f["name"]: f for f in index["figures"]}
    for name, figure in figures.items():
        task, method = figure["task"], figure["method"]
        svg_text = (out / "figures" / f"{name}.svg").read_text()
        ids = {element.get("id") for element in ElementTree.fromstring(svg_text).iter() if element.get("id")}
        assert (out / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        for panel in figure["panels"]:
            for series in panel["series"]:
                if figure["kind"] in ("difference", "categories"):
                    assert {f"{series['id']}--bar-{i}" for i in range(len(series["y"]))} <= ids
                else:
                    assert series["id"] in ids
        if figure["kind"] == "sweep":
            for panel in figure["panels"]:
                parameter = panel["parameter"]
                for series in panel["series"]:
                    for x, y, setting in zip(series["x"], series["y"], series["settings"], strict=True):
                        assert y == pytest.approx(sweep[(task, method, setting, series["metric"])], abs=1e-9)
                        value = dict(part.split("=", 1) for part in setting.split())[parameter]
                        assert x == (pytest.approx(float(value)) if isinstance(x, float) else value)
                # the cross-validated choices, starred on the objective's line: each chosen setting
                # once per panel, with the number of folds that chose it
                stars = [s for s in panel["series"] if "folds" in s]
                assert {s["metric"] for s in stars} == {objective[task]}
                starred = [(setting, n) for s in stars for setting, n in zip(s["settings"], s["folds"], strict=True)]
                assert sorted(starred) == sorted(chosen[(task, method)].items())
        elif figure["kind"] == "difference":
            [panel] = figure["panels"]
            [series] = panel["series"]
            scores = per_query[(task, method, objective[task])]
            baseline = per_query[(task, panel["baseline"], objective[task])]
            expected = sorted(((scores[q] - baseline[q], q) for q in scores), key=lambda d: (-d[0], d[1]))
            assert series["x"] == [q for _, q in expected]
            assert series["y"] == pytest.approx([d for d, _ in expected], abs=1e-9)
        elif figure["kind"] == "precision-recall":
            table = markdown_cells(report, "Interpretation finding")
            points = [s for s in figure["panels"][0]["series"] if "kind" in s]
            assert {(s["method"], s["kind"]) for s in points} == {(m, k) for m in table for k in ("strict", "lean")}
            for s in points:
                precision = fmean(per_query[(task, s["method"], f"{s['kind']}.P")].values())
                recall = fmean(per_query[(task, s["method"], f"{s['kind']}.R")].values())
                assert (s["x"], s["y"]) == (pytest.approx([recall]), pytest.approx([precision]))
                assert paper(s["y"][0]) == table[s["method"]][f"{s['kind']} P"]
                assert paper(s["x"][0]) == table[s["method"]][f"{s['kind']} R"]
        elif figure["kind"] == "categories":
            table = markdown_cells(report, "Entity retrieval")
            for panel in figure["panels"]:
                assert {s["method"] for s in panel["series"]} == set(table)
                for series in panel["series"]:
                    for group, value in zip(series["x"], series["y"], strict=True):
                        metric = panel["metric"] if group == "Total" else f"{group}:{panel['metric']}"
                        assert value == pytest.approx(fmean(per_query[(task, series["method"], metric)].values()))
                        assert paper(value) == table[series["method"]][f"{group} {panel['metric'].upper()}"]
        for fmt in ("svg", "png"):  # named in the Markdown report
            assert f"](figures/{name}.{fmt})" in report
    return figures


def check_html(out: Path, figures: Mapping[str, dict]) -> None:
    """results.html shows every figure by a relative path to a file that exists, and nothing in it
    loads from elsewhere (no script, no remote address)."""
    page = (out / "results.html").read_text()
    sources = re.findall(r'<img src="([^"]+)"', page)
    assert sources == [f"figures/{name}.svg" for name in figures]
    assert all((out / source).is_file() for source in sources)
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//', page)
    assert "<table>" in page


# --- the demo experiment: interpretation finding and semantic mapping ---------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> ExperimentResult:
    return run_experiment(CONFIGS / "demo.toml", tmp_path_factory.mktemp("figures-demo") / "out", progress=False)


def test_demo_figures_plot_the_tables(demo: ExperimentResult) -> None:
    figures = check_figures(demo.out_dir, {"if": "strict.F", "sm": "map"})
    assert sorted(figures) == sorted([
        "sweep-if-GIF-CMNS", "sweep-if-GIF-MLMcg",  # TopRanked-CMNS and the sm methods sweep nothing
        "difference-if-GIF-CMNS", "difference-if-GIF-MLMcg", "precision-recall-if", "difference-sm-MLMcg"])
    # GIF-MLMcg: F against s = 0.1, 0.25, 0.5, 1 (c = 0.1); leave-one-out chose s = 0.1 in all 10 folds
    [panel] = figures["sweep-if-GIF-MLMcg"]["panels"]
    assert panel["parameter"] == "s"
    strict, lean, stars = panel["series"]
    assert strict["x"] == lean["x"] == [0.1, 0.25, 0.5, 1.0]
    assert strict["y"] == pytest.approx([0.6667, 0.6667, 0.6667, 0.6667], abs=1e-4)
    assert (stars["x"], stars["folds"]) == ([0.1], [10])
    # 2 queries gain strict F over TopRanked-CMNS and 1 loses (demo_10), the rest are equal
    [bars] = figures["difference-if-GIF-MLMcg"]["panels"][0]["series"]
    assert sum(d > 0 for d in bars["y"]) == 2 and bars["x"][-1] == "demo_10" and bars["y"][-1] == pytest.approx(-1)
    check_html(demo.out_dir, figures)


def test_the_same_run_draws_the_same_bytes(demo: ExperimentResult, tmp_path: Path) -> None:
    """Drawn again into another folder, under another user style and SVG salt: byte-identical."""
    import matplotlib

    with matplotlib.rc_context({"lines.linewidth": 7.0, "font.size": 20, "svg.hashsalt": None}):
        write_figures(replace(demo, out_dir=tmp_path))
    first = sorted(p.name for p in (demo.out_dir / "figures").iterdir())
    assert first == sorted(p.name for p in (tmp_path / "figures").iterdir())
    for name in first:
        assert (tmp_path / "figures" / name).read_bytes() == (demo.out_dir / "figures" / name).read_bytes(), name
    assert b"<dc:date>" not in (tmp_path / "figures" / "sweep-if-GIF-CMNS.svg").read_bytes()


def test_check_ignores_the_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--check compares the numbers only: its lines are the [expected] figures', the pictures are
    still drawn beside the tables."""
    out = tmp_path / "out"
    assert run([register], prog="elquery", argv=["experiment", str(CONFIGS / "demo.toml"), "--out", str(out),
                                                 "--check"]) == 0
    checks = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("OK", "FAIL"))]
    assert len(checks) == 10 and all(line.startswith("OK   ") for line in checks)
    assert (out / "figures" / "sweep-if-GIF-MLMcg.svg").is_file()


# --- the real sample ----------------------------------------------------------------------------

def test_sample_sweep_of_c_and_s(sample_link_artefacts: tuple[Path, Path], elq_data: Path, tmp_path: Path) -> None:
    """GIF-MLMcg swept over c and s on the real sample and the first 40 Y-ERD queries: a panel
    against s (a line per c and metric) and one against c (a line per s and metric)."""
    index, surface_forms = sample_link_artefacts
    queries = dict(sorted(json.loads((elq_data / "y-erd" / "queries.json").read_text()).items())[:40])
    (tmp_path / "queries.json").write_text(json.dumps(queries))
    config = tmp_path / "sweep.toml"
    config.write_text(f"""
name = "Y-ERD (first 40), c and s"
index = "{index}"
surface_forms = "{surface_forms}"
queries = "queries.json"
[crossval]
folds = 4
[interpretation_finding]
qrels = "{elq_data / 'y-erd' / 'qrels-elq.txt'}"
baseline = "TopRanked-CMNS"
[[interpretation_finding.methods]]
method = "cmns"
finder = "top-ranked"
[[interpretation_finding.methods]]
method = "mlmcg"
commonness_threshold = [0.05, 0.2]
gif_threshold = [0.5, 5, 50]
""")
    result = run_experiment(config, tmp_path / "out", progress=False)
    figures = check_figures(result.out_dir, {"if": "strict.F"})
    against_s, against_c = figures["sweep-if-GIF-MLMcg"]["panels"]
    assert (against_s["parameter"], against_c["parameter"]) == ("s", "c")
    lines_s = [s for s in against_s["series"] if "folds" not in s]
    lines_c = [s for s in against_c["series"] if "folds" not in s]
    assert [s["x"] for s in lines_s] == [[0.5, 5.0, 50.0]] * 4  # (c = 0.05, 0.2) x (strict F, lean F)
    assert [s["x"] for s in lines_c] == [[0.05, 0.2]] * 6  # (s = 0.5, 5, 50) x (strict F, lean F)
    assert not math.isnan(lines_s[0]["y"][0])
    check_html(result.out_dir, figures)


def test_sample_entity_retrieval_per_category(sample_link_artefacts: tuple[Path, Path], elq_data: Path,
                                              tmp_path: Path) -> None:
    """BM25 (k1 swept) and LM on the real DBpedia-Entity v2 queries, qrels and folds over the
    sample's index: NDCG@10 and MAP@100 per category as the table prints them."""
    data = elq_data.parent / "dbpedia-entity-v2"  # beside the ELQ collections in the shared data
    if not data.is_dir():
        pytest.skip(f"real data not found at {data}")
    index, _ = sample_link_artefacts
    config = tmp_path / "er.toml"
    folds = ", ".join(f'"{data / "folds" / name}"' for name in ("SemSearch-ES.json", "INEX-LD.json",
                                                                 "ListSearch.json", "QALD2.json"))
    config.write_text(f"""
name = "DBpedia-Entity v2 on the sample"
index = "{index}"
queries = "{data / 'queries-v2_stopped.txt'}"
[crossval]
scheme = "given"
files = [{folds}]
[entity_retrieval]
qrels = "{data / 'qrels-v2.txt'}"
metric = "ndcg@100"
depth = 100
baseline = "BM25"
[entity_retrieval.categories]
"SemSearch ES" = ["SemSearch_ES"]
"INEX-LD" = ["INEX_LD"]
"ListSearch" = ["SemSearch_LS", "INEX_XER", "TREC_Entity"]
"QALD-2" = ["QALD2_te", "QALD2_tr"]
[[entity_retrieval.methods]]
model = "bm25"
label = "BM25"
params = {{ k1 = [0.9, 1.2], b = 0.4 }}
[[entity_retrieval.methods]]
model = "lm"
label = "LM"
""")
    result = run_experiment(config, tmp_path / "out", progress=False)
    figures = check_figures(result.out_dir, {"er": "ndcg@100"})
    assert sorted(figures) == ["categories-er", "difference-er-LM", "sweep-er-BM25"]
    ndcg, average_precision = figures["categories-er"]["panels"]
    assert (ndcg["metric"], average_precision["metric"]) == ("ndcg@10", "map@100")
    assert ndcg["series"][0]["x"] == ["SemSearch ES", "INEX-LD", "ListSearch", "QALD-2", "Total"]
    [bars] = figures["difference-er-LM"]["panels"][0]["series"]
    assert len(bars["x"]) == 467
    check_html(result.out_dir, figures)


def test_a_rerun_removes_the_plots_of_methods_left_out(demo: ExperimentResult, tmp_path: Path) -> None:
    """Plots of a method an earlier config had are removed; other files in figures/ are kept."""
    folder = tmp_path / "figures"
    folder.mkdir()
    for name in ("sweep-if-Gone.svg", "difference-sm-Gone.png", "notes.svg", "sweep-if-Gone.txt"):
        (folder / name).write_text("earlier")
    entries = write_figures(replace(demo, out_dir=tmp_path))
    drawn = {f"{e['name']}.{fmt}" for e in entries for fmt in ("svg", "png")}
    assert {p.name for p in folder.iterdir()} == drawn | {"figures.json", "notes.svg", "sweep-if-Gone.txt"}


def test_a_parameter_that_is_not_a_number_is_a_categorical_axis(demo: ExperimentResult, tmp_path: Path) -> None:
    """A swept parameter with text values (e.g. a retrieval model's field names) is plotted at
    positions 0, 1, ... labelled by its values, the values of the sweep in config order."""
    from elquery.experiments.crossval import FoldChoice
    from elquery.experiments.sweep import Setting

    method = demo.method("if", "GIF-CMNS")
    settings = [Setting(0.1, 0.05, (("fields", name),)) for name in ("names", "abstract", "all")]
    scores = [0.25, 0.75, 0.5]  # strict F of the one query, per setting
    sweep = {s: {"strict.F": {"q": f}, "lean.F": {"q": 1 - f}} for s, f in zip(settings, scores)}
    choices = tuple(FoldChoice(fold, settings[1], 0.75) for fold in demo.folds)
    methods = tuple(replace(m, sweep=sweep, choices=choices) if m is method else m for m in demo.methods)
    [sweep_figure] = [e for e in write_figures(replace(demo, out_dir=tmp_path, methods=methods))
                      if e["name"] == "sweep-if-GIF-CMNS"]
    [panel] = sweep_figure["panels"]
    strict, lean, stars = panel["series"]
    assert panel["parameter"] == "fields"
    assert strict["x"] == lean["x"] == ["names", "abstract", "all"]
    assert (strict["y"], lean["y"]) == (scores, [0.75, 0.25, 0.5])
    assert (stars["x"], stars["y"], stars["folds"]) == (["abstract"], [0.75], [len(demo.folds)])
    svg = (tmp_path / "figures" / f"{sweep_figure['name']}.svg").read_text()
    assert all(f'id="{s["id"]}"' in svg for s in panel["series"])
