"""Run an experiment description end to end (methods.md §7-8): sweep every method over its
parameter grid, choose the parameters by cross-validation on the training folds, evaluate the
test-fold results, test significance against the baseline and write the tables. Entity retrieval
is evaluated per query category and over all queries (DBpedia-Entity v2, Hasibi et al. SIGIR'17).

Files written under the output folder (each to a temporary name, renamed on success):

* ``runs/<label>/<setting>.<hash>.{elq,trec}``: every swept run; ``cache/``: scored triples;
* ``runs/<label>/cross-validated.{elq,trec}``: each query answered with its fold's parameters;
* ``folds.tsv`` (qid, test fold), ``parameters.tsv`` (chosen setting per method and fold, with its
  mean training objective), ``sweep.tsv`` (mean objective of every setting over all queries);
* ``per_query.tsv``: task, method, qid, metric, value of the cross-validated runs and of
  mention-detection recall per source (an entity-retrieval metric of one query category is
  ``CATEGORY:METRIC``);
* ``results.md``: the tables in the layout of the ICTIR'15 tables and of the DBpedia-Entity v2
  paper's Table 3;
* ``ltr-models.tsv``: the models a learning method (LTR without a model) trained inside the folds
  (:mod:`elquery.experiments.fold_models`), their files under ``cache/`` and training queries;
* ``params.json``: the tuned thresholds of interpretation finding's GIF and TAGME methods, for
  ``elquery link --params``, ``elquery serve --params`` and ``Linker(..., params=...)``
  (:mod:`elquery.linking.params`; :func:`tuned_params` says how they are chosen).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any


from elquery.evaluation.interpretation import evaluate_interpretations
from elquery.evaluation.mentions import MentionRecall, mention_detection_recall
from elquery.evaluation.rank import evaluate_rankings, relevant_entities
from elquery.base import ElqueryError
from elquery.experiments.config import (COMMONNESS, GIVEN, IF_METRICS, LEAVE_ONE_OUT, TOP_RANKED, ExpectedFigure,
                                        ExperimentConfig, MethodSpec, RetrievalTaskSpec, TaskSpec, load_config)
from elquery.experiments.crossval import FoldChoice, choose, combine, cross_validate
from elquery.experiments.entity_ids import ExperimentIds
from elquery.experiments.figures import markdown_section, write_figures, write_html
from elquery.experiments.folds import Fold, given_folds, leave_one_out, session_folds
from elquery.experiments.inputs import check_inputs
from elquery.formats.lines import content_lines
from elquery.experiments.learning import learning_methods, learning_note
from elquery.experiments.sweep import Backend, Ranker, RunStore, Setting, grid
from elquery.experiments.tables import (IF_COLUMNS, MD_COLUMNS, SM_COLUMNS, TOTAL, Column, category_columns,
                                        category_metric, markdown_table, significance, significance_note)
from elquery.files import atomic_output
from elquery.linking.methods import METHODS
from elquery.linking.params import PARAMS_FILE, LinkingParams, MethodParams, write_params
from elquery.linking.types import Candidate

if TYPE_CHECKING:
    from elquery.experiments.fold_models import FoldLearning

TASKS = {"if": "Interpretation finding", "sm": "Semantic mapping", "er": "Entity retrieval"}
SOURCES = ("KB", "Web", "KB+Web")
Scores = dict[str, dict[str, float]]  # metric -> qid -> score


@dataclass(frozen=True)
class MethodResult:
    """One method of one task: the sweep, the choices per fold and the cross-validated
    (test-fold) scores."""

    task: str
    spec: MethodSpec
    choices: tuple[FoldChoice[Setting], ...]
    per_query: Mapping[str, Mapping[str, float]]
    sweep: Mapping[Setting, Mapping[str, Mapping[str, float]]]
    run: Path
    runs: Mapping[Setting, Path]

    @property
    def label(self) -> str:
        return self.spec.label

    def mean(self, metric: str) -> float:
        """Macro average of ``metric`` over the scored queries."""
        return fmean(self.per_query[metric].values())


@dataclass(frozen=True)
class CheckedFigure:
    """An expected figure and the one computed (None: the experiment has no such figure)."""

    expected: ExpectedFigure
    actual: float | None

    @property
    def ok(self) -> bool:
        return self.actual is not None and abs(self.actual - self.expected.value) <= self.expected.tolerance

    def line(self) -> str:
        """``OK   KEY: actual (expected value ± tolerance)``, with as many decimals as the
        tolerance needs (at least 4)."""
        tolerance = self.expected.tolerance
        digits = max(4, -math.floor(math.log10(tolerance))) if tolerance > 0 else 10
        actual = "missing" if self.actual is None else f"{self.actual:.{digits}f}"
        return (f"{'OK  ' if self.ok else 'FAIL'} {self.expected.key}: {actual} (expected "
                f"{self.expected.value:.{digits}f} ± {tolerance:g})")


@dataclass(frozen=True)
class ExperimentResult:
    """Everything an experiment computed; :meth:`rows` and :meth:`summary` give plain records
    (e.g. for ``pandas.DataFrame``)."""

    config: ExperimentConfig
    out_dir: Path
    queries: int
    folds: tuple[Fold, ...]
    methods: tuple[MethodResult, ...]
    mention_recall: Mapping[str, MentionRecall] = field(default_factory=dict)
    report: str = ""
    params: LinkingParams | None = None
    """The tuned thresholds written to ``params.json`` (:func:`tuned_params`), if any."""

    def method(self, task: str, label: str) -> MethodResult:
        for result in self.methods:
            if result.task == task and result.label == label:
                return result
        raise KeyError(f"no method {label!r} in task {task!r}")

    def rows(self) -> list[dict[str, Any]]:
        """Per-query scores: task, method, qid, metric, value (mention detection: task ``md``,
        method = surface-form source, metric ``recall``)."""
        records = [{"task": m.task, "method": m.label, "qid": qid, "metric": metric, "value": value}
                   for m in self.methods for metric, scores in m.per_query.items()
                   for qid, value in scores.items()]
        records += [{"task": "md", "method": source, "qid": qid, "metric": "recall", "value": value}
                    for source, recall in self.mention_recall.items()
                    for qid, value in recall.per_query.items()]
        return records

    def summary(self) -> list[dict[str, Any]]:
        """Per task, method and metric: the mean, the number of queries, and the p-value of the
        paired t-test against the task's baseline (None for the baseline itself)."""
        records = []
        for m in self.methods:
            baseline = self.task_spec(m.task).baseline
            for metric, scores in m.per_query.items():
                p_value = None
                if baseline is not None and baseline != m.label:
                    p_value = significance(scores, self.method(m.task, baseline).per_query[metric])
                records.append({"task": m.task, "method": m.label, "metric": metric,
                                "value": fmean(scores.values()), "queries": len(scores),
                                "p_value": p_value})
        records += [{"task": "md", "method": source, "metric": "recall", "value": r.recall,
                     "queries": r.queries, "p_value": None}
                    for source, r in self.mention_recall.items()]
        return records

    def check(self) -> list[CheckedFigure]:
        """Each expected figure of the config (``[expected]``) next to the figure computed."""
        computed = {(r["task"], r["method"], r["metric"]): r["value"] for r in self.summary()}
        return [CheckedFigure(figure, computed.get((figure.task, figure.method, figure.metric)))
                for figure in self.config.expected]

    def task_spec(self, task: str) -> TaskSpec:
        """The configuration of task ``"if"``, ``"sm"`` or ``"er"``."""
        spec = dict(_tasks(self.config))[task]
        assert spec is not None
        return spec


