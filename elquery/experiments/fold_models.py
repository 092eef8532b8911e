"""Learning to rank inside the folds of an experiment (methods.md §9 and §7; issue 29.5).

A method that learns its model (:mod:`elquery.experiments.learning`: LTR without ``model``) is run
from the LTR package's parts, not through a linker per fold:

* **Features, once per query.** The 28 features of every candidate pair of every query
  (:class:`~elquery.linking.ltr.features.FeatureExtractor`, commonness >= c) are extracted once and
  cached under ``cache/ltr-features-c<c>.<hash>.jsonl`` (the queries of ``train`` in a file of
  their own), named by a hash of the artefacts, the queries, c and the code, like the other
  cached triples (:mod:`elquery.experiments.sweep`).
* **A model per fold.** With the session folds, fold f's model is trained on the pairs of the
  queries of the other folds only, labelled 1 when the entity is in some ground-truth
  interpretation of the query (ELQ qrels; queries missing from the qrels are not trained on), and
  scores the queries of fold f: every query is answered by a model that never saw it
  (:func:`~elquery.linking.ltr.model.train_forest`, deterministic for the config's seed). With
  ``train``, one model trained on those queries scores every query. The models are ONNX files of
  ``elquery ltr train`` (``cache/ltr-model-c<c>.<hash>.onnx``, usable with ``elquery link --method
  ltr --model``), each recording its training query ids; ``ltr-models.tsv`` lists them.
* **Runs.** The run of a setting (c, s) holds each query's LTR-greedy interpretations (GIF with
  threshold s on its model's scores, methods.md §5) or its LTR ranking (semantic mapping), as the
  runs of the other methods: the sweep, the cross-validated run, significance and the tables are
  those of :mod:`elquery.experiments.runner`.
* **Choosing s without the test fold.** The training queries of fold f are scored by its own
  model only in-sample, so s is chosen on scores no model of theirs was trained on: the queries of
  each other fold g by the model trained on the folds other than f and g (inner cross-validation;
  k + k(k-1)/2 models in all, 15 for 5 folds). In each fold, the setting with the best mean of the
  task's metric over its training queries is chosen (ties to the setting listed first), as
  :func:`elquery.experiments.crossval.choose` chooses for the other methods. With ``train``, the
  scores of every query come from a model that saw none of them, and the choice is the usual one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from elquery.base import ElqueryError
from elquery.evaluation.readers import read_jsonl
from elquery.experiments.config import ExperimentConfig, MethodSpec
from elquery.experiments.crossval import FoldChoice, choose, cross_validate
from elquery.experiments.entity_ids import ExperimentIds
from elquery.experiments.folds import Fold
from elquery.experiments.learning import LearningSpec, TrainingQueries, learning_methods
from elquery.experiments.sweep import RunStore, Setting, digest, file_identity, find_interpretations, tag
from elquery.files import atomic_output, sha256_of
from elquery.kb.normalize import tokenize
from elquery.linking.ltr.features import FEATURES, FeatureExtractor
from elquery.linking.ltr.model import (LtrModel, artefact_ids, model_bytes, new_info, require_extra, train_forest,
                                       write_model)
from elquery.kb.identifiers import table_of_index
from elquery.linking.mentions import read_whitelist
from elquery.linking.methods import METHODS
from elquery.linking.output import write_results
from elquery.linking.types import LinkResult, Mention, ScoredMention

MODELS_FILE = "ltr-models.tsv"
Scores = dict[str, dict[str, float]]  # metric -> qid -> score


@dataclass(frozen=True)
class QueryPairs:
    """One query's candidate pairs (score 0: not scored yet) and their feature rows."""

    qid: str
    query: str
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    pairs: tuple[ScoredMention, ...]
    matrix: np.ndarray


@dataclass(frozen=True)
class FeatureSet:
    """The features of a query set for one c: the cache file, its hash key, and every query's."""

    key: str
    path: Path
    queries: Mapping[str, QueryPairs]


@dataclass(frozen=True)
class TrainedModel:
    """A model of a learning method: its file, the commonness threshold of its candidates, the
    folds whose queries it never saw (``held_out``; empty for a model of ``train`` queries), and
    what it was trained on."""

    key: str
    path: Path
    c: float
    held_out: tuple[int, ...]
    queries: tuple[str, ...]
    rows: int
    positives: int


