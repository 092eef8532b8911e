"""The figures of an experiment, drawn with matplotlib (its non-interactive Agg canvas) beside the
tables, as SVG and PNG under ``figures/`` of the output folder:

* ``sweep-TASK-LABEL``: each swept method's mean scores over all queries against each swept
  parameter (interpretation finding: strict and lean F against the threshold s, one line per c,
  and against c, one line per s; semantic mapping and entity retrieval: the task's metric), the
  settings cross-validation chose (methods.md §7) marked with a star and the number of folds that
  chose them;
* ``difference-TASK-LABEL``: the per-query difference of the task's metric between a method's
  cross-validated run and the baseline's, sorted, one bar per query (the ELQ papers' per-query
  plots: Hasibi et al., ICTIR'15, Fig. 3);
* ``precision-recall-if``: mean precision against mean recall of every interpretation-finding
  method (strict and lean, the cross-validated run), with the path of a swept method's settings;
* ``categories-er``: NDCG@10 and MAP of every entity-retrieval method per query category and in
  total (the DBpedia-Entity v2 paper's Table 3 as bars).

``figures/figures.json`` records every figure's files and the values plotted, read back from the
drawn artists (lines and bars), so they can be checked against ``sweep.tsv``, ``per_query.tsv``
and the tables. The same run gives the same bytes: a fixed style, fixed SVG hash salt, no date.
Every SVG element of a plotted series carries the series' id of the index: a line ``NAME--...``,
a bar ``NAME--...--bar-N``.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any

from elquery.experiments.config import RetrievalTaskSpec
from elquery.experiments.sweep import Setting
from elquery.experiments.tables import TOTAL, category_metric
from elquery.files import atomic_output

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from elquery.experiments.runner import ExperimentResult, MethodResult

FIGURES_DIR = "figures"
INDEX = "figures.json"
INDEX_FORMAT = "elquery-figures/1"
FORMATS = ("svg", "png")
HTML_REPORT = "results.html"
SVG_HASH_SALT = "elquery"
DPI = 100
SWEEP, DIFFERENCE, PRECISION_RECALL, CATEGORIES = "sweep", "difference", "precision-recall", "categories"
PREFIXES = tuple(f"{kind}-" for kind in (SWEEP, DIFFERENCE, PRECISION_RECALL, CATEGORIES))
TASK_NAMES = {"if": "interpretation finding", "sm": "semantic mapping", "er": "entity retrieval"}
METRIC_NAMES = {"strict.F": "strict F", "lean.F": "lean F", "strict.P": "strict P", "strict.R": "strict R",
                "lean.P": "lean P", "lean.R": "lean R", "entity.F": "entity F", "entity.P": "entity P",
                "entity.R": "entity R", "map": "MAP", "mrr": "MRR", "success@1": "S@1"}


def metric_name(metric: str) -> str:
    """``strict.F`` -> ``strict F``, ``ndcg@10`` -> ``NDCG@10``."""
    return METRIC_NAMES.get(metric, metric.upper())


def slug(label: str) -> str:
    """A method label in a file name: ``SDM+ELR``, ``BM25_published`` (letters, digits, ``.+-_``)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", label).strip("_") or "method"


@dataclass(frozen=True)
class PlannedFigure:
    """A figure of the experiment: its file name stem under ``figures/``, kind, task, method
    (None: a figure of the whole task) and title."""

    name: str
    kind: str
    task: str
    title: str
    method: str | None = None

    def file(self, fmt: str) -> str:
        """The path of its ``fmt`` file relative to the output folder."""
        return f"{FIGURES_DIR}/{self.name}.{fmt}"


# --- which figures ------------------------------------------------------------------------------

def coordinates(setting: Setting) -> dict[str, str | float]:
    """A setting as named coordinates: ``c``, ``s`` and the retrieval parameters."""
    named: dict[str, str | float] = {}
    if setting.c is not None:
        named["c"] = setting.c
    if setting.s is not None:
        named["s"] = setting.s
    named.update(setting.params)
    return named


def swept_parameters(method: MethodResult) -> list[str]:
    """The parameters that take more than one value in a method's sweep: the threshold s first,
    then c, then the retrieval parameters in grid order."""
    points = [coordinates(setting) for setting in method.sweep]
    names = sorted(dict.fromkeys(name for point in points for name in point), key=lambda n: {"s": 0, "c": 1}.get(n, 2))
    return [name for name in names if len({point.get(name) for point in points}) > 1]