def _tasks(config: ExperimentConfig) -> list[tuple[str, TaskSpec | None]]:
    """Each task's key and its configuration (None when the config leaves it out)."""
    return [("if", config.interpretation_finding), ("sm", config.semantic_mapping),
            ("er", config.entity_retrieval)]


def run_experiment(config: ExperimentConfig | str | os.PathLike[str], out_dir: str | os.PathLike[str],
                   workers: int = 1, backend: Backend | None = None, progress: bool = True,
                   ranker: Ranker | None = None) -> ExperimentResult:
    """Run an experiment description (a path or a parsed :class:`ExperimentConfig`) into
    ``out_dir``. ``backend`` defaults to the linkers over the configured artefacts and ``ranker``
    to a searcher of the configured index, run in ``workers`` processes; ``progress`` shows
    progress bars on a terminal."""
    if not isinstance(config, ExperimentConfig):
        config = load_config(config)
    out = Path(out_dir)
    # every input is checked and read before the output folder is made (methods.md §7)
    check_inputs(config, out, linking=backend is None, ranking=ranker is None)
    queries = _queries(config)
    folds = tuple(_folds(config, list(queries)))
    ids = ExperimentIds(config.index)  # qrels and given runs in any id scheme (docs/identifiers.md)
    evaluators = {task: _task_evaluator(task, spec, queries, ids) for task, spec in _tasks(config) if spec is not None}
    gold = None if config.mention_detection is None else _mention_gold(config.mention_detection.qrels, queries, ids)
    if backend is None:
        from elquery.experiments.backend import LinkerBackend
        backend = LinkerBackend(config, workers)
    with ExitStack() as owned:
        if ranker is None and config.index is not None:  # its searchers serve every run, then end
            from elquery.experiments.backend import SearcherBackend
            ranker = owned.enter_context(SearcherBackend(config.index, workers))
        out.mkdir(parents=True, exist_ok=True)
        store = RunStore(out, backend, queries, progress, ranker)
        learning = None
        if learning_methods(config):
            from elquery.experiments.fold_models import FoldLearning
            learning = FoldLearning(config, store, folds, workers, ids)
        methods = []
        for task, spec in _tasks(config):
            if spec is not None:
                methods += [_run_method(store, task, spec, method, folds, evaluators[task], learning)
                            for method in spec.methods]
        recall = {} if gold is None else _mention_recall(config, store, gold)
        result = ExperimentResult(config, out, len(queries), folds, tuple(methods), recall)
        result = replace(result, params=tuned_params(result))
        result = replace(result, report=report(result))
        _write_outputs(result)
        if learning is not None:
            from elquery.experiments.fold_models import MODELS_FILE
            learning.write_models(out / MODELS_FILE)
    return result


