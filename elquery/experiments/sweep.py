"""Parameter sweeps with a content-hashed run cache (methods.md §4-7).

Candidate ranking is the expensive step and depends on the method and the commonness threshold
c only, so the scored (mention, entity, score) triples are computed once per query for each
(method, c) and cached on disk; every score threshold s (GIF's s of §5, TAGME's rho_NA of §6)
and TopRanked are then cheap passes over the cached triples. A cache entry and a run file are
named by a hash of everything they depend on: the identity (path, size, modification time) of the
artefacts the method reads, the queries, the method and its parameters, and the code that
computes them (:func:`code_version`: the package version and the source of the normalization,
artefact-reading, retrieval and linking modules); re-running an experiment reuses the entries
whose inputs did not change, and a fix in the code never reuses results of the code before it.

Entity retrieval ranks the whole index once per setting (a model and its parameters, built by
the retrieval registry :func:`elquery.retrieval.models.model_from_name`); its run file is named by
a hash of the index's identity, the queries, the model (all its parameters) and the depth.

Layout under the output folder: ``cache/<method>-c<c>.<hash>.jsonl`` (scored triples and
semantic-mapping ranking per query, in the ``jsonl`` run format of ``elquery link``),
``cache/links-<method>-c<c>-s<s>.<hash>.jsonl`` (the links an ELR model's ``links = { method = ... }``
computes: the GIF interpretations of those triples, in the same format) and
``runs/<label>/<setting>.<hash>.{elq,trec}`` (one run file per swept setting).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import product
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from elquery.evaluation.readers import read_jsonl
from elquery.base import ElqueryError
from elquery.experiments.config import GIF, LinksSpec, MethodSpec
from elquery.linking.gif import gif, top_ranked
from elquery.files import atomic_output
from elquery.formats.trec_run import write_run
from elquery.linking.methods import METHODS
from elquery.linking.output import write_results
from elquery.linking.types import Candidate, Interpretation, LinkResult, Mention, MappedEntity, ScoredMention
from elquery.retrieval.models import Model, model_from_name
from elquery.retrieval.searcher import RankedEntity

CACHE_VERSION = 1
Progress = Callable[[int], Any]


@dataclass(frozen=True)
class Setting:
    """One point of a parameter grid: commonness threshold ``c`` and score threshold ``s``
    (None where the method has no such parameter), or a retrieval model's ``params``
    (``--param`` name and value)."""

    c: float | None = None
    s: float | None = None
    params: tuple[tuple[str, str], ...] = ()

    def _parts(self) -> list[tuple[str, str]]:
        thresholds = [(name, f"{value:g}") for name, value in (("c", self.c), ("s", self.s))
                      if value is not None]
        return thresholds + list(self.params)

    def __str__(self) -> str:
        return " ".join(f"{name}={value}" for name, value in self._parts()) or "default"

    @property
    def parameters(self) -> str:
        """The retrieval parameters as ``name=value`` separated by spaces (empty without)."""
        return " ".join(f"{name}={value}" for name, value in self.params)

    @property
    def slug(self) -> str:
        """The setting in a file name: ``c0.1_s0.3``, ``k1-0.9_b-0.4``."""
        parts = [f"{name}{value}" if name in ("c", "s") else f"{name}-{value}" for name, value in self._parts()]
        return "_".join(parts).replace("/", "-").replace(" ", "-") or "default"


def grid(spec: MethodSpec) -> list[Setting]:
    """Every setting of a method, c-major (retrieval parameters: the first one major), in the
    order the config lists the values."""
    commonness = spec.commonness_thresholds or (None,)
    params = [[(name, value) for value in values] for name, values in spec.params]
    return [Setting(c, s, tuple(point)) for c in commonness for s in spec.score_thresholds
            for point in product(*params)]


Fixed = tuple[tuple[str, Any], ...]
"""A method's parameters that are not swept (:attr:`MethodSpec.fixed`)."""


class Backend(Protocol):
    """What a sweep needs from linking: scored candidates per (method, c) and the candidates of
    mention detection, plus an identity of the artefacts a method reads (for the cache keys)."""

    def identity(self, method: str, fixed: Fixed = ()) -> Any:
        """A JSON-serializable identity of everything ``method`` reads (with its ``fixed``
        parameters: the files they name); ``"candidates"``: mention detection."""

    def link(self, method: str, commonness_threshold: float | None, fixed: Fixed, queries: Mapping[str, str],
             progress: Progress) -> Iterable[LinkResult]:
        """The scored triples and ranking of every query (interpretations are not needed);
        ``progress(n)`` is called as queries finish."""

    def candidates(self, queries: Mapping[str, str], progress: Progress
                   ) -> Iterable[tuple[str, list[Candidate]]]:
        """Every candidate of mention detection with c = 0 (methods.md §3), per query."""