def plan(result: ExperimentResult) -> list[PlannedFigure]:
    """The figures of an experiment, in report order: per task the sweeps, the per-query
    differences against the baseline, then precision-recall (interpretation finding) or the
    categories (entity retrieval)."""
    figures: list[PlannedFigure] = []
    for task in TASK_NAMES:
        methods = [m for m in result.methods if m.task == task]
        if not methods:
            continue
        spec = result.task_spec(task)
        for m in methods:
            swept = swept_parameters(m)
            if swept:
                metrics = " and ".join(metric_name(x) for x in _sweep_metrics(task, spec.metric))
                against = " and ".join(_parameter_name(m, p) for p in swept)
                figures.append(PlannedFigure(f"sweep-{task}-{slug(m.label)}", SWEEP, task,
                                             f"{m.label}: {metrics} against {against} ({TASK_NAMES[task]})", m.label))
        if spec.baseline is not None:
            figures += [PlannedFigure(f"difference-{task}-{slug(m.label)}", DIFFERENCE, task,
                                      f"{m.label} − {spec.baseline}: {metric_name(spec.metric)} per query "
                                      f"({TASK_NAMES[task]})", m.label)
                        for m in methods if m.label != spec.baseline]
        if task == "if":
            figures.append(PlannedFigure("precision-recall-if", PRECISION_RECALL, task,
                                         "Precision and recall per method (interpretation finding)"))
        if task == "er":
            metrics = " and ".join(metric_name(x) for x in _category_metrics(spec))
            figures.append(PlannedFigure("categories-er", CATEGORIES, task,
                                         f"{metrics} per query category (entity retrieval)"))
    return figures


def _sweep_metrics(task: str, objective: str) -> list[str]:
    """The metrics of a sweep figure: strict and lean F for interpretation finding (and the
    objective if another), else the objective."""
    return list(dict.fromkeys(["strict.F", "lean.F", objective])) if task == "if" else [objective]


def _parameter_name(method: MethodResult, parameter: str) -> str:
    if parameter == "s" and method.spec.finder is None and method.task == "if":
        return "ρ_NA"  # TAGME's threshold (methods.md §6)
    return parameter


def _category_metrics(spec: Any) -> list[str]:
    """NDCG@10 and MAP (the first ``map`` metric) of entity retrieval; else its first two metrics."""
    metrics = list(spec.metrics)
    chosen = [m for m in metrics if m == "ndcg@10"][:1] + [m for m in metrics if m.startswith("map")][:1]
    return chosen or metrics[:2]


# --- drawing --------------------------------------------------------------------------------------

@contextmanager
def _style() -> Iterator[None]:
    """matplotlib's default style whatever the user's matplotlibrc, with a fixed SVG hash salt
    (the ids of clip paths and glyphs) so the same figure gives the same bytes."""
    import matplotlib.style

    with matplotlib.style.context("default"), matplotlib.rc_context({"svg.hashsalt": SVG_HASH_SALT,
                                                                      "svg.fonttype": "path"}):
        yield


def _figure(width: float, height: float, panels: int = 1, stacked: bool = False) -> tuple[Figure, list[Axes]]:
    """A figure on the Agg canvas (no pyplot, no interactive backend) with ``panels`` axes of
    ``width`` x ``height`` inches side by side (``stacked``: one above the other)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows, columns = (panels, 1) if stacked else (1, panels)
    figure = Figure(figsize=(width * columns, height * rows), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, [figure.add_subplot(rows, columns, i + 1) for i in range(panels)]


def _color(i: int, n: int) -> Any:
    """The colour of the i-th of n series: matplotlib's ten cycle colours, tab20 beyond ten."""
    if n <= 10:
        return f"C{i}"
    import matplotlib

    return matplotlib.colormaps["tab20"](i % 20)


def _number(value: Any) -> float | None:
    """A plotted value for JSON: a float, None for NaN."""
    number = float(value)
    return None if math.isnan(number) else number


def _line_data(line: Any, labels: Sequence[Any] | None = None) -> dict[str, Any]:
    """A drawn line's id, legend label and points (``labels``: the x values a categorical axis shows)."""
    x = [_number(v) for v in line.get_xdata()] if labels is None else list(labels)
    return {"id": line.get_gid(), "label": line.get_label(), "x": x, "y": [_number(v) for v in line.get_ydata()]}


def _bars_data(gid: str, label: str, bars: Any, labels: Sequence[Any]) -> dict[str, Any]:
    """Drawn bars' id, label, x labels and heights."""
    return {"id": gid, "label": label, "x": list(labels), "y": [_number(p.get_height()) for p in bars.patches]}