def _queries(config: ExperimentConfig) -> dict[str, str]:
    from elquery.retrieval.queries import read_queries

    queries = {q.qid: q.text for q in read_queries(config.queries)}
    if not queries:
        raise ElqueryError(f"{config.queries}: no query")
    return dict(sorted(queries.items()))


def _folds(config: ExperimentConfig, qids: Sequence[str]) -> list[Fold]:
    cv = config.crossval
    try:
        if cv.scheme == LEAVE_ONE_OUT:
            return leave_one_out(qids)
        if cv.scheme == GIVEN:
            return given_folds(cv.files, qids)
        return session_folds(qids, cv.folds, cv.seed, cv.session_separator)
    except ValueError as exc:
        raise ElqueryError(f"{config.path}: crossval: {exc}") from None


def _task_evaluator(task: str, spec: TaskSpec, queries: Mapping[str, str], ids: ExperimentIds
                    ) -> Callable[..., Scores]:
    """A function ``(run path, given=None) -> per-query scores`` of every metric the task reports,
    the ids of the qrels and of the run resolved to DBpedia ids by ``ids``; ``given``: the given
    run file the run's ids come from (named by the note on ids that do not resolve)."""
    if task == "if":
        qrels = {q: i for q, i in ids.elq(spec.qrels).items() if q in queries}
        if not qrels:
            raise ElqueryError(f"{spec.qrels}: no query of the query set is in these qrels")

        def evaluate_if(path: Path, given: Path | None = None) -> Scores:
            scores: Scores = {metric: {} for metric in IF_METRICS}
            run = ids.elq(path, given)
            for qid, query in evaluate_interpretations(qrels, run).per_query.items():
                for kind, prf in (("strict", query.strict), ("lean", query.lean), ("entity", query.entity)):
                    scores[f"{kind}.P"][qid], scores[f"{kind}.R"][qid], scores[f"{kind}.F"][qid] = \
                        prf.p, prf.r, prf.f
            return scores
        return evaluate_if

    judged = {q: j for q, j in ids.trec_qrels(spec.qrels).items() if q in queries}
    if not relevant_entities(judged):
        raise ElqueryError(f"{spec.qrels}: no query of the query set has a relevant entity")
    reported = spec.metrics if isinstance(spec, RetrievalTaskSpec) else [c.metric for c in SM_COLUMNS]
    metrics = list(dict.fromkeys([*reported, spec.metric]))
    groups = _category_queries(spec, relevant_entities(judged)) if isinstance(spec, RetrievalTaskSpec) else {}

    def evaluate_ranking(path: Path, given: Path | None = None) -> Scores:
        run = ids.trec_run(path, given) if _has_lines(path) else {}
        per_query = evaluate_rankings(judged, run, metrics, complete=True).per_query
        scores = {metric: {q: values[metric] for q, values in per_query.items()} for metric in metrics}
        return scores | {category_metric(name, metric): {q: scores[metric][q] for q in qids}
                         for name, qids in groups.items() for metric in metrics}
    return evaluate_ranking


