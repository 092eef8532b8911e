"""The artefacts folder written by ``elquery build`` and read by ``--artefacts DIR``:
``DIR/index`` (entity index), ``DIR/surface-forms.db`` (surface-form store) and ``DIR/tagme``
(TAGME artefact). See docs/commands/build.md."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError
from elquery.indexing.build_outputs import KINDS

INDEX, SURFACE_FORMS, TAGME = "index", "surface-forms.db", "tagme"
KIND_OF = {"index": "entity index", "surface_forms": "surface-form store", "tagme": "TAGME artefact"}
"""Each artefact (an attribute of :class:`ArtefactPaths`, an option's ``dest``) and its kind, in build order."""


@dataclass(frozen=True)
class ArtefactPaths:
    """Where the three artefacts of a folder are (whether or not they exist yet)."""

    root: Path
    index: Path
    surface_forms: Path
    tagme: Path

    @classmethod
    def of(cls, root: Path | str) -> ArtefactPaths:
        root = Path(root)
        return cls(root, root / INDEX, root / SURFACE_FORMS, root / TAGME)

    def items(self) -> list[tuple[str, str, Path]]:
        """(attribute, kind, path) of each artefact, in build order."""
        return [(name, kind, getattr(self, name)) for name, kind in KIND_OF.items()]


BUILT_BY = {"entity index": "elquery index dbpedia", "surface-form store": "elquery index surface-forms",
            "TAGME artefact": "elquery index tagme"}


def check_artefact(path: Path | str, kind: str) -> None:
    """Refuse, before any work starts (before a worker pool above all), a path that is not an
    elquery artefact of ``kind`` (:data:`~elquery.indexing.build_outputs.KINDS`): one line naming
    the path and the command that builds one."""
    path = Path(path)
    if not KINDS[kind](path):
        if is_artefacts_dir(path):  # the folder `elquery build --out` wrote, given for one of its artefacts
            raise ElqueryError(f"{path}: not an elquery {kind} but an artefacts folder of `elquery build`: "
                               f"give it as --artefacts {path}")
        problem = f"not an elquery {kind}" if path.exists() else f"no such {kind}"
        raise ElqueryError(f"{path}: {problem} (build one with `{BUILT_BY[kind]}` or `elquery build`)")


def is_artefacts_dir(path: Path) -> bool:
    """Whether ``path`` is a folder holding at least one of the artefacts (under its name)."""
    return path.is_dir() and any(KINDS[kind](p) for _, kind, p in ArtefactPaths.of(path).items())


def add_artefacts_argument(parser: argparse.ArgumentParser, replaces: str) -> None:
    """``--artefacts DIR`` (a folder written by ``elquery build``), in place of ``replaces``."""
    parser.add_argument("--artefacts", metavar="DIR",
                        help=f"artefacts folder written by `elquery build` (index, surface-forms.db, tagme), "
                        f"in place of {replaces}")


REQUIRED, IF_BUILT = "required", "if built"
_FLAGS = {"index": "--index", "surface_forms": "--surface-forms", "tagme": "--tagme"}


def artefact_paths(root: Path | str, **wanted: str) -> dict[str, Path]:
    """The paths of the artefacts named in ``wanted`` (``index``, ``surface_forms``, ``tagme``) in
    the folder ``root``: each :data:`REQUIRED` (a one-line error when the folder lacks it) or
    :data:`IF_BUILT` (left out when absent)."""
    paths = ArtefactPaths.of(root)
    if not paths.root.is_dir():
        raise ElqueryError(f"{paths.root}: no such artefacts folder (build one with `elquery build`)")
    found = {}
    for name, kind, path in paths.items():
        if name in wanted and KINDS[kind](path):
            found[name] = path
        elif wanted.get(name) == REQUIRED:
            raise ElqueryError(f"{paths.root}: no {kind} ({path.name}) in this artefacts folder; build it with `elquery build`")
    return found


def resolve_artefact_args(args: argparse.Namespace, **wanted: str) -> None:
    """Set the path attributes of ``args`` named in ``wanted`` from ``args.artefacts``
    (:func:`artefact_paths`); giving ``--artefacts`` and a separate path too is an error."""
    if args.artefacts is None:
        return
    given = [flag for name, flag in _FLAGS.items() if getattr(args, name, None) is not None]
    if given:
        raise ElqueryError(f"--artefacts replaces {', '.join(given)}: give one or the other")
    for name, path in artefact_paths(args.artefacts, **wanted).items():
        setattr(args, name, str(path))