class FoldLearning:
    """The features, models and runs of an experiment's learning methods (see the module
    docstring), under the output folder of ``store``; ``workers`` threads train a forest."""

    def __init__(self, config: ExperimentConfig, store: RunStore, folds: Sequence[Fold], workers: int = 1,
                 ids: ExperimentIds | None = None) -> None:
        self.config = config
        self.ids = ExperimentIds(config.index) if ids is None else ids
        """Reads the labels' qrels, their ids in any scheme resolved (docs/identifiers.md)."""
        self.store = store
        self.folds = tuple(folds)
        self.workers = workers
        self.whitelist = None if config.whitelist is None else read_whitelist(config.whitelist, table_of_index(config.index))
        self.artefacts = {"index": config.index, "surface_forms": config.surface_forms}
        self._features: dict[tuple[float, TrainingQueries | None], FeatureSet] = {}
        self._truth: dict[Path, dict[str, frozenset[str]]] = {}
        self._prepared: dict[tuple[str, float], dict[tuple[int, ...], TrainedModel]] = {}
        self._loaded: dict[str, LtrModel] = {}
        self._scored: dict[tuple[str, str], LinkResult] = {}
        self.models: dict[tuple[str, str], TrainedModel] = {}
        """(method label, model key) -> model, for :data:`MODELS_FILE`."""

    # --- features ---------------------------------------------------------------------------

    def features(self, c: float, train: TrainingQueries | None = None) -> FeatureSet:
        """The features of the experiment's queries (or of ``train``'s) with commonness threshold c,
        extracted now unless they are cached."""
        if (c, train) not in self._features:
            queries = self.store.queries if train is None else _training_queries(train.queries)
            identity = {kind: file_identity(path) for kind, path in self.artefacts.items()}
            key = digest("ltr-features", identity, queries, c, FEATURES)
            name = f"ltr-features{'' if train is None else '-train'}-c{c:g}"
            path = self.store.out_dir / "cache" / f"{name}.{key}.jsonl"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                _write_features(self._extract(queries, c, name), path)
            records = read_jsonl(path) if path.stat().st_size else []
            self._features[(c, train)] = FeatureSet(key, path, {r["qid"]: _query_pairs(r) for r in records})
        return self._features[(c, train)]

    def _extract(self, queries: Mapping[str, str], c: float, name: str) -> Iterable[QueryPairs]:
        with FeatureExtractor(self.config.index, self.config.surface_forms, c) as extractor, \
                tqdm(total=len(queries), desc=f"features {name}", unit="query",
                     disable=None if self.store.progress else True) as bar:
            for qid, query in queries.items():
                found, matrix = extractor.extract(query)
                tokens = tokenize(query)
                pairs = tuple(ScoredMention(p.mention, p.entity, 0.0, p.commonness) for p in found)
                yield QueryPairs(qid, query, tuple(t.text for t in tokens), tuple((t.start, t.end) for t in tokens),
                                 pairs, matrix)
                bar.update(1)

    # --- models -----------------------------------------------------------------------------

    def truth(self, qrels: Path) -> dict[str, frozenset[str]]:
        """Per query of ELQ qrels, the entities of its ground-truth interpretations (DBpedia ids)."""
        if qrels not in self._truth:
            self._truth[qrels] = self.ids.ground_truth(qrels)
        return self._truth[qrels]

    def held_out_sets(self, spec: LearningSpec) -> list[tuple[int, ...]]:
        """The held-out folds of every model a method with ``spec`` trains: one per fold, then one
        per pair of folds (the inner cross-validation); one model (no fold) with ``train``."""
        if spec.train is not None:
            return [()]
        indices = [fold.index for fold in self.folds]
        return [(i,) for i in indices] + list(combinations(indices, 2))

    def model(self, method: MethodSpec, c: float, held_out: tuple[int, ...]) -> TrainedModel:
        """The model of ``method`` with commonness threshold c trained without the queries of the
        folds ``held_out`` (or on ``train``'s queries), trained now unless it is cached."""
        spec = method.learning
        assert spec is not None
        features = self.features(c, spec.train)
        if spec.train is not None:
            qrels, held = spec.train.qrels, set()
        else:
            assert spec.labels is not None
            qrels, held = spec.labels, {q for i in held_out for q in self.folds[i].test}
        truth = self.truth(qrels)
        queries = tuple(q for q in sorted(features.queries) if q not in held and q in truth)
        key = digest("ltr-model", features.key, queries, file_identity(qrels), spec.trees, spec.max_features, spec.seed)
        path = self.store.out_dir / "cache" / f"ltr-model-c{c:g}.{key}.onnx"
        pairs = [(q, pair) for q in queries for pair in features.queries[q].pairs]
        labels = np.array([int(pair.entity in truth[q]) for q, pair in pairs], dtype=np.int8)
        if not path.exists():
            if not pairs:
                folds = ", ".join(map(str, held_out)) or "none"
                raise ElqueryError(f"{method.label}: no candidate pair among the training queries (held-out folds: "
                                   f"{folds}, c = {c:g}): nothing to train a model on")
            matrix = np.concatenate([features.queries[q].matrix for q in queries])
            forest = train_forest(matrix, labels, spec.trees, spec.max_features, spec.seed, self.workers,
                                  one_label=True)
            training = {"file": features.path.name, "sha256": sha256_of(features.path), "rows": len(pairs),
                        "queries": len(queries), "positives": int(labels.sum()), "labels": qrels.name,
                        "held_out_folds": list(held_out), "qids": list(queries)}
            write_model(path, model_bytes(forest, new_info(forest, training, artefact_ids(self.artefacts), c)))
        model = TrainedModel(key, path, c, held_out, queries, len(pairs), int(labels.sum()))
        self.models[(method.label, key)] = model
        return model

    def prepare(self, method: MethodSpec, c: float) -> dict[tuple[int, ...], TrainedModel]:
        """Every model of ``method`` and c, by held-out folds (trained now if not cached)."""
        assert method.learning is not None
        if (method.label, c) not in self._prepared:
            held_out = self.held_out_sets(method.learning)
            models = {}
            with tqdm(total=len(held_out), desc=f"models {method.label} c={c:g}", unit="model",
                      disable=None if self.store.progress else True) as bar:
                for folds in held_out:
                    models[folds] = self.model(method, c, folds)
                    bar.update(1)
            if all(model.positives == 0 for model in models.values()):
                print(f"warning: {method.label} (c={c:g}): no training query has a ground-truth entity among its "
                      "candidate pairs; every model scores every pair 0", file=sys.stderr)
            self._prepared[(method.label, c)] = models
        return self._prepared[(method.label, c)]

    # --- runs -------------------------------------------------------------------------------

    def assignment(self, method: MethodSpec, c: float, outer: int | None = None
                   ) -> list[tuple[TrainedModel, list[str]]]:
        """Which model scores which queries: each fold's test queries by the model that never saw
        that fold; with ``outer``, the queries of every other fold g by the model trained without
        folds ``outer`` and g (those of fold ``outer`` are not scored). With ``train``, its model
        scores every query."""
        assert method.learning is not None
        models = self.prepare(method, c)
        if method.learning.train is not None:
            return [(models[()], list(self.store.queries))]
        if outer is None:
            return [(models[(fold.index,)], list(fold.test)) for fold in self.folds]
        return [(models[tuple(sorted((outer, fold.index)))], list(fold.test))
                for fold in self.folds if fold.index != outer]

    def scored(self, method: MethodSpec, model: TrainedModel, qid: str) -> LinkResult:
        """A query's pairs scored by ``model``, its ranking by ``method`` (semantic mapping: entities
        by their best pair's score) and no interpretations; pairs outside the whitelist are left out."""
        if (model.key, qid) not in self._scored:
            if model.key not in self._loaded:
                self._loaded[model.key] = LtrModel.load(model.path)
            query = self.features(model.c).queries[qid]
            scores = self._loaded[model.key].score(query.matrix)
            scored = tuple(ScoredMention(p.mention, p.entity, float(score), p.commonness)
                           for p, score in zip(query.pairs, scores)
                           if self.whitelist is None or p.entity in self.whitelist)
            ranking = METHODS.get(method.method).rank(scored)
            self._scored[(model.key, qid)] = LinkResult(qid, query.query, query.tokens, scored, (), tuple(ranking),
                                                        query.offsets)
        return self._scored[(model.key, qid)]

    def run(self, task: str, method: MethodSpec, setting: Setting, outer: int | None = None) -> Path:
        """The run file of a setting: every query answered by its model (``outer``: the inner run
        of that fold, which leaves its queries out), interpretations (``elq``) for task ``"if"``,
        the ranking (``trec``) for ``"sm"``."""
        assert setting.c is not None
        assignment = self.assignment(method, setting.c, outer)
        whitelist = None if self.config.whitelist is None else file_identity(self.config.whitelist)
        key = digest("ltr-run", task, method.method, method.finder, setting.s, whitelist,
                     [(model.key, qids) for model, qids in assignment])
        fmt = "elq" if task == "if" else "trec"
        folder = self.store.out_dir / "runs" / method.label
        if outer is not None:
            folder = folder / "inner" / f"fold{outer}"
        path = folder / f"{setting.slug}.{key}.{fmt}"
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            results = sorted((self.scored(method, model, qid) for model, qids in assignment for qid in qids),
                             key=lambda result: result.qid)
            if task == "if":
                results = [LinkResult(r.qid, r.query, r.tokens, r.scored,
                                      tuple(find_interpretations(method, setting, r)), r.ranking, r.offsets)
                           for r in results]
            write_results(results, path, fmt, tag(method.label))
        return path

    def choices(self, task: str, method: MethodSpec, settings: Sequence[Setting],
                objective: Mapping[Setting, Mapping[str, float]], evaluate: Callable[[Path], Scores],
                metric: str) -> list[FoldChoice[Setting]]:
        """The setting of each fold: chosen on its training queries' scores by models that never
        saw them (the inner runs), or, with ``train``, on ``objective`` (the runs' scores) as
        :func:`~elquery.experiments.crossval.cross_validate` chooses."""
        assert method.learning is not None
        if method.learning.train is not None:
            return cross_validate(self.folds, objective)
        chosen = []
        for fold in self.folds:
            inner = {setting: evaluate(self.run(task, method, setting, fold.index))[metric] for setting in settings}
            chosen.append(FoldChoice(fold, *choose(inner, fold.train)))
        return chosen

    def write_models(self, path: Path) -> None:
        """``ltr-models.tsv``: per method and model, c, the held-out folds, the model file (relative
        to the output folder), and its training queries, rows and positive rows."""
        with atomic_output(path) as stream:
            stream.write("method\tc\theld_out\tmodel\tqueries\trows\tpositives\n")
            for (label, _), model in self.models.items():
                held = ",".join(map(str, model.held_out))
                stream.write(f"{label}\t{model.c:g}\t{held}\t{model.path.relative_to(self.store.out_dir)}\t"
                             f"{len(model.queries)}\t{model.rows}\t{model.positives}\n")