def _category_queries(spec: RetrievalTaskSpec, judged: Mapping[str, Any]) -> dict[str, list[str]]:
    """The evaluated queries of each category that has some, in the config's order; every
    evaluated query must belong to a category (when categories are given)."""
    groups: dict[str, list[str]] = {}
    for qid in sorted(judged):
        names = [c.name for c in spec.categories if c.holds(qid)]
        if spec.categories and not names:
            raise ElqueryError(f"query {qid} is in no category of [entity_retrieval.categories] "
                               f"(a category takes the query ids whose part before '-' it lists)")
        for name in names:
            groups.setdefault(name, []).append(qid)
    return {c.name: groups[c.name] for c in spec.categories if c.name in groups}


def _has_lines(path: Path) -> bool:
    return next(content_lines(path, "run"), None) is not None


def _run_method(store: RunStore, task: str, spec: TaskSpec, method: MethodSpec,
                folds: Sequence[Fold], evaluate: Callable[..., Scores],
                learning: FoldLearning | None = None) -> MethodResult:
    """Sweep ``method``, choose its setting per fold by the task's metric, and evaluate the
    cross-validated run; a method that learns its model runs on ``learning``'s models. Run ids
    are resolved (:mod:`elquery.experiments.entity_ids`); a given run's note names its file."""
    if method.run is not None:
        runs = {setting: method.run for setting in grid(method)}
    elif isinstance(spec, RetrievalTaskSpec):
        runs = {setting: store.ranking(method, setting, spec.depth) for setting in grid(method)}
    elif method.learning is not None:
        assert learning is not None
        runs = {setting: learning.run(task, method, setting) for setting in grid(method)}
    else:
        runs = {setting: store.run(task, method, setting) for setting in grid(method)}
    sweep = {setting: evaluate(path, method.run) for setting, path in runs.items()}
    objective = {s: scores[spec.metric] for s, scores in sweep.items()}
    if method.learning is not None:
        assert learning is not None
        choices = learning.choices(task, method, list(runs), objective, evaluate, spec.metric)
    else:
        choices = cross_validate(folds, objective)
    lines = combine({s: _lines_by_query(path) for s, path in runs.items()}, choices)
    combined = store.out_dir / "runs" / method.label / f"cross-validated.{'elq' if task == 'if' else 'trec'}"
    combined.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(combined) as stream:
        for query_lines in lines.values():
            stream.writelines(line + "\n" for line in query_lines)
    return MethodResult(task, method, tuple(choices), evaluate(combined, method.run), sweep, combined, runs)


def _lines_by_query(path: Path) -> dict[str, list[str]]:
    """A run file's lines grouped by query id (the first tab- or space-separated field), read by
    the one line reader (:func:`elquery.formats.lines.content_lines`: a byte order mark, CR LF
    line ends and blank lines as every format reads them)."""
    grouped: dict[str, list[str]] = {}
    for _, line in content_lines(path, "run"):
        grouped.setdefault(line.split(None, 1)[0], []).append(line)
    return grouped


def source_entities(candidates: Mapping[str, Sequence[Candidate]], commonness_threshold: float
                    ) -> dict[str, dict[str, frozenset[str]]]:
    """Per surface-form source (methods.md §3), the candidate entities of each query: ``KB``
    (M_kb: the mention is a KB alias), ``Web`` (M_w: a web count with commonness >= c) and
    ``KB+Web`` (their union)."""
    kb = {q: frozenset(c.entity for c in found if c.in_kb) for q, found in candidates.items()}
    web = {q: frozenset(c.entity for c in found
                        if c.commonness > 0 and c.commonness >= commonness_threshold)
           for q, found in candidates.items()}
    return {"KB": kb, "Web": web, "KB+Web": {q: kb[q] | web[q] for q in candidates}}


