"""``elquery build``: every artefact from the downloaded data, stage by stage (docs/commands/build.md).

Stages, in order: the entity index (``elquery index dbpedia``), the identifiers table inside it
(page ids, Freebase mids, Wikidata QIDs: :mod:`elquery.indexing.identifiers`), the surface-form store from KB
names, anchor texts and FACC counts (``elquery index surface-forms``), the TAGME artefact
(``elquery index tagme``), into the layout of :mod:`elquery.indexing.artefacts`. Each takes every
option of its own command. ``stages`` chooses them; by default every stage the inputs allow is
built (TAGME needs anchor texts, page links and long abstracts, which not every dump has), and
the others are named, with the reason, in one line.

Everything is checked before anything is written: the input files of every chosen stage, the
options, and what is already in the artefacts folder. A stage is skipped when its artefact exists
and the provenance record in it (:mod:`elquery.indexing.provenance`) has the identity the stage
would build now: the same elquery version, options and input files (by name, size and SHA-256).
Otherwise it is rebuilt, by the builder its own command runs, which works beside its output and
publishes it whole: an interrupted build leaves the stages it finished and nothing of the one it
was in (not even the artefacts folder, when it finished none), so running it again resumes where
it stopped; it first removes what builds killed outright left (:mod:`elquery.indexing.build_outputs`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from elquery.base import ElqueryError
from elquery.indexing.artefacts import ArtefactPaths
from elquery.indexing.build_outputs import KINDS, created_folder, remove_stale_work, take_held_signal
from elquery.indexing.entity_documents import SKIPPED_DATASETS
from elquery.indexing.provenance import BuildPlan, read_provenance
from elquery.indexing.tagme.params import TagmeBuildParams
from elquery.indexing.surface_forms.memory import DEFAULT_MEMORY_MB

Log = Callable[[str], None]
STAGES = ("index", "identifiers", "surface-forms", "tagme")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class BuildAllOptions:
    """The options of ``elquery build``: its stages (None: every one the inputs allow) and the
    options of each stage's command. ``anchors`` None counts anchor texts when an
    ``anchor_text_*`` dump is among ``data``; ``memory_mb``, ``workers`` and ``progress`` do not
    change an artefact."""

    data: tuple[Path, ...]
    stages: tuple[str, ...] | None = None
    # index (elquery index dbpedia)
    top_predicates: int = 1000
    skip_datasets: tuple[str, ...] = SKIPPED_DATASETS
    relations: bool = False
    ltr_fields: bool = True
    # surface forms (elquery index surface-forms)
    facc: tuple[Path, ...] = ()
    facc_annotations: tuple[Path, ...] = ()
    min_posterior: float = 0.0
    anchors: bool | None = None
    kb_aliases: bool = True
    min_count: int = 1
    memory_mb: int = DEFAULT_MEMORY_MB
    # TAGME (elquery index tagme)
    tagme: TagmeBuildParams = TagmeBuildParams()
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    progress: bool | None = None

    def __post_init__(self) -> None:
        if not self.data:
            raise ElqueryError("--data: no data folder given")
        for name in self.stages or ():
            if name not in STAGES:
                raise ElqueryError(f"--stages: no stage {name!r} (choose from {', '.join(STAGES)})")
        if self.stages is not None and not self.stages:
            raise ElqueryError(f"--stages: no stage given (choose from {', '.join(STAGES)})")
        for flag, value in (("--top-predicates", self.top_predicates), ("--min-count", self.min_count),
                            ("--memory", self.memory_mb), ("--workers", self.workers)):
            if value < 1:
                raise ElqueryError(f"{flag} must be at least 1, not {value}")


@dataclass(frozen=True)
class StageResult:
    """What one stage did: ``built`` or skipped, and why."""

    name: str
    path: Path
    built: bool
    reason: str
    seconds: float

    def line(self) -> str:
        done = f"built in {self.seconds:.1f} s ({self.reason})" if self.built else f"up to date ({self.reason})"
        return f"{self.name}: {done} -> {self.path}"


@dataclass(frozen=True)
class _Stage:
    name: str
    kind: str
    path: Path
    plan: BuildPlan
    build: Callable[[], list[str]]  # runs the builder, returns its summary lines


def _index_stage(paths: ArtefactPaths, options: BuildAllOptions) -> _Stage:
    from elquery.indexing.build_index import build_dbpedia_index, index_plan
    from elquery.indexing.entity_documents import is_skipped_dataset

    plan = index_plan(options.data, options.top_predicates, options.skip_datasets, options.relations,
                      options.ltr_fields)
    if all(is_skipped_dataset(f, options.skip_datasets) for f in plan.inputs):
        raise ElqueryError("every dump is of a dataset the index skips (--skip-datasets)")

    def build() -> list[str]:
        summary = build_dbpedia_index(options.data, paths.index, top_predicates_n=options.top_predicates,
                                      workers=options.workers, overwrite=True, skipped_datasets=options.skip_datasets,
                                      relations=options.relations, ltr_fields=options.ltr_fields)
        return [summary.line()]

    return _Stage("index", "entity index", paths.index, plan, build)


def _surface_forms_stage(paths: ArtefactPaths, options: BuildAllOptions) -> _Stage:
    from elquery.indexing.ntriples import dump_files
    from elquery.indexing.surface_forms.build import BuildOptions, build_store, store_plan
    from elquery.indexing.surface_forms.sources import ANCHOR_TEXT, FOAF_NAME, RDFS_LABEL, predicates_of

    anchors = options.anchors
    if anchors is None:
        anchors = any(f.name.startswith("anchor_text_") for f in dump_files(options.data))
    store_options = BuildOptions(dumps=options.data, facc=options.facc, facc_annotations=options.facc_annotations,
                                 min_posterior=options.min_posterior, anchors=anchors, kb_aliases=options.kb_aliases,
                                 min_count=options.min_count, workers=options.workers, memory_mb=options.memory_mb,
                                 progress=options.progress)
    plan = store_plan(store_options)
    names = frozenset({RDFS_LABEL, FOAF_NAME} if options.kb_aliases else ()) | frozenset({ANCHOR_TEXT} if anchors else ())
    if not (options.facc or options.facc_annotations or any(predicates_of(f, names) for f in plan.inputs)):
        raise ElqueryError("no dump of names (labels, persondata" + (", anchor_text" if anchors else "")
                           + ") and no --facc to take surface forms from")

    def build() -> list[str]:
        return build_store(paths.surface_forms, store_options, overwrite=True).summary_lines()[-1:]

    return _Stage("surface-forms", "surface-form store", paths.surface_forms, plan, build)


def _tagme_stage(paths: ArtefactPaths, options: BuildAllOptions) -> _Stage:
    from elquery.indexing.tagme.build import build_tagme, tagme_plan

    def build() -> list[str]:
        summary = build_tagme(options.data, paths.tagme, options.tagme, overwrite=True)
        return [summary.line(), *summary.warnings()]

    return _Stage("tagme", "TAGME artefact", paths.tagme, tagme_plan(options.data, options.tagme), build)


def _identifiers_stage(paths: ArtefactPaths, options: BuildAllOptions) -> _Stage:
    from elquery.indexing.identifiers import build_identifiers, identifiers_plan
    from elquery.kb.identifiers import table_path

    if not paths.index.is_dir():
        if options.stages is not None and "index" not in options.stages:
            raise ElqueryError(f"the identifiers go into the entity index, and {paths.index} is not built")
        _index_stage(paths, options)  # refuses dumps the index cannot be built from: no index to write into

    def build() -> list[str]:
        return [build_identifiers(options.data, paths.index).line()]

    return _Stage("identifiers", "identifiers table", table_path(paths.index), identifiers_plan(options.data), build)


_MAKERS = {"index": _index_stage, "identifiers": _identifiers_stage, "surface-forms": _surface_forms_stage,
           "tagme": _tagme_stage}


def _stages(paths: ArtefactPaths, options: BuildAllOptions, log: Log) -> list[_Stage]:
    """The chosen stages, their plans made (input files found) before any is built; by default
    those the inputs allow, the others named with the reason in one line."""
    from elquery.indexing.ntriples import dump_files
    from elquery.indexing.surface_forms.facc import facc_files
    from elquery.indexing.surface_forms.facc_annotations import annotation_files

    dump_files(options.data)  # every path given must exist and hold its kind of files
    if options.facc:
        facc_files(list(options.facc))
    if options.facc_annotations:
        annotation_files(options.facc_annotations)
    stages, skipped = [], []
    for name in STAGES:
        if options.stages is not None and name not in options.stages:
            continue
        try:
            stages.append(_MAKERS[name](paths, options))
        except ElqueryError as exc:
            if options.stages is not None:
                raise ElqueryError(f"--stages {name}: {exc}") from None
            skipped.append(f"{name}: {exc}")
    if not stages:
        raise ElqueryError(f"nothing to build from {', '.join(map(str, options.data))}: {'; '.join(skipped)}")
    for stage in stages:
        if (stage.path.exists() or stage.path.is_symlink()) and not KINDS[stage.kind](stage.path):
            raise ElqueryError(f"{stage.path}: exists and is not an elquery {stage.kind}; move it away")
    if skipped:
        log(f"skipped {'; '.join(skipped)}")
    return stages


def _why_build(stage: _Stage) -> str | None:
    """Why ``stage`` must be built; None when its artefact is up to date."""
    if not (stage.path.exists() or stage.path.is_symlink()):
        return "not built yet"
    return stage.plan.difference(read_provenance(stage.path))


def build_all(out: Path | str, options: BuildAllOptions, log: Log = _stderr) -> list[StageResult]:
    """Build (or bring up to date) the chosen artefacts under ``out``, a folder created if missing
    and removed again if the build fails before any stage is done."""
    paths = ArtefactPaths.of(out)
    if paths.root.exists() and not paths.root.is_dir():
        raise ElqueryError(f"{paths.root}: not a folder")
    stages = _stages(paths, options, log)
    for _, _, path in paths.items():
        for line in remove_stale_work(path):
            log(line)
    take_held_signal()
    results = []
    with created_folder(paths.root):
        for stage in stages:
            started = time.monotonic()
            reason = _why_build(stage)
            if reason is None:
                record = read_provenance(stage.path)
                assert record is not None
                result = StageResult(stage.name, stage.path, False, f"id {record.id}, built {record.finished}",
                                     time.monotonic() - started)
            else:
                log(f"{stage.name}: building ({reason})")
                for line in stage.build():
                    log(f"{stage.name}: {line}")
                result = StageResult(stage.name, stage.path, True, reason, time.monotonic() - started)
            log(result.line())
            results.append(result)
            if take_held_signal():  # Ctrl-C while the stage published its artefact: it stands, the build stops
                raise KeyboardInterrupt
    return results