def check_learning(config: ExperimentConfig) -> None:
    """Before an experiment runs: the LTR extra is installed, the artefacts give the LTR features
    (the index's LTR fields, the store's KB aliases), and no training query of ``train`` is a query
    of the experiment (one line each)."""
    from elquery.retrieval.queries import read_queries

    methods = learning_methods(config)
    if not methods:
        return
    for module in ("sklearn.ensemble", "onnx"):
        require_extra(module)
    FeatureExtractor(config.index, config.surface_forms).close()
    experiment = {q.qid for q in read_queries(config.queries)}
    for _, method in methods:
        assert method.learning is not None
        train = method.learning.train
        if train is None:
            continue
        seen = sorted(experiment & set(_training_queries(train.queries)))
        if seen:
            raise ElqueryError(f"{train.queries}: {len(seen)} of the experiment's queries are training queries of "
                               f"method {method.label!r} (first: {seen[0]}); a model must not be trained on the "
                               "queries it is evaluated on")


def _training_queries(path: Path) -> dict[str, str]:
    from elquery.retrieval.queries import read_queries

    return dict(sorted((q.qid, q.text) for q in read_queries(path)))


def _write_features(queries: Iterable[QueryPairs], path: Path) -> None:
    with atomic_output(path) as stream:
        for query in queries:
            stream.write(json.dumps({
                "qid": query.qid, "query": query.query, "tokens": list(query.tokens),
                "offsets": [list(o) for o in query.offsets],
                "pairs": [[p.mention.text, p.mention.start, p.mention.end, p.entity, p.commonness]
                          for p in query.pairs],
                "features": query.matrix.tolist()}, ensure_ascii=False) + "\n")


def _query_pairs(record: Mapping[str, Any]) -> QueryPairs:
    pairs = tuple(ScoredMention(Mention(text, start, end), entity, 0.0, commonness)
                  for text, start, end, entity, commonness in record["pairs"])
    matrix = np.array(record["features"], dtype=np.float64).reshape(len(pairs), len(FEATURES))
    return QueryPairs(record["qid"], record["query"], tuple(record["tokens"]),
                      tuple((a, b) for a, b in record["offsets"]), pairs, matrix)