def _mention_gold(qrels: Path, queries: Mapping[str, str], ids: ExperimentIds) -> dict[str, frozenset[str]]:
    """The ground-truth entities of each query of the query set in ELQ qrels (ids resolved by ``ids``)."""
    gold = {q: frozenset().union(*interpretations)
            for q, interpretations in ids.elq(qrels).items() if q in queries}
    if not any(gold.values()):
        raise ElqueryError(f"{qrels}: no query of the query set has a ground-truth entity")
    return gold


def _mention_recall(config: ExperimentConfig, store: RunStore, gold: Mapping[str, frozenset[str]]
                    ) -> dict[str, MentionRecall]:
    spec = config.mention_detection
    assert spec is not None
    by_source = source_entities(store.candidates(), spec.commonness_threshold)
    return {source: mention_detection_recall(gold, by_source[source]) for source in SOURCES}


def tuned_params(result: ExperimentResult) -> LinkingParams | None:
    """The thresholds to link with after the experiment: for each linking method with a GIF (or
    own, TAGME's) variant in interpretation finding, the setting (its tuned parameters: c and s,
    TAGME's rho_NA) with the best mean of the task's metric over all queries of the experiment
    (the choice cross-validation makes with every query in training; ties go to the setting listed
    first); of two variants of a method, the better one. None without such a method."""
    spec = result.config.interpretation_finding
    if spec is None:
        return None
    best: dict[str, tuple[float, MethodParams]] = {}
    for m in result.methods:
        if m.task != "if" or m.spec.run is not None or m.spec.finder == TOP_RANKED:
            continue
        objective = {setting: scores[spec.metric] for setting, scores in m.sweep.items()}
        queries = sorted({q for scores in objective.values() for q in scores})
        setting, value = choose(objective, queries)
        tuned = {"label": m.label, "metric": spec.metric, "value": None if math.isnan(value) else value,
                 "queries": len(queries)}
        method = METHODS.get(m.spec.method)
        values = {COMMONNESS: setting.c, method.score_threshold: setting.s}
        params = MethodParams(**{name: v for name, v in values.items() if name in method.tuned}, tuned=tuned)
        if m.spec.method not in best or value > best[m.spec.method][0]:
            best[m.spec.method] = (value, params)
    if not best:
        return None
    experiment = {"config": str(result.config.path), "name": result.config.name,
                  "task": "interpretation_finding", "metric": spec.metric}
    return LinkingParams({method: params for method, (_, params) in best.items()},
                         result.out_dir / PARAMS_FILE, experiment)


def _tuned_table(params: LinkingParams) -> str:
    lines = ["| method | c | s | from | mean over all queries |", "|---|---|---|---|---|"]
    for method, tuned in params.methods.items():
        c = "" if tuned.commonness_threshold is None else f"{tuned.commonness_threshold:g}"
        s = f"{tuned.gif_threshold:g}" if tuned.gif_threshold is not None else f"{tuned.rho_na:g} (rho_NA)"
        value = tuned.tuned["value"]
        figure = "" if value is None else f"{tuned.tuned['metric']} {value:.4f}"
        lines.append(f"| {method} | {c} | {s} | {tuned.tuned['label']} | {figure} |")
    return "\n".join(lines) + "\n"


def report(result: ExperimentResult) -> str:
    """The Markdown report: one table per task in the ICTIR'15 layout, mention-detection recall
    per source, and the parameters chosen per fold."""
    config = result.config
    cv = config.crossval
    scheme = ("leave-one-out" if cv.scheme == LEAVE_ONE_OUT else
              f"the {len(result.folds)} folds of {', '.join(f'`{f.name}`' for f in cv.files)}" if cv.scheme == GIVEN else
              f"{cv.folds} folds keeping search sessions together (seed {cv.seed})")
    parts = [f"# {config.name}\n",
             f"{result.queries} queries (`{config.queries.name}`); cross-validation: {scheme}. "
             "Parameters are chosen on the training folds; the figures are test-fold results "
             "(methods.md §7).\n"]
    for task in TASKS:
        methods = [m for m in result.methods if m.task == task]
        if not methods:
            continue
        spec = result.task_spec(task)
        parts.append(f"## {TASKS[task]}\n")
        columns = _columns(task, spec, methods[0])
        parts.append(markdown_table({m.label: m.per_query for m in methods}, columns, spec.baseline,
                                    "Model" if task == "er" else "method"))
        notes = [f"Parameters chosen by {spec.metric}."]
        if task == "if":
            notes.append("F is the mean of per-query F.")
        if isinstance(spec, RetrievalTaskSpec):
            notes.append(_query_counts(spec, methods[0]) + f" Top {spec.depth} entities per query.")
        notes += [learning_note(m.spec) for m in methods if m.spec.learning is not None]
        parts.append(" ".join(notes) + "\n")
        if spec.baseline is not None:
            parts.append(significance_note(spec.baseline))
    if result.mention_recall:
        assert config.mention_detection is not None
        parts.append("## Mention detection recall\n")
        parts.append(markdown_table({s: {"recall": r.per_query} for s, r in result.mention_recall.items()},
                                    MD_COLUMNS, first_header="source"))
        parts.append(f"Web: commonness >= {config.mention_detection.commonness_threshold:g}.\n")
    if result.methods:
        parts.append("## Chosen parameters\n")
        parts.append(_chosen_table(result.methods))
    if result.params is not None:
        parts.append(f"## Tuned thresholds ({PARAMS_FILE})\n")
        parts.append(_tuned_table(result.params))
        parts.append(f"Each is the setting with the best mean over all queries; `elquery link --params` and "
                     f"`elquery serve --params` read them from this folder's {PARAMS_FILE}.\n")
    section = markdown_section(result)
    if section:
        parts.append(section)
    return "\n".join(parts)


