"""What an experiment learns (methods.md §9; issue 29.5): a linking method whose registry entry reads
a model (``"model"`` among its artefacts: LTR) and whose config entry names none learns one
itself: a random forest per fold, trained on the training queries' features with the labels of
ELQ qrels, or one forest trained on other queries (``train``). The config keys (beside the
method's own c and s)::

    [[interpretation_finding.methods]]
    method = "ltr"
    gif_threshold = [0.1, 0.2, 0.3]  # LTR-greedy's s, swept and chosen by cross-validation
    trees = 100                      # [1000] trees of the forest
    max_features = 3                 # [3] features tried per split
    seed = 1                         # [1] the forest's random seed: the same models every run
    labels = "qrels-elq.txt"         # [interpretation_finding.qrels] ELQ qrels labelling the pairs
    train = { queries = "...", qrels = "..." }   # optional: one model trained on these queries
                                                 # (e.g. all of Y-ERD for ERD-dev) instead of a
                                                 # model per fold

A model per fold needs the session folds (``crossval.scheme = "sessions"``); with another scheme,
``train`` is required. This module reads and checks the keys; :mod:`elquery.experiments.fold_models`
trains and applies the models.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from elquery.base import ElqueryError

if TYPE_CHECKING:
    from elquery.experiments.config import ExperimentConfig, MethodSpec, TaskSpec, _Table
    from elquery.linking.methods import LinkingMethod

MODEL = "model"
"""The artefact (and parameter) of a method that scores with a learned model."""
KEYS = ("trees", "max_features", "seed", "labels", "train")
MAX_SEED = 2**32 - 1
"""The largest seed scikit-learn's random state takes."""


@dataclass(frozen=True)
class TrainingQueries:
    """Queries (a query file) and their ELQ qrels: the training data of one model applied to every
    query of the experiment (``train = { queries = ..., qrels = ... }``)."""

    queries: Path
    qrels: Path


@dataclass(frozen=True)
class LearningSpec:
    """How a method learns its model: the random forest's parameters (methods.md §9: 1,000 trees,
    3 features tried per split) and seed, the ELQ qrels labelling the experiment's training queries
    (``labels``), or other queries to train one model on (``train``)."""

    trees: int
    max_features: int
    seed: int
    labels: Path | None = None
    train: TrainingQueries | None = None

    def describe(self) -> str:
        """``a random forest of 100 trees (3 features per split, seed 1)``."""
        return (f"a random forest of {self.trees} trees ({self.max_features} features per split, "
                f"seed {self.seed})")


def learning_of(method: LinkingMethod, table: _Table) -> LearningSpec | None:
    """How the config entry ``table`` of ``method`` learns its model: None for a method without
    a model, or an entry that names its model (which then takes none of :data:`KEYS`)."""
    if MODEL not in method.artefacts:
        return None
    if MODEL not in table.data:
        return parse_learning(table)
    for key in KEYS:
        if key in table.data:
            raise table.error(key, f"goes with a model the experiment learns, but {MODEL} names one "
                              "(remove one of them)")
    return None


def parse_learning(table: _Table) -> LearningSpec:
    """The learning keys of a method's config entry (:data:`KEYS`), each checked; one line naming
    the key for a bad value."""
    from elquery.linking.ltr.features import FEATURES
    from elquery.linking.ltr.model import DEFAULT_MAX_FEATURES, DEFAULT_SEED, DEFAULT_TREES, MAX_TREES

    trees = _whole(table, "trees", DEFAULT_TREES, 1, MAX_TREES, "a number of trees")
    max_features = _whole(table, "max_features", DEFAULT_MAX_FEATURES, 1, len(FEATURES), "features tried per split")
    seed = _whole(table, "seed", DEFAULT_SEED, 0, MAX_SEED, "a random seed")
    labels = table.path("labels", required=False)
    train = None
    given = table.table("train")
    if given is not None:
        if labels is not None:
            raise table.error("labels", "train = { queries, qrels } labels its queries with its own qrels; "
                              "remove labels")
        train = TrainingQueries(given.path("queries"), given.path("qrels"))
        given.check_unknown()
    return LearningSpec(trees, max_features, seed, labels, train)


def _whole(table: _Table, name: str, default: int, minimum: int, maximum: int | None, what: str) -> int:
    value = table.get(name, int, default)
    if value < minimum or maximum is not None and value > maximum:
        bound = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        raise table.error(name, f"expected {what} {bound}, got {value}")
    return value


def resolve_learning(config: ExperimentConfig) -> ExperimentConfig:
    """``config`` with the labels of every learning method resolved (interpretation finding's
    qrels unless ``labels`` or ``train`` says otherwise) and the cross-validation each needs
    checked: one line naming the method's config key for a problem."""
    interpretation = _resolve(config, config.interpretation_finding, "interpretation_finding")
    return replace(config, interpretation_finding=interpretation,
                   semantic_mapping=_resolve(config, config.semantic_mapping, "semantic_mapping"))


def _resolve(config: ExperimentConfig, task: TaskSpec | None, key: str) -> TaskSpec | None:
    from elquery.experiments.config import SESSIONS

    if task is None:
        return None
    methods = []
    for number, method in enumerate(task.methods):
        spec = method.learning
        if spec is not None and spec.train is None:
            where = f"{config.path}: {key}.methods[{number}]"
            if config.crossval.scheme != SESSIONS:
                raise ElqueryError(
                    f"{where}: {method.method} without a {MODEL} learns one per fold, which needs the session "
                    f"folds (crossval.scheme = \"{SESSIONS}\"; {config.crossval.scheme} would train a model "
                    "per fold of it); give train = { queries = ..., qrels = ... } to learn one model on other queries")
            if spec.labels is None:
                if config.interpretation_finding is None:
                    raise ElqueryError(f"{where}: labels: missing: the ELQ qrels that label the training pairs "
                                       "(there is no [interpretation_finding] to take them from)")
                method = replace(method, learning=replace(spec, labels=config.interpretation_finding.qrels))
        methods.append(method)
    return replace(task, methods=tuple(methods))


def learning_note(method: MethodSpec) -> str:
    """The report's sentence on how ``method`` learned its models."""
    spec = method.learning
    assert spec is not None
    if spec.train is not None:
        return (f"{method.label}: {spec.describe()} trained on the queries of `{spec.train.queries.name}` "
                f"(labels `{spec.train.qrels.name}`).")
    labels = "" if spec.labels is None else f" (labels `{spec.labels.name}`)"
    return (f"{method.label}: {spec.describe()} trained inside each fold on its training queries{labels}; "
            "its parameters chosen on scores of models that never saw the queries they score (ltr-models.tsv).")


def learning_methods(config: ExperimentConfig) -> list[tuple[str, MethodSpec]]:
    """(task key ``if``/``sm``, method) of every method of ``config`` that learns a model."""
    tasks = (("if", config.interpretation_finding), ("sm", config.semantic_mapping))
    return [(key, m) for key, task in tasks if task is not None for m in task.methods if m.learning is not None]


def learning_files(config: ExperimentConfig) -> list[tuple[Path, str]]:
    """The files the learning methods read (labels, training queries and qrels), with what each is."""
    files: list[tuple[Path, str]] = []
    for _, method in learning_methods(config):
        spec = method.learning
        assert spec is not None
        if spec.train is not None:
            files += [(spec.train.queries, f"train.queries of method {method.label!r}"),
                      (spec.train.qrels, f"train.qrels of method {method.label!r}")]
        elif spec.labels is not None:
            files.append((spec.labels, f"the labels of method {method.label!r}"))
    return files