class Ranker(Protocol):
    """What entity retrieval needs: whole-index rankings of a retrieval model, plus an identity
    of the index (for the cache keys)."""

    def identity(self) -> Any:
        """A JSON-serializable identity of the index."""

    def rank(self, model: Model, queries: Mapping[str, str], k: int, progress: Progress, links: Path | None = None
             ) -> Iterable[tuple[str, Sequence[RankedEntity]]]:
        """The top ``k`` of every query, in query order; ``progress(n)`` as queries finish; an ELR
        model's linked entities from the links file ``links``."""


def file_identity(path: Path) -> list[Any]:
    """Path, size and modification time of a file, or of every file under a folder."""
    if not path.exists():
        raise ElqueryError(f"{path}: not found")
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return [[str(p), p.stat().st_size, p.stat().st_mtime_ns] for p in files]


def code_sources() -> list[Path]:
    """The source files whose code decides scored triples and runs: normalization, the readers of
    the artefacts, retrieval (with its Java helper) and linking."""
    import elquery.indexing
    import elquery.linking
    import elquery.retrieval

    indexing = Path(elquery.indexing.__file__).parent
    files = [indexing / "normalize.py", indexing / "entity_index.py", indexing / "surface_forms" / "store.py",
             *sorted((indexing / "tagme").glob("*.py"))]
    for root in (Path(elquery.retrieval.__file__).parent, Path(elquery.linking.__file__).parent):
        files += sorted(root.rglob("*.py")) + sorted(root.rglob("*.jar"))
    return files


@cache
def code_version() -> str:
    """The elquery version and a hash of :func:`code_sources`, part of every cache key."""
    hasher = hashlib.sha256()
    for path in code_sources():
        hasher.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"{metadata.version('elquery')}+{hasher.hexdigest()[:16]}"


