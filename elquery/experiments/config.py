"""Experiment descriptions (methods.md §7-8): a TOML file naming the index, surface forms, query
set and qrels, the methods of each task with the parameter values to sweep, the cross-validation
scheme and the metric to optimize. Read with the standard library's :mod:`tomllib`.

Paths may use ``${NAME}`` or ``${NAME:-default}`` (environment variables); a relative path (after
expansion) is relative to the config file's folder. Every mistake, including an unknown key, is
reported in one line naming the file and the config key. Keys (defaults in brackets)::

    name = "Y-ERD"                  # [the file name]
    index = "..."                   # entity index (MLM, MLMc, MLMcg; entity retrieval)
    surface_forms = "..."           # surface-form store (mention detection, commonness; not for
                                    # entity retrieval)
    tagme = "..."                   # TAGME artefact, needed by a TAGME method
    whitelist = "..."               # optional: keep only these entities (TAGME's and LTR's output is post-filtered)
    queries = "queries.json"        # {"qid": "text"} JSON or qid<TAB>text lines

    [crossval]
    scheme = "sessions"             # ["sessions"]: k folds, a session (qid prefix) in one fold;
                                    # "leave-one-out"; or "given": a test collection's fold files
    folds = 5                       # [5], sessions only
    files = ["folds/QALD2.json"]    # given only: JSON fold files, each cross-validated on its own
    seed = 0                        # [0]
    session_separator = "_"         # ["_"]

    [interpretation_finding]        # optional; ELQ qrels, strict/lean P R F
    qrels = "qrels-elq.txt"
    metric = "strict.F"             # [strict.F]; strict|lean|entity . P|R|F
    baseline = "TAGME"              # optional: a method label, for significance markers
    [[interpretation_finding.methods]]
    method = "mlmcg"                # a method of `elquery link --method` (the registry
                                    # elquery.linking.methods.METHODS): cmns, mlm, mlmc, mlmcg, tagme, ltr
    finder = "gif"                  # ["gif"] or "top-ranked" (not for tagme)
    commonness_threshold = 0.1      # [per method]; a number or a list to sweep
    gif_threshold = [1, 5, 20]      # GIF's s: a number or a list to sweep (required for gif)
    rho_threshold = 0.1             # TAGME's rho_NA [0.1]; a number or a list to sweep
    model = "model.onnx"            # LTR's model; any other parameter of the method (e.g. TAGME's
                                    # tau) is one value, not swept
    trees = 100                     # ltr without a model: the experiment learns one inside each
                                    # fold (trees, max_features, seed, labels, train: see
                                    # elquery.experiments.learning)
    label = "GIF-MLMcg"             # [e.g. GIF-MLMcg, TopRanked-CMNS, TAGME]
    # every value is checked by the method's registry entry, as `elquery link` checks it

    [semantic_mapping]              # optional; TREC qrels, MAP, S@1, MRR
    qrels = "qrels-er.txt"
    metric = "map"                  # [map]; any rank metric of ``elquery evaluate rank``
    baseline = "CMNS"
    [[semantic_mapping.methods]]
    method = "cmns"                 # a method with a finder (not tagme); commonness_threshold, label
    # method = "run", run = "path", label = "...": a given run file (e.g. a published one),
    # evaluated as it is

    [entity_retrieval]              # optional; whole-index ranking (DBpedia-Entity v2), TREC qrels
    qrels = "qrels-v2.txt"          # graded
    metrics = ["ndcg@10", "ndcg@100", "map@100"]   # [these]: reported, per category and in total
    metric = "ndcg@100"             # [the first of metrics]: optimized by cross-validation
    depth = 100                     # [1000, as elquery rank --k]: entities ranked per query (1 to 100,000)
    baseline = "BM25"
    [entity_retrieval.categories]   # optional: category -> query id prefixes (before the first '-')
    "SemSearch ES" = ["SemSearch_ES"]
    [[entity_retrieval.methods]]
    model = "bm25"                  # any model of `elquery rank --model` (the retrieval registry)
    label = "BM25"                  # [the model name]
    params = { k1 = [0.9, 1.2], b = 0.4 }   # its --param values; a list is swept
    # links = "links.jsonl": the ELR models' linked entities (a links file of `elquery rank --links`),
    # or links = { method = "cmns" }: computed by the experiment, as `elquery link --method cmns
    # --format jsonl` would (optional commonness_threshold, gif_threshold, and the method's other
    # parameters, e.g. model = "..." for ltr; needs surface_forms)
    # run = "path", label = "...": a given TREC run, evaluated as it is

    [mention_detection]             # optional; recall per source: KB, Web, KB+Web
    qrels = "qrels-elq.txt"         # [interpretation_finding.qrels]
    commonness_threshold = 0        # [0]: Web counts pairs with commonness > 0 and >= this

    [expected]                      # optional: the figures the experiment must reproduce,
    tolerance = 0.0001              # checked by `elquery experiment CONFIG --check` [0.0001]
    "if/GIF-MLMcg/strict.F" = 0.25  # "TASK/METHOD/METRIC" = value; TASK if, sm, md or er
    "er/BM25/INEX-LD:ndcg@10" = 0.3 # a category's figure: CATEGORY:METRIC

Instead of ``index`` and ``surface_forms``, ``knowledge_base = "demo"`` names the bundled demo
knowledge base (built on first use). ``load_config(path, artefacts=DIR)`` (``elquery experiment
--artefacts DIR``) takes ``index``, ``surface_forms`` and ``tagme`` from a folder written by
``elquery build`` instead (:class:`elquery.kb.artefacts.ArtefactPaths`), and ignores those keys
of the file.

The file is UTF-8 (a byte order mark at the start is dropped). Parsing checks the file's form,
every number by a registry parameter (:class:`elquery.registry.Parameter`: a method's own, or
:data:`DEPTH`, :data:`FOLDS`, :data:`TOLERANCE`, :data:`MENTION_COMMONNESS`);
:func:`elquery.experiments.inputs.check_inputs` checks that what it names exists and reads, before an
experiment runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from elquery.evaluation.rank import parse_metric
from elquery.base import ElqueryError
from elquery.files import read_toml
from elquery.kb.artefacts import ArtefactPaths
from elquery.experiments.learning import MODEL, LearningSpec, learning_of, resolve_learning
from elquery.retrieval.models import DEFAULT_K, MAX_K
from elquery.linking.methods import GIF, METHODS, TOP_RANKED, LinkingMethod
from elquery.linking.methods.method import commonness_threshold
from elquery.registry import Parameter, validate_parameters

SESSIONS = "sessions"
LEAVE_ONE_OUT = "leave-one-out"
GIVEN = "given"
SCHEMES = (SESSIONS, LEAVE_ONE_OUT, GIVEN)
TASK_KEYS = ("if", "sm", "md", "er")
ER_METRICS = ("ndcg@10", "ndcg@100", "map@100")
IF_METRICS = tuple(f"{kind}.{m}" for kind in ("strict", "lean", "entity") for m in "PRF")
SWEEP_KEYS = {"rho_na": "rho_threshold"}
"""The config key of a swept parameter whose key is not its name (TAGME's rho_NA)."""
COMMONNESS = "commonness_threshold"

DEPTH = Parameter("depth", int, DEFAULT_K, "entities ranked per query, as `elquery rank --k`", minimum=1, maximum=MAX_K)
FOLDS = Parameter("folds", int, 5, "session folds", minimum=2)
TOLERANCE = Parameter("tolerance", float, 1e-4, "how far a figure may be from its expected value", minimum=0.0)
MENTION_COMMONNESS = commonness_threshold(0.0)
"""The numbers of a config that belong to no method, each checked by its registry parameter (the
range, finite, whole where it counts), as the methods' own are: :meth:`_Table.parameter`."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

GIVEN_RUN = "run"
DEMO = "demo"


@dataclass(frozen=True)
class LinksSpec:
    """The linked entities of an ELR model computed by the experiment itself (``links = { method =
    "cmns" }``): the entities of the GIF interpretations of ``method`` with thresholds c and s,
    each with its best annotation score, as ``elquery link --format jsonl`` writes them and
    ``elquery rank --links`` reads them (methods.md §4-5)."""

    method: str
    commonness_threshold: float
    gif_threshold: float
    fixed: tuple[tuple[str, Any], ...] = ()
    """The method's other parameters (LTR's model), as :attr:`MethodSpec.fixed`."""

    def __str__(self) -> str:
        return f"{self.method} c={self.commonness_threshold:g} s={self.gif_threshold:g}"


@dataclass(frozen=True)
class MethodSpec:
    """One method of a task and its parameter grid: commonness thresholds c (§3) and, for GIF
    and TAGME, score thresholds s (GIF's s of §5, TAGME's rho_NA of §6)."""

    label: str
    method: str
    finder: str | None
    commonness_thresholds: tuple[float, ...]
    score_thresholds: tuple[float | None, ...]
    run: Path | None = None
    """A given run file (``method = "run"``), evaluated as it is instead of linking."""
    params: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Entity retrieval: each ``--param`` name of the model and the values to sweep."""
    links: Path | LinksSpec | None = None
    """Entity retrieval with an ELR model: the queries' linked entities, a links file of
    ``elquery rank --links`` or the linking that computes them."""
    fixed: tuple[tuple[str, Any], ...] = ()
    """The linking method's parameters that are not swept, name and value (a path as an absolute
    path text), e.g. LTR's model."""
    learning: LearningSpec | None = None
    """A method that scores with a model the config does not name (LTR): how the experiment
    learns it (:mod:`elquery.experiments.learning`)."""