def _mean(scores: Mapping[str, float]) -> float:
    return fmean(scores.values()) if scores else math.nan


def _numeric(values: Sequence[Any]) -> list[float] | None:
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def draw_sweep(result: ExperimentResult, figure_plan: PlannedFigure) -> tuple[Figure, list[dict[str, Any]]]:
    """One panel per swept parameter: the sweep's mean scores against its values, a line per metric
    and per value of the other parameters; the chosen settings starred on the objective's line."""
    assert figure_plan.method is not None
    m = result.method(figure_plan.task, figure_plan.method)
    objective = result.task_spec(m.task).metric
    metrics = _sweep_metrics(m.task, objective)
    swept = swept_parameters(m)
    counts = Counter(choice.setting for choice in m.choices)
    figure, axes = _figure(5.2, 3.8, len(swept))
    panels = []
    for ax, parameter in zip(axes, swept):
        groups: dict[tuple[tuple[str, Any], ...], list[Setting]] = {}
        for setting in m.sweep:
            rest = tuple((k, v) for k, v in coordinates(setting).items() if k != parameter)
            groups.setdefault(rest, []).append(setting)
        values = list(dict.fromkeys(coordinates(s)[parameter] for s in m.sweep))
        numbers = _numeric(values)
        position = (dict(zip(values, numbers)) if numbers is not None else {v: float(i) for i, v in enumerate(values)})
        series = []
        for g, (rest, settings) in enumerate(groups.items()):
            settings = sorted(settings, key=lambda s: position[coordinates(s)[parameter]])
            xs = [position[coordinates(s)[parameter]] for s in settings]
            shown = [coordinates(s)[parameter] for s in settings]
            where = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in rest)
            for k, metric in enumerate(metrics):
                ys = [_mean(m.sweep[s].get(metric, {})) for s in settings]
                (line,) = ax.plot(xs, ys, marker="o", markersize=4, color=f"C{(g * len(metrics) + k) % 10}",
                                  linestyle=("-", "--", ":")[k % 3],
                                  label=f"{metric_name(metric)}" + (f", {where}" if where else ""),
                                  gid=f"{figure_plan.name}--{parameter}--{metric}--{g}")
                series.append(_line_data(line, None if numbers is not None else shown)
                              | {"metric": metric, "settings": [str(s) for s in settings]})
            chosen = [s for s in settings if s in counts]
            if chosen:
                star_x = [position[coordinates(s)[parameter]] for s in chosen]
                star_y = [_mean(m.sweep[s].get(objective, {})) for s in chosen]
                (stars,) = ax.plot(star_x, star_y, linestyle="none",
                                   marker="*", markersize=14, color="crimson", zorder=5,
                                   label="cross-validated choice" if g == 0 else "_nolegend_",
                                   gid=f"{figure_plan.name}--{parameter}--chosen--{g}")
                data = _line_data(stars, None if numbers is not None else [coordinates(s)[parameter] for s in chosen])
                series.append(data | {"metric": objective, "settings": [str(s) for s in chosen],
                                      "folds": [counts[s] for s in chosen]})
                for s, x, y in zip(chosen, star_x, star_y):
                    ax.annotate(f"{counts[s]}/{len(m.choices)}", (x, y), textcoords="offset points",
                                xytext=(6, 6), fontsize=8, color="crimson")
        if numbers is not None and min(numbers) > 0 and max(numbers) / min(numbers) >= 50:
            from matplotlib.ticker import FuncFormatter

            ax.set_xscale("log")  # GIF-MLMcg's s spans 0.5 to 100: ticks 1, 10, 100 (not 10^0)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        if numbers is None:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
        name = _parameter_name(m, parameter)
        ax.set_xlabel(name)
        ax.set_ylabel("mean over all queries")
        ax.set_title(f"{m.label} ({TASK_NAMES[m.task]}): against {name}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        panels.append({"parameter": parameter, "xlabel": name, "series": series})
    return figure, panels


def draw_difference(result: ExperimentResult, figure_plan: PlannedFigure) -> tuple[Figure, list[dict[str, Any]]]:
    """Per query, the method's score minus the baseline's (the task's metric, cross-validated runs),
    sorted from the largest gain to the largest loss (ties by query id)."""
    assert figure_plan.method is not None
    spec = result.task_spec(figure_plan.task)
    assert spec.baseline is not None
    metric = spec.metric
    scores = result.method(figure_plan.task, figure_plan.method).per_query[metric]
    baseline = result.method(figure_plan.task, spec.baseline).per_query[metric]
    qids = sorted(set(scores) & set(baseline))
    differences = sorted(((scores[q] - baseline[q], q) for q in qids), key=lambda d: (-d[0], d[1]))
    figure, (ax,) = _figure(min(12.0, max(5.2, 0.12 * len(differences))), 3.8)
    heights = [d for d, _ in differences]
    bars = ax.bar(range(len(heights)), heights, width=0.8 if len(heights) <= 60 else 1.0,
                  color=["tab:green" if d > 0 else "tab:red" if d < 0 else "tab:gray" for d in heights],
                  label=f"{figure_plan.method} − {spec.baseline}")
    gid = f"{figure_plan.name}--difference"
    for i, patch in enumerate(bars.patches):
        patch.set_gid(f"{gid}--bar-{i}")
    ax.axhline(0, color="black", linewidth=0.8)
    better, worse = sum(d > 0 for d in heights), sum(d < 0 for d in heights)
    ax.set_title(f"{figure_plan.method} − {spec.baseline}, {metric_name(metric)} per query\n{better} better, "
                 f"{worse} worse, {len(heights) - better - worse} equal", fontsize=10)
    ax.set_ylabel(f"Δ {metric_name(metric)}")
    ax.set_xlabel("queries, sorted by difference")
    if len(heights) <= 40:
        ax.set_xticks(range(len(heights)), [q for _, q in differences], rotation=90, fontsize=6)
    else:
        ax.set_xticks([])
    ax.set_xlim(-1, max(len(heights), 1))
    ax.grid(axis="y", alpha=0.3)
    return figure, [{"metric": metric, "baseline": spec.baseline, "series": [_bars_data(gid, "difference", bars,
                                                             [q for _, q in differences])]}]


def draw_precision_recall(result: ExperimentResult, figure_plan: PlannedFigure) -> tuple[Figure, list[dict[str, Any]]]:
    """Mean precision against mean recall of each method's cross-validated run, strict (filled) and
    lean (open); a swept method's settings (strict, over all queries) as a thin path."""
    methods = [m for m in result.methods if m.task == figure_plan.task]
    figure, (ax,) = _figure(6.4, 4.6)
    series = []
    for i, m in enumerate(methods):
        color = _color(i, len(methods))
        if len(m.sweep) > 1:
            settings = list(m.sweep)
            (path,) = ax.plot([_mean(m.sweep[s].get("strict.R", {})) for s in settings],
                              [_mean(m.sweep[s].get("strict.P", {})) for s in settings], color=color, alpha=0.4,
                              linewidth=1, marker=".", label="_nolegend_", gid=f"{figure_plan.name}--{slug(m.label)}--sweep")
            data = _line_data(path)
            data["settings"] = [str(s) for s in settings]
            series.append(data)
        for kind, fill in (("strict", color), ("lean", "none")):
            (point,) = ax.plot([m.mean(f"{kind}.R")], [m.mean(f"{kind}.P")], linestyle="none", marker="o" if kind == "strict" else "s",
                               markersize=8, color=color, markerfacecolor=fill, label=f"{m.label} ({kind})",
                               gid=f"{figure_plan.name}--{slug(m.label)}--{kind}")
            series.append(_line_data(point) | {"method": m.label, "kind": kind})
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_title("Interpretation finding: precision and recall\n(filled: strict, open: lean; thin: swept settings)",
                 fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    return figure, [{"series": series}]


def draw_categories(result: ExperimentResult, figure_plan: PlannedFigure) -> tuple[Figure, list[dict[str, Any]]]:
    """One panel per metric (NDCG@10, MAP): per query category and in total, a bar per method
    (the mean of its cross-validated run's per-query scores, as the table)."""
    spec = result.task_spec(figure_plan.task)
    assert isinstance(spec, RetrievalTaskSpec)
    methods = [m for m in result.methods if m.task == figure_plan.task]
    metrics = _category_metrics(spec)
    groups = [c.name for c in spec.categories if category_metric(c.name, metrics[0]) in methods[0].per_query]
    groups.append(TOTAL)
    figure, axes = _figure(min(12.0, max(6.0, 0.14 * len(groups) * len(methods) + 2.5)), 3.4, len(metrics), stacked=True)
    width = 0.8 / len(methods)
    panels = []
    for ax, metric in zip(axes, metrics):
        series = []
        for i, m in enumerate(methods):
            heights = [_mean(m.per_query[metric if group == TOTAL else category_metric(group, metric)]) for group in groups]
            bars = ax.bar([g + (i - (len(methods) - 1) / 2) * width for g in range(len(groups))], heights, width,
                          color=_color(i, len(methods)), label=m.label)
            gid = f"{figure_plan.name}--{metric}--{slug(m.label)}"
            for j, patch in enumerate(bars.patches):
                patch.set_gid(f"{gid}--bar-{j}")
            series.append(_bars_data(gid, m.label, bars, groups) | {"method": m.label})
        ax.set_xticks(range(len(groups)), groups, fontsize=8)
        ax.set_ylabel(metric_name(metric))
        ax.set_title(f"Entity retrieval: {metric_name(metric)} per query category", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        panels.append({"metric": metric, "series": series})
    axes[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    return figure, panels


DRAW = {SWEEP: draw_sweep, DIFFERENCE: draw_difference, PRECISION_RECALL: draw_precision_recall,
        CATEGORIES: draw_categories}


def rendered(figure: Figure, fmt: str) -> bytes:
    """A figure's file: SVG without a date (same figure, same bytes) or PNG at :data:`DPI`."""
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {}
    figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


def _write_bytes(path: Path, data: bytes) -> None:
    """Write a file beside ``path`` and rename it when complete (nothing half-written remains)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_figures(result: ExperimentResult) -> list[dict[str, Any]]:
    """Draw every planned figure into ``OUT/figures/`` (SVG and PNG) and write the index
    ``figures.json`` with the values plotted; returns the index's entries."""
    folder = result.out_dir / FIGURES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    with _style():
        for figure_plan in plan(result):
            figure, panels = DRAW[figure_plan.kind](result, figure_plan)
            for fmt in FORMATS:
                _write_bytes(result.out_dir / figure_plan.file(fmt), rendered(figure, fmt))
            entries.append({"name": figure_plan.name, "kind": figure_plan.kind, "task": figure_plan.task,
                            "method": figure_plan.method, "title": figure_plan.title,
                            "files": {fmt: f"{figure_plan.name}.{fmt}" for fmt in FORMATS}, "panels": panels})
    with atomic_output(folder / INDEX) as stream:
        json.dump({"format": INDEX_FORMAT, "experiment": result.config.name, "figures": entries}, stream,
                  indent=1, ensure_ascii=False)
        stream.write("\n")
    drawn = {f"{entry['name']}.{fmt}" for entry in entries for fmt in FORMATS}
    for path in folder.iterdir():  # a figure of an earlier run of another config (a method left out)
        if path.suffix[1:] in FORMATS and path.name.startswith(PREFIXES) and path.name not in drawn:
            path.unlink()
    return entries


def read_index(out_dir: Path) -> list[dict[str, Any]]:
    """The figures an experiment folder holds (its ``figures/figures.json``); none without it."""
    path = out_dir / FIGURES_DIR / INDEX
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return index.get("figures", []) if isinstance(index, dict) and index.get("format") == INDEX_FORMAT else []


# --- the reports ----------------------------------------------------------------------------------

def markdown_section(result: ExperimentResult) -> str:
    """The report's ``Figures`` section: each figure by its title, shown from its SVG, with its PNG."""
    figures = plan(result)
    if not figures:
        return ""
    lines = ["## Figures\n",
             f"Drawn with matplotlib into `{FIGURES_DIR}/` (SVG and PNG; the plotted values in "
             f"`{FIGURES_DIR}/{INDEX}`); `{HTML_REPORT}` shows them with the tables.\n"]
    for figure in figures:
        lines.append(f"![{figure.title}]({figure.file('svg')})  \n"
                     f"{figure.title}: [`{figure.file('svg')}`]({figure.file('svg')}), "
                     f"[`{figure.file('png')}`]({figure.file('png')})\n")
    return "\n".join(lines)


HTML_STYLE = """body { font-family: system-ui, sans-serif; margin: 2rem auto; padding: 0 1rem; max-width: 72rem; color: #222; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .9rem; }
td, th { border-bottom: 1px solid #ddd; padding: .2rem .6rem; }
img { max-width: 100%; height: auto; display: block; margin: .6rem 0 .2rem; }"""


def html_report(markdown: str, title: str) -> str:
    """The Markdown report as a page that opens offline: no script, no remote resource; its images
    are the figures' SVG files, by paths relative to the output folder."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    escaped = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escaped}</title>\n'
            f"<style>\n{HTML_STYLE}\n</style>\n</head>\n<body>\n{body}</body>\n</html>\n")


def write_html(result: ExperimentResult) -> Path:
    """``OUT/results.html``: the report with its figures."""
    path = result.out_dir / HTML_REPORT
    with atomic_output(path) as stream:
        stream.write(html_report(result.report, result.config.name))
    return path