def digest(*parts: Any) -> str:
    """A short hex hash of JSON-serializable parts and the :func:`code_version`."""
    text = json.dumps([CACHE_VERSION, code_version(), *parts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def find_interpretations(spec: MethodSpec, setting: Setting, result: LinkResult
                         ) -> list[Interpretation]:
    """Interpretation finding on cached triples: GIF with threshold s (§5), TopRanked (§5), or
    the method's own with threshold s (TAGME's single interpretation of the annotations with
    rho >= s, §6)."""
    method = METHODS.get(spec.method)
    if spec.finder is None:
        assert setting.s is not None and method.interpretations is not None
        return method.interpretations(result.scored, setting.s)
    if spec.finder == GIF:
        assert setting.s is not None
        return gif(result.scored, setting.s)
    return top_ranked(method.rank(result.scored), result.scored)


def _mention(data: Mapping[str, Any]) -> Mention:
    return Mention(data["text"], data["start"], data["end"])


def _link_result(record: Mapping[str, Any]) -> LinkResult:
    scored = tuple(ScoredMention(_mention(t["mention"]), t["entity"], t["score"], t["commonness"])
                   for t in record["mentions"])
    ranking = tuple(MappedEntity(r["entity"], r["score"], _mention(r["mention"]))
                    for r in record["ranking"])
    return LinkResult(record["qid"], record["query"], tuple(record["tokens"]), scored, (), ranking,
                      tuple((start, end) for start, end in record["offsets"]))


class RunStore:
    """Scored triples and run files of one experiment under ``out_dir``, computed on demand and
    reused when their hash-named files exist."""

    def __init__(self, out_dir: Path, backend: Backend, queries: Mapping[str, str],
                 progress: bool = True, ranker: Ranker | None = None) -> None:
        self.out_dir = out_dir
        self.backend = backend
        self.ranker = ranker
        self.queries = dict(sorted(queries.items()))
        self.progress = progress
        self._scored: dict[str, dict[str, LinkResult]] = {}

    def _bar(self, description: str) -> tqdm:
        """A progress bar over the queries (shown on a terminal only)."""
        return tqdm(total=len(self.queries), desc=description, unit="query",
                    disable=None if self.progress else True)

    def scored_key(self, method: str, c: float | None, fixed: Fixed = ()) -> str:
        return digest("scored", self.backend.identity(method, fixed), self.queries, method, c, fixed)

    def scored(self, method: str, c: float | None, fixed: Fixed = ()) -> dict[str, LinkResult]:
        """Per query, the scored triples and ranking of ``method`` with threshold ``c`` and its
        ``fixed`` parameters."""
        key = self.scored_key(method, c, fixed)
        if key not in self._scored:
            name = method if c is None else f"{method}-c{c:g}"
            path = self.out_dir / "cache" / f"{name}.{key}.jsonl"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                with self._bar(f"linking {name}") as bar:
                    write_results(self.backend.link(method, c, fixed, self.queries, bar.update), path,
                                  "jsonl", name)
            self._scored[key] = {r.qid: r for r in map(_link_result, read_jsonl(path))} \
                if path.stat().st_size else {}
        return self._scored[key]

    def run(self, task: str, spec: MethodSpec, setting: Setting) -> Path:
        """The run file of one setting: interpretations (``elq``) for task ``"if"``, the
        semantic-mapping ranking (``trec``) for ``"sm"``."""
        key = digest("run", self.scored_key(spec.method, setting.c, spec.fixed), task, spec.method,
                     spec.finder, setting.s)
        fmt = "elq" if task == "if" else "trec"
        path = self.out_dir / "runs" / spec.label / f"{setting.slug}.{key}.{fmt}"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            results: Iterable[LinkResult] = self.scored(spec.method, setting.c, spec.fixed).values()
            if task == "if":
                results = (replace(r, interpretations=tuple(find_interpretations(spec, setting, r)))
                           for r in results)
            write_results(results, path, fmt, tag(spec.label))
        return path

    def ranking(self, spec: MethodSpec, setting: Setting, depth: int) -> Path:
        """The TREC run of a retrieval model (``spec.method``, a name of the retrieval registry)
        with the parameters of ``setting``: the top ``depth`` entities of every query."""
        assert self.ranker is not None
        model = model_from_name(spec.method, dict(setting.params))
        links: Path | None = None
        links_identity: str | list[Any] | None = None  # the hash of computed links, or a given file's identity
        if isinstance(spec.links, LinksSpec):
            links, links_identity = self.links(spec.links)
        elif spec.links is not None:
            links, links_identity = spec.links, file_identity(spec.links)
        key = digest("ranking", self.ranker.identity(), self.queries, repr(model), depth, links_identity)
        path = self.out_dir / "runs" / spec.label / f"{setting.slug}.{key}.trec"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._bar(f"ranking {spec.label} {setting}") as bar:
                write_run(path, self.ranker.rank(model, self.queries, depth, bar.update, links), tag(spec.label))
        return path

    def links(self, spec: LinksSpec) -> tuple[Path, str]:
        """The links file ``spec`` computes (its GIF interpretations over the cached triples of
        its method and c, as ``elquery link --format jsonl`` writes them) and its hash."""
        c, s = spec.commonness_threshold, spec.gif_threshold
        key = digest("links", self.scored_key(spec.method, c, spec.fixed), s)
        path = self.out_dir / "cache" / f"links-{spec.method}-c{c:g}-s{s:g}.{key}.jsonl"
        if not path.exists():
            results = (replace(r, interpretations=tuple(gif(r.scored, s)))
                       for r in self.scored(spec.method, c, spec.fixed).values())
            write_results(results, path, "jsonl", f"links-{spec.method}")
        return path, key

    def candidates(self) -> dict[str, list[Candidate]]:
        """Per query, the candidates of mention detection with c = 0 (cached like triples)."""
        key = digest("candidates", self.backend.identity("candidates"), self.queries)
        path = self.out_dir / "cache" / f"candidates.{key}.jsonl"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._bar("mention detection") as bar:
                _write_candidates(self.backend.candidates(self.queries, bar.update), path)
        return {r["qid"]: [Candidate(_mention(c["mention"]), c["entity"], c["commonness"], c["in_kb"])
                           for c in r["candidates"]]
                for r in (read_jsonl(path) if path.stat().st_size else [])}


def tag(label: str) -> str:
    """A method label as a TREC run tag (no whitespace)."""
    return "_".join(label.split())


def _write_candidates(per_query: Iterable[tuple[str, list[Candidate]]], path: Path) -> None:
    with atomic_output(path) as stream:
        for qid, candidates in per_query:
            record = {"qid": qid, "candidates": [
                {"mention": {"text": c.mention.text, "start": c.mention.start, "end": c.mention.end},
                 "entity": c.entity, "commonness": c.commonness, "in_kb": c.in_kb}
                for c in candidates]}
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