def _columns(task: str, spec: TaskSpec, method: MethodResult) -> Sequence[Column]:
    """The columns of a task's table; entity retrieval's in the DBpedia-Entity v2 layout, over
    the categories with evaluated queries."""
    if not isinstance(spec, RetrievalTaskSpec):
        return IF_COLUMNS if task == "if" else SM_COLUMNS
    present = [c.name for c in spec.categories if category_metric(c.name, spec.metrics[0]) in method.per_query]
    return category_columns(present, spec.metrics)


def _query_counts(spec: RetrievalTaskSpec, method: MethodResult) -> str:
    """``Queries: SemSearch ES 113, ..., Total 467.``"""
    counts = [(c.name, len(method.per_query[category_metric(c.name, spec.metrics[0])])) for c in spec.categories
              if category_metric(c.name, spec.metrics[0]) in method.per_query]
    counts.append((TOTAL, len(method.per_query[spec.metrics[0]])))
    return "Queries: " + ", ".join(f"{name} {n}" for name, n in counts) + "."


def _chosen_table(methods: Sequence[MethodResult]) -> str:
    lines = ["| task | method | setting (folds) |", "|---|---|---|"]
    for m in methods:
        counts = Counter(str(choice.setting) for choice in m.choices)
        chosen = ", ".join(f"{setting} ({n})" for setting, n in
                           sorted(counts.items(), key=lambda item: (-item[1], item[0])))
        lines.append(f"| {m.task} | {m.label} | {chosen} |")
    return "\n".join(lines) + "\n"


def _tsv(path: Path, header: Sequence[str], rows: Iterator[Sequence[Any]]) -> None:
    with atomic_output(path) as stream:
        stream.write("\t".join(header) + "\n")
        for row in rows:
            stream.write("\t".join("" if v is None else format(v, ".10g") if isinstance(v, float)
                                   else str(v) for v in row) + "\n")


def _write_outputs(result: ExperimentResult) -> None:
    out = result.out_dir
    _tsv(out / "folds.tsv", ["qid", "fold"],
         ((qid, fold.index) for fold in result.folds for qid in fold.test))
    _tsv(out / "parameters.tsv", ["task", "method", "fold", "c", "s", "params", "train_score"],
         ((m.task, m.label, c.fold.index, c.setting.c, c.setting.s, c.setting.parameters, c.train_score)
          for m in result.methods for c in m.choices))
    _tsv(out / "sweep.tsv", ["task", "method", "c", "s", "params", "metric", "value", "queries"],
         ((m.task, m.label, setting.c, setting.s, setting.parameters, metric, fmean(values.values()), len(values))
          for m in result.methods for setting, scores in m.sweep.items()
          for metric, values in scores.items() if values))
    _tsv(out / "per_query.tsv", ["task", "method", "qid", "metric", "value"],
         (tuple(r.values()) for r in result.rows()))
    if result.params is not None:
        write_params(out / PARAMS_FILE, result.params)
    write_figures(result)
    write_html(result)
    with atomic_output(out / "results.md") as stream:
        stream.write(result.report)