@dataclass(frozen=True)
class TaskSpec:
    """Interpretation finding or semantic mapping: qrels, the metric optimized by
    cross-validation, the baseline of the significance tests and the methods."""

    qrels: Path
    metric: str
    baseline: str | None
    methods: tuple[MethodSpec, ...]


@dataclass(frozen=True)
class Category:
    """A query category of entity retrieval: the queries whose id, up to the first ``-``, is one
    of ``prefixes`` (DBpedia-Entity v2: ``INEX_LD-2009022`` is INEX-LD)."""

    name: str
    prefixes: tuple[str, ...]

    def holds(self, qid: str) -> bool:
        return qid.partition("-")[0] in self.prefixes


@dataclass(frozen=True)
class RetrievalTaskSpec(TaskSpec):
    """Entity retrieval (methods.md §4, DBpedia-Entity v2): ranking depth, the reported metrics
    and the query categories they are broken down by."""

    metrics: tuple[str, ...] = ER_METRICS
    depth: int = DEFAULT_K
    categories: tuple[Category, ...] = ()


@dataclass(frozen=True)
class MentionDetectionSpec:
    """Mention-detection recall per surface-form source (§7), on the entities of ELQ qrels."""

    qrels: Path
    commonness_threshold: float


@dataclass(frozen=True)
class CrossValidation:
    """Session-aware k folds, leave-one-out or a test collection's folds (§7, "Parameter
    selection")."""

    scheme: str
    folds: int
    seed: int
    session_separator: str
    files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ExpectedFigure:
    """A figure the experiment must reproduce: the mean of ``metric`` for ``method`` of ``task``
    (``if``, ``sm``, ``md`` or ``er``; an ``er`` metric may be ``CATEGORY:METRIC``), within
    ``tolerance``."""

    task: str
    method: str
    metric: str
    value: float
    tolerance: float

    @property
    def key(self) -> str:
        return f"{self.task}/{self.method}/{self.metric}"


