"""``elquery build``: every artefact from the downloaded data, stage by stage (docs/commands/build.md).

Stages, in order: the entity index (``elquery index dbpedia``), the surface-form store from KB
names, anchor texts and FACC counts (``elquery index surface-forms --anchors``), the TAGME
artefact (``elquery index tagme``), into the layout of :mod:`elquery.indexing.artefacts`.

A stage is skipped when its artefact exists and the provenance record in it
(:mod:`elquery.indexing.provenance`) has the identity the stage would build now: the same elquery
version, options and input files (by name, size and SHA-256). Otherwise it is rebuilt, by the
builder its own command runs, which works beside its output and publishes it whole: an
interrupted build leaves the stages it finished and nothing of the one it was in, so running it
again resumes where it stopped.
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
from elquery.indexing.build_outputs import KINDS
from elquery.indexing.provenance import BuildPlan, read_provenance
from elquery.indexing.tagme.build import TagmeBuildParams

Log = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class BuildAllOptions:
    """The options of ``elquery build``; ``workers`` and ``progress`` do not change an artefact."""

    data: tuple[Path, ...]
    facc: tuple[Path, ...] = ()
    facc_annotations: tuple[Path, ...] = ()
    min_posterior: float = 0.0
    min_count: int = 1
    top_predicates: int = 1000
    tagme: TagmeBuildParams = TagmeBuildParams()
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    progress: bool | None = None


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


def _stages(paths: ArtefactPaths, options: BuildAllOptions) -> list[_Stage]:
    """The three stages, their plans made (input files found) before any is built."""
    from elquery.indexing.build_index import build_dbpedia_index, index_plan
    from elquery.indexing.surface_forms.build import BuildOptions, build_store, store_plan
    from elquery.indexing.tagme.build import build_tagme, tagme_plan

    store_options = BuildOptions(dumps=options.data, facc=options.facc, facc_annotations=options.facc_annotations,
                                 min_posterior=options.min_posterior, anchors=True, min_count=options.min_count,
                                 workers=options.workers, progress=options.progress)

    def index() -> list[str]:
        summary = build_dbpedia_index(options.data, paths.index, top_predicates_n=options.top_predicates,
                                      threads=options.workers, overwrite=True)
        return [summary.line()]

    def surface_forms() -> list[str]:
        return build_store(paths.surface_forms, store_options, overwrite=True).summary_lines()[-1:]

    def tagme() -> list[str]:
        summary = build_tagme(options.data, paths.tagme, options.tagme, overwrite=True)
        return [summary.line(), *summary.warnings()]

    return [
        _Stage("index", "entity index", paths.index, index_plan(options.data, options.top_predicates), index),
        _Stage("surface-forms", "surface-form store", paths.surface_forms, store_plan(store_options), surface_forms),
        _Stage("tagme", "TAGME artefact", paths.tagme, tagme_plan(options.data, options.tagme), tagme),
    ]


def _why_build(stage: _Stage) -> str | None:
    """Why ``stage`` must be built; None when its artefact is up to date."""
    if not (stage.path.exists() or stage.path.is_symlink()):
        return "not built yet"
    if not KINDS[stage.kind](stage.path):
        raise ElqueryError(f"{stage.path}: exists and is not an elquery {stage.kind}; move it away")
    return stage.plan.difference(read_provenance(stage.path))


def build_all(out: Path | str, options: BuildAllOptions, log: Log = _stderr) -> list[StageResult]:
    """Build (or bring up to date) every artefact under ``out`` (created if missing)."""
    if not options.data:
        raise ElqueryError("--data: no data folder given")
    paths = ArtefactPaths.of(out)
    if paths.root.exists() and not paths.root.is_dir():
        raise ElqueryError(f"{paths.root}: not a folder")
    paths.root.mkdir(parents=True, exist_ok=True)
    results = []
    for stage in _stages(paths, options):
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
    return results
