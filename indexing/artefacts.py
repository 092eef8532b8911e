"""The artefacts folder written by ``elquery build`` and read by ``--artefacts DIR``:
``DIR/index`` (entity index), ``DIR/surface-forms.db`` (surface-form store) and ``DIR/tagme``
(TAGME artefact). See docs/commands/build.md.

The folder's layout and the artefact checks (:class:`ArtefactPaths`, :data:`KIND_OF`,
:func:`check_artefact`, :func:`is_artefacts_dir`) live in :mod:`elquery.kb.artefacts` and are
imported from there; this module holds the ``--artefacts`` argument the commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

from elquery.base import ElqueryError
from elquery.kb.artefacts import (BUILT_BY, INDEX, KIND_OF, KINDS, SURFACE_FORMS, TAGME, ArtefactPaths, check_artefact,
                                  is_artefacts_dir)

__all__ = ["BUILT_BY", "INDEX", "KIND_OF", "KINDS", "SURFACE_FORMS", "TAGME", "ArtefactPaths", "check_artefact",
           "is_artefacts_dir", "add_artefacts_argument", "REQUIRED", "IF_BUILT", "artefact_paths",
           "resolve_artefact_args"]


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