@dataclass(frozen=True)
class ExperimentConfig:
    """A parsed experiment description; paths are absolute."""

    path: Path
    name: str
    index: Path
    surface_forms: Path
    tagme: Path | None
    whitelist: Path | None
    queries: Path
    crossval: CrossValidation
    interpretation_finding: TaskSpec | None
    semantic_mapping: TaskSpec | None
    mention_detection: MentionDetectionSpec | None
    expected: tuple[ExpectedFigure, ...] = ()
    entity_retrieval: RetrievalTaskSpec | None = None
    artefacts: Path | None = None
    """The ``elquery build`` folder ``index``, ``surface_forms`` and ``tagme`` come from, if any."""


class _Table:
    """A TOML table being read: typed access by key, errors naming the dotted key."""

    def __init__(self, file: Path, prefix: str, data: Mapping[str, Any]) -> None:
        self.file, self.prefix, self.data = file, prefix, data
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def error(self, name: str, message: str) -> ElqueryError:
        return ElqueryError(f"{self.file}: {self.key(name)}: {message}")

    def get(self, name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        self.used.add(name)
        if name not in self.data:
            if default is ...:
                raise self.error(name, "missing")
            return default
        value = self.data[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.error(name, f"expected {names}, got {type(value).__name__} {value!r}")
        return value

    def table(self, name: str) -> _Table | None:
        value = self.get(name, dict, None)
        return None if value is None else _Table(self.file, f"{self.key(name)}.", value)

    @overload
    def path(self, name: str, required: Literal[True] = ...) -> Path: ...

    @overload
    def path(self, name: str, required: bool) -> Path | None: ...

    def path(self, name: str, required: bool = True) -> Path | None:
        text = self.get(name, str, ... if required else None)
        if text is None:
            return None

        def expand(match: re.Match[str]) -> str:
            value = os.environ.get(match[1]) or match[2]
            if value is None:
                artefact = not self.prefix and name in ("index", "surface_forms", "tagme")  # what --artefacts gives
                hint = " (give --artefacts DIR, the folder `elquery build --out DIR` wrote, or set it)" if artefact else ""
                raise self.error(name, f"environment variable {match[1]} is not set{hint}")
            return value

        expanded = Path(_VARIABLE.sub(expand, text)).expanduser()
        return (expanded if expanded.is_absolute() else self.file.parent / expanded).resolve()

    def paths(self, name: str) -> tuple[Path, ...]:
        """A list of paths (each expanded as :meth:`path`)."""
        value = self.get(name, list)
        if not value or not all(isinstance(v, str) for v in value):
            raise self.error(name, "expected a non-empty list of paths")
        return tuple(_Table(self.file, self.prefix, {name: v}).path(name) for v in value)

    def numbers(self, name: str, default: tuple[float, ...] | None = None,
                checked: tuple[LinkingMethod, Parameter] | None = None) -> tuple[float, ...]:
        """A number or a list of them; each value ``checked`` by a method's parameter (the
        registry's message), else a non-negative number."""
        value = self.get(name, (int, float, list), default if default is not None else ...)
        values = value if isinstance(value, (list, tuple)) else [value]
        if not values:
            raise self.error(name, "no value to sweep")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0 and checked is None:
                raise self.error(name, f"expected a non-negative number, got {v!r}")
            if checked is not None:
                try:
                    checked[1].validate(v, checked[0].name)
                except ElqueryError as exc:
                    raise self.error(name, str(exc)) from None
        if len(set(values)) != len(values):
            raise self.error(name, "a value is given twice")
        return tuple(float(v) for v in values)

    def fixed(self, method: LinkingMethod, swept: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
        """The values of ``method``'s parameters other than ``swept`` (one each, a path relative
        to the config file), checked by the registry; a required one must be given."""
        found: list[tuple[str, Any]] = []
        for parameter in method.parameters:
            name = parameter.name
            if name in swept or name in SWEEP_KEYS or not (name in self.data or parameter.required):
                continue
            if parameter.kind is Path:
                found.append((name, str(self.path(name))))
                continue
            try:
                found.append((name, parameter.validate(self.get(name, (int, float, str, bool)), method.name)))
            except ElqueryError as exc:
                raise self.error(name, str(exc)) from None
        return tuple(found)

    def parameter(self, parameter: Parameter) -> Any:
        """The number ``parameter`` names (its default when absent), checked by the registry's
        :meth:`~elquery.registry.Parameter.validate` (its one-line message)."""
        value = self.get(parameter.name, (int, float), parameter.default)
        try:
            return parameter.validate(value)
        except ElqueryError as exc:
            raise self.error(parameter.name, str(exc)) from None

    def check_unknown(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise self.error(unknown[0], "unknown key")


def load_config(path: str | os.PathLike[str], artefacts: str | os.PathLike[str] | None = None) -> ExperimentConfig:
    """Read and check an experiment description (TOML); with ``artefacts``, its index, surface
    forms and TAGME artefact are those of that ``elquery build`` folder."""
    file = Path(path).resolve()
    data = read_toml(file, "experiment config")  # UTF-8, a byte order mark dropped (docs/formats.md)
    return parse_config(file, data, artefacts)


def parse_config(file: Path, data: Mapping[str, Any], artefacts: str | os.PathLike[str] | None = None
                 ) -> ExperimentConfig:
    """Check an already parsed TOML document; ``file`` names it in errors and anchors relative
    paths; ``artefacts`` as :func:`load_config`."""
    top = _Table(file, "", data)
    name = top.get("name", str, file.stem)
    folder = None if artefacts is None else Path(artefacts).resolve()
    demo = folder is None and top.data.get("knowledge_base") == DEMO
    if folder is None:
        index, surface_forms = _knowledge_base(top)
        tagme = top.path("tagme", required=False)
    else:
        top.used.update(("index", "surface_forms", "tagme", "knowledge_base"))
        found = ArtefactPaths.of(folder)
        index, surface_forms, tagme = found.index, found.surface_forms, found.tagme
    whitelist = top.path("whitelist", required=False)
    queries = top.path("queries")
    crossval = _crossval(top.table("crossval") or _Table(file, "crossval.", {}))
    if_table, sm_table = top.table("interpretation_finding"), top.table("semantic_mapping")
    interpretation = None if if_table is None else _task(if_table, "if")
    mapping = None if sm_table is None else _task(sm_table, "sm")
    er_table = top.table("entity_retrieval")
    retrieval = None if er_table is None else _retrieval_task(er_table, demo)
    expected_table = top.table("expected")
    expected = () if expected_table is None else _expected(expected_table)
    md_table = top.table("mention_detection")
    mention = None
    if md_table is not None:
        qrels = md_table.path("qrels", required=interpretation is None)
        threshold = md_table.parameter(MENTION_COMMONNESS)
        md_table.check_unknown()
        if qrels is None:
            assert interpretation is not None  # qrels is required without interpretation finding
            qrels = interpretation.qrels
        mention = MentionDetectionSpec(qrels, threshold)
    top.check_unknown()
    if interpretation is None and mapping is None and mention is None and retrieval is None:
        raise ElqueryError(f"{file}: nothing to run: add [interpretation_finding], "
                           "[semantic_mapping], [mention_detection] or [entity_retrieval]")
    links = mention is not None or any(m.run is None for task in (interpretation, mapping) if task
                                       for m in task.methods)
    ranks = retrieval is not None and any(m.run is None for m in retrieval.methods)
    computes_links = retrieval is not None and any(isinstance(m.links, LinksSpec) for m in retrieval.methods)
    for key, value, needed in (("index", index, links or ranks), ("surface_forms", surface_forms, links)):
        if needed and value is None:
            raise top.error(key, "missing (only an experiment that evaluates given runs goes without)")
    if computes_links and surface_forms is None:
        raise top.error("surface_forms", "missing: links = { method = ... } links the queries with the surface forms")
    uses_tagme = any("tagme" in METHODS.get(m.method).artefacts
                     for m in (interpretation.methods if interpretation else ()) if m.run is None)
    if uses_tagme and tagme is None:
        raise top.error("tagme", "missing: a TAGME method needs the TAGME artefact")
    # index and surface_forms are None only for an experiment that evaluates given runs (checked above), which reads neither
    config = ExperimentConfig(file, name, index, surface_forms, tagme, whitelist, queries,  # type: ignore[arg-type]
                              crossval, interpretation, mapping, mention, expected, retrieval, folder)
    return resolve_learning(config)


def _knowledge_base(top: _Table) -> tuple[Path | None, Path | None]:
    """``index`` and ``surface_forms``, or the demo knowledge base's for ``knowledge_base = "demo"``."""
    kb = top.get("knowledge_base", str, None)
    if kb is None:
        return top.path("index", required=False), top.path("surface_forms", required=False)
    if kb != DEMO:
        raise top.error("knowledge_base", f"unknown knowledge base {kb!r}; the bundled one is \"{DEMO}\"")
    if "index" in top.data or "surface_forms" in top.data:
        raise top.error("knowledge_base", "give either knowledge_base or index and surface_forms")
    from elquery.indexing.demo import demo_artefacts

    return demo_artefacts()


def _expected(table: _Table) -> tuple[ExpectedFigure, ...]:
    tolerance = table.parameter(TOLERANCE)
    figures = []
    for key in sorted(set(table.data) - {"tolerance"}):
        value = table.get(key, (int, float))
        parts = key.split("/")
        if len(parts) != 3 or parts[0] not in TASK_KEYS or not all(parts):
            raise table.error(key, f"expected a key TASK/METHOD/METRIC with TASK {', '.join(TASK_KEYS)}")
        figures.append(ExpectedFigure(parts[0], parts[1], parts[2], float(value), tolerance))
    if not figures:
        raise table.error("", "no figure to check")
    return tuple(figures)


def _crossval(table: _Table) -> CrossValidation:
    scheme = table.get("scheme", str, SESSIONS)
    if scheme not in SCHEMES:
        raise table.error("scheme", f"unknown scheme {scheme!r}; schemes are {', '.join(SCHEMES)}")
    folds = table.parameter(FOLDS)
    if scheme != SESSIONS and "folds" in table.data:
        why = "has one fold per query" if scheme == LEAVE_ONE_OUT else "takes its folds from the files"
        raise table.error("folds", f"{scheme} {why}; remove this key")
    files = table.paths("files") if scheme == GIVEN else ()
    seed = table.get("seed", int, 0)
    separator = table.get("session_separator", str, "_")
    if not separator:
        raise table.error("session_separator", "must not be empty")
    table.check_unknown()
    return CrossValidation(scheme, folds, seed, separator, files)


def _task(table: _Table, task: str) -> TaskSpec:
    qrels = table.path("qrels")
    metric = table.get("metric", str, "strict.F" if task == "if" else "map")
    if task == "if" and metric not in IF_METRICS:
        raise table.error("metric", f"unknown metric {metric!r}; use one of {', '.join(IF_METRICS)}")
    if task == "sm":
        try:
            parse_metric(metric)
        except ElqueryError as exc:
            raise table.error("metric", str(exc)) from None
    methods, baseline = _methods(table, lambda entry: _method(entry, task))
    table.check_unknown()
    return TaskSpec(qrels, metric, baseline, methods)


def _methods(table: _Table, parse: Callable[[_Table], MethodSpec]) -> tuple[tuple[MethodSpec, ...], str | None]:
    """A task's ``[[methods]]`` (each read by ``parse``) and its baseline, one of their labels."""
    raw = table.get("methods", list)
    if not raw:
        raise table.error("methods", "no method given")
    methods = []
    for number, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise table.error(f"methods[{number}]", "expected a table ([[...methods]])")
        methods.append(parse(_Table(table.file, f"{table.key('methods')}[{number}].", entry)))
    labels = [m.label for m in methods]
    for label in labels:
        if labels.count(label) > 1:
            raise table.error("methods", f"label {label!r} is used twice")
    baseline = table.get("baseline", str, None)
    if baseline is not None and baseline not in labels:
        raise table.error("baseline", f"{baseline!r} is not a method label ({', '.join(labels)})")
    return tuple(methods), baseline


def _label(table: _Table, default: str | None = None) -> str:
    label = table.get("label", str, ... if default is None else default)
    if not label.strip() or "|" in label or "/" in label:
        raise table.error("label", f"{label!r}: a label must be non-empty without '|' or '/'")
    return label


def _given_run(table: _Table, method: str) -> MethodSpec:
    """``run = "path"`` with a ``label``: a run file evaluated as it is."""
    run = table.path("run")
    label = _label(table)
    table.check_unknown()
    return MethodSpec(label, method, None, (), (None,), run)


def _method(table: _Table, task: str) -> MethodSpec:
    """A linking method of the registry with its grid: c (if the method has it) and the score
    threshold (GIF's s, required for GIF; TAGME's rho_NA, its default if not given), each value
    checked by the registry; its other parameters fixed (:meth:`_Table.fixed`). Semantic mapping
    takes the methods with finders (a method that finds its own interpretations prunes its ranking
    by the threshold an experiment sweeps)."""
    name = table.get("method", str)
    if name == GIVEN_RUN:
        return _given_run(table, name)
    allowed = [m.name for m in METHODS if task == "if" or m.finders]
    if name not in allowed:
        raise table.error("method", f"unknown method {name!r}; methods are {', '.join(allowed)}")
    method = METHODS.get(name)
    finder = None
    if task == "if" and method.finders:
        finder = table.get("finder", str, GIF)
        if finder not in method.finders:
            raise table.error("finder", f"unknown finder {finder!r}; finders are {', '.join(method.finders)}")
    commonness: tuple[float, ...] = ()
    c = method.parameter(COMMONNESS)
    if c is not None:
        commonness = table.numbers(COMMONNESS, (c.default,), (method, c))
    scores: tuple[float | None, ...] = (None,)
    threshold = method.parameter(method.score_threshold)
    if task == "if" and finder != TOP_RANKED and threshold is not None:
        default = None if finder == GIF else (threshold.default,)
        scores = table.numbers(SWEEP_KEYS.get(threshold.name, threshold.name), default, (method, threshold))
    learning = learning_of(method, table)
    fixed = table.fixed(method, (COMMONNESS, method.score_threshold, *((MODEL,) if learning else ())))
    label = _label(table, method.label(finder))
    _check_lacking(table, method)
    table.check_unknown()
    return MethodSpec(label, name, finder, commonness, scores, fixed=fixed, learning=learning)


def _check_lacking(table: _Table, method: LinkingMethod) -> None:
    """A key of a method's table that is neither read nor a parameter of the method is one the
    method lacks: the registry's line (:func:`~elquery.registry.validate_parameters`), as the
    Python API and the service give it."""
    lacking = sorted(key for key in set(table.data) - table.used if method.parameter(key) is None)
    if lacking:
        try:
            validate_parameters(method, {key: table.data[key] for key in lacking})
        except ElqueryError as exc:
            raise table.error(lacking[0], str(exc)) from None


def _retrieval_task(table: _Table, demo: bool) -> RetrievalTaskSpec:
    """``[entity_retrieval]``: qrels, metrics, depth, categories and retrieval methods (``demo``:
    over the demo knowledge base, whose GIF thresholds computed links default to)."""
    qrels = table.path("qrels")
    metrics = table.get("metrics", list, list(ER_METRICS))
    if not metrics or not all(isinstance(m, str) for m in metrics) or len(set(metrics)) != len(metrics):
        raise table.error("metrics", "expected a list of distinct metric names")
    metric = table.get("metric", str, metrics[0])
    for key, name in [*(("metrics", m) for m in metrics), ("metric", metric)]:
        try:
            parse_metric(name)
        except ElqueryError as exc:
            raise table.error(key, str(exc)) from None
    depth = table.parameter(DEPTH)
    categories = _categories(table.table("categories"))
    methods, baseline = _methods(table, lambda entry: _retrieval_method(entry, demo))
    table.check_unknown()
    return RetrievalTaskSpec(qrels, metric, baseline, methods, tuple(metrics), depth, categories)


def _categories(table: _Table | None) -> tuple[Category, ...]:
    if table is None:
        return ()
    categories = []
    for name in table.data:
        prefixes = table.get(name, list)
        if not prefixes or not all(isinstance(p, str) and p and "-" not in p for p in prefixes):
            raise table.error(name, "expected a non-empty list of query id prefixes (without '-')")
        if ":" in name or "/" in name:
            raise table.error(name, "a category name holds no ':' or '/'")
        categories.append(Category(name, tuple(prefixes)))
    if not categories:
        raise table.error("", "no category given")
    seen: dict[str, str] = {}
    for category in categories:
        for prefix in category.prefixes:
            if prefix in seen:
                raise table.error(category.name, f"prefix {prefix!r} is in category {seen[prefix]!r} too")
            seen[prefix] = category.name
    return tuple(categories)


def _retrieval_method(table: _Table, demo: bool) -> MethodSpec:
    """A retrieval model of the registry (:data:`elquery.retrieval.models.MODELS`, the models of
    ``elquery rank``) with its parameter grid, each setting checked by the registry, or a given run."""
    from elquery.retrieval.models import MODELS

    if "run" in table.data:
        if "model" in table.data:
            raise table.error("model", "give either model or run")
        return _given_run(table, GIVEN_RUN)
    model = table.get("model", str)
    try:
        entry = MODELS.get(model)
    except ElqueryError as exc:
        raise table.error("model", str(exc)) from None
    params_table = table.table("params")
    grid: list[tuple[str, tuple[str, ...]]] = []
    for name, value in ({} if params_table is None else params_table.data).items():
        assert params_table is not None  # a name comes only from a params table
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in values):
            raise params_table.error(name, f"expected a number, a string or a non-empty list of them, got {value!r}")
        texts = tuple(str(v) for v in values)
        if len(set(texts)) != len(texts):
            raise params_table.error(name, "a value is given twice")
        grid.append((name, texts))
    links = _links(table, demo)
    try:
        entry.check_links(links is not None)
    except ElqueryError as exc:
        raise table.error("model" if links is None else "links", str(exc)) from None
    spec = MethodSpec(_label(table, model), model, None, (), (None,), params=tuple(grid), links=links)
    table.check_unknown()
    from elquery.experiments.sweep import grid as settings

    for setting in settings(spec):
        try:
            entry.build(dict(setting.params))
        except ElqueryError as exc:
            raise table.error("params", f"{setting}: {exc}") from None
    return spec


def _links(table: _Table, demo: bool) -> Path | LinksSpec | None:
    """``links``: a links file, or ``{ method = M, commonness_threshold = C, gif_threshold = S }``,
    the linking that computes them (c and s default as ``elquery link``'s: per method, and on
    the demo knowledge base its GIF thresholds)."""
    if not isinstance(table.data.get("links"), dict):
        return table.path("links", required=False)
    linking = table.table("links")
    assert linking is not None
    name = linking.get("method", str)
    allowed = [m.name for m in METHODS if GIF in m.finders]
    if name not in allowed:
        raise linking.error("method", f"unknown method {name!r}; methods are {', '.join(allowed)}")
    method = METHODS.get(name)
    values = {}
    for parameter in (method.parameter(COMMONNESS), method.parameter(method.score_threshold)):
        assert parameter is not None  # the methods with GIF have both
        given = linking.numbers(parameter.name, (parameter.default_for(demo),), (method, parameter))
        if len(given) != 1:
            raise linking.error(parameter.name, "expected one number (links are computed once)")
        values[parameter.name] = given[0]
    fixed = linking.fixed(method, tuple(values))
    linking.check_unknown()
    return LinksSpec(name, values[COMMONNESS], values[method.score_threshold], fixed)
