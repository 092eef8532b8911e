"""Every input of an experiment, checked before its first run (docs/commands/experiment.md): the
files the config names (queries, qrels, fold files, whitelist, given runs, links files, the files
a method's parameters name such as LTR's model) exist, every artefact a method reads (its registry
entry's ``artefacts``) is an elquery artefact of its kind (the entity index, with its relations for
an ELR model; the surface-form store; the TAGME artefact), and the method's own check passes (an
LTR model trained on these artefacts' features), and the files read only once the experiment
writes (given runs, learning labels) read with their readers. A problem is one
:class:`~elquery.base.ElqueryError` line naming the path, the config key or ``--artefacts``
folder it comes from, and the methods that need it; nothing has been written by then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError
from elquery.experiments.config import GIVEN, ExperimentConfig, LinksSpec, MethodSpec
from elquery.experiments.learning import learning_files, learning_methods
from elquery.formats.elq import read_elq
from elquery.formats.trec_run import read_trec_run
from elquery.kb.artefacts import KINDS
from elquery.kb.index_format import METADATA_FILE
from elquery.linking.methods import METHODS

INDEX, SURFACE_FORMS, TAGME_ARTEFACT = "entity index", "surface-form store", "TAGME artefact"
_KEYS = {INDEX: "index", SURFACE_FORMS: "surface_forms", TAGME_ARTEFACT: "tagme"}
_KINDS = {key: kind for kind, key in _KEYS.items()}
MENTION_DETECTION = "mention detection"


@dataclass(frozen=True)
class ArtefactNeed:
    """An artefact of the config and the methods (labels) that read it."""

    kind: str
    path: Path
    users: tuple[str, ...]


def _task_methods(config: ExperimentConfig) -> list[tuple[str, MethodSpec]]:
    """(task key, method) of every method of the config, in the order they run."""
    tasks = (("if", config.interpretation_finding), ("sm", config.semantic_mapping), ("er", config.entity_retrieval))
    return [(key, method) for key, spec in tasks if spec is not None for method in spec.methods]


def artefact_needs(config: ExperimentConfig, linking: bool = True, ranking: bool = True) -> list[ArtefactNeed]:
    """The artefacts the experiment reads, each with its readers: those of linking (when
    ``linking``, i.e. the experiment's own linking backend is used) and of entity retrieval (when
    ``ranking``)."""
    users: dict[str, list[str]] = {INDEX: [], SURFACE_FORMS: [], TAGME_ARTEFACT: []}
    for task, method in _task_methods(config):
        if method.run is not None:
            continue
        if task == "er":
            if ranking:
                users[INDEX].append(method.label)
            if linking and isinstance(method.links, LinksSpec):
                users[SURFACE_FORMS].append(f"{method.label}'s links")
                for kind in _linking_kinds(method.links.method):
                    users[kind].append(f"{method.label}'s links")
        elif linking:
            for kind in _linking_kinds(method.method):
                users[kind].append(method.label)
    if linking and config.mention_detection is not None:
        users[SURFACE_FORMS].append(MENTION_DETECTION)
    paths = {INDEX: config.index, SURFACE_FORMS: config.surface_forms, TAGME_ARTEFACT: config.tagme}
    return [ArtefactNeed(kind, paths[kind], tuple(dict.fromkeys(labels)))  # type: ignore[arg-type]  # checked present
            for kind, labels in users.items() if labels]


def _linking_kinds(method: str) -> list[str]:
    """The artefacts (kinds of :data:`KINDS`) a linking method reads, as its registry entry says."""
    return [_KINDS[key] for key in METHODS.get(method).artefacts if key in _KINDS]


def check_inputs(config: ExperimentConfig, out_dir: Path, linking: bool = True, ranking: bool = True) -> None:
    """Check every input of ``config`` (see the module docstring) and that ``out_dir`` can be
    the output folder; ``linking`` and ``ranking`` as :func:`artefact_needs`."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ElqueryError(f"{out_dir}: exists and is not a folder (--out is the experiment's output folder)")
    for path, what in _files(config):
        if not path.is_file():
            raise ElqueryError(f"{path}: no such file ({what} of {config.path.name})")
    _check_given_files(config)
    needs = artefact_needs(config, linking, ranking)
    if needs and config.artefacts is not None and not config.artefacts.is_dir():
        raise ElqueryError(f"{config.artefacts}: no such artefacts folder (build one with `elquery build`)")
    for need in needs:
        if not KINDS[need.kind](need.path):
            raise ElqueryError(f"{need.path}: no {need.kind} there ({_origin(config, need.kind)}; "
                               f"read by {', '.join(need.users)})")
    if linking:
        _check_methods(config)
    if learning_methods(config):
        from elquery.experiments.fold_models import check_learning
        check_learning(config)
    if ranking:
        _check_relations(config)
        _check_links_files(config)


def _check_given_files(config: ExperimentConfig) -> None:
    """The files the experiment reads only after it has started writing, read now with the
    readers that read them then: each given run (an ELQ run for interpretation finding, a TREC
    run otherwise) and the ELQ qrels a learning method labels its training pairs with. A bad line
    or byte is the reader's one line, with the config key it comes from."""
    readers: list[tuple[Path, str, Callable[[Path], object]]] = []
    for task, method in _task_methods(config):
        if method.run is not None:
            reader = read_elq if task == "if" else read_trec_run
            readers.append((method.run, f"the run of method {method.label!r}", reader))
    if learning_methods(config):
        from elquery.linking.ltr.feature_file import read_ground_truth

        for _, method in learning_methods(config):
            spec = method.learning
            assert spec is not None
            labels = spec.train.qrels if spec.train is not None else spec.labels
            if labels is not None:
                key = "train.qrels" if spec.train is not None else "the labels"
                readers.append((labels, f"{key} of method {method.label!r}", read_ground_truth))
    for path, what, read in readers:
        try:
            read(path)
        except ElqueryError as exc:
            raise ElqueryError(f"{exc} ({what} of {config.path.name})") from None


def _linking_specs(config: ExperimentConfig) -> list[tuple[str, str, tuple[tuple[str, object], ...]]]:
    """(label, linking method, fixed parameters) of every linking the experiment runs with a
    linker (a method that learns its model is checked by :func:`~elquery.experiments.fold_models.check_learning`)."""
    found: list[tuple[str, str, tuple[tuple[str, object], ...]]] = []
    for task, method in _task_methods(config):
        if method.run is None and task != "er" and method.learning is None:
            found.append((method.label, method.method, method.fixed))
        elif isinstance(method.links, LinksSpec):
            found.append((f"{method.label}'s links", method.links.method, method.links.fixed))
    return found


def _check_methods(config: ExperimentConfig) -> None:
    """Each linking method's own check of what its parameters name (LTR: the model is one for
    these artefacts' features), in one line naming the method."""
    paths = {"index": config.index, "surface_forms": config.surface_forms, "tagme": config.tagme}
    for label, name, fixed in _linking_specs(config):
        method = METHODS.get(name)
        if method.check is not None:
            try:
                method.check({kind: paths[kind] for kind in method.artefacts if kind in paths}, dict(fixed))
            except ElqueryError as exc:
                raise ElqueryError(f"{exc} (read by {label})") from None


def _files(config: ExperimentConfig) -> list[tuple[Path, str]]:
    """Every plain file the config names, with what it is."""
    files = [(config.queries, "queries")]
    if config.crossval.scheme == GIVEN:
        files += [(path, "crossval.files") for path in config.crossval.files]
    if config.whitelist is not None:
        files.append((config.whitelist, "whitelist"))
    tasks = (("interpretation_finding", config.interpretation_finding), ("semantic_mapping", config.semantic_mapping),
             ("entity_retrieval", config.entity_retrieval))
    for name, spec in tasks:
        if spec is not None:
            files.append((spec.qrels, f"{name}.qrels"))
    if config.mention_detection is not None:
        files.append((config.mention_detection.qrels, "mention_detection.qrels"))
    for _, method in _task_methods(config):
        if method.run is not None:
            files.append((method.run, f"the run of method {method.label!r}"))
        if isinstance(method.links, Path):
            files.append((method.links, f"the links of method {method.label!r}"))
    for label, name, fixed in _linking_specs(config):
        parameters = {p.name: p for p in METHODS.get(name).parameters}
        files += [(Path(value), f"the {key} of method {label!r}") for key, value in fixed  # type: ignore[arg-type]  # a path string
                  if parameters[key].kind is Path]
    return files + learning_files(config)


def _origin(config: ExperimentConfig, kind: str) -> str:
    """Where the path of an artefact comes from, and how to make it."""
    if config.artefacts is not None:
        return f"--artefacts {config.artefacts}: build it with `elquery build --out {config.artefacts}`"
    return f"{_KEYS[kind]} of {config.path.name}"


def _elr_methods(config: ExperimentConfig) -> list[MethodSpec]:
    spec = config.entity_retrieval
    return [] if spec is None else [m for m in spec.methods if m.run is None and m.links is not None]


def _check_relations(config: ExperimentConfig) -> None:
    """An ELR model reads the index's relations (``--relations``)."""
    labels = [m.label for m in _elr_methods(config)]
    if not labels:
        return
    metadata = json.loads((config.index / METADATA_FILE).read_text(encoding="utf-8"))
    if not metadata.get("relations"):
        how = "`elquery build --relations`" if config.artefacts is not None else "`elquery index dbpedia --relations`"
        raise ElqueryError(f"{config.index}: the index has no relations, which {', '.join(labels)} read; "
                           f"build it with {how}")


def _check_links_files(config: ExperimentConfig) -> None:
    """A links file's lines parse, and its entities are in the index."""
    from elquery.retrieval.links import check_links, read_links

    for path in dict.fromkeys(m.links for m in _elr_methods(config) if isinstance(m.links, Path)):
        check_links(read_links(path), config.index)
