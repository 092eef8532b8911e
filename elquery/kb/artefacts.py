"""The artefacts as a query reads them: their kinds, how each kind is recognised on disk, and the
folder ``elquery build`` writes (``DIR/index``, entity index; ``DIR/surface-forms.db``,
surface-form store; ``DIR/tagme``, TAGME artefact). See docs/commands/build.md.

:func:`check_artefact` refuses, before any work, a path given for an artefact that is not one;
the build pipelines (``elquery.indexing.build_outputs``) use the same detectors (:data:`KINDS`)
to decide what ``--overwrite`` may replace."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError


def _is_index(path: Path) -> bool:
    from elquery.kb.index_format import METADATA_FILE

    return path.is_dir() and (path / METADATA_FILE).is_file()


def _is_surface_forms(path: Path) -> bool:
    """A store of any format (one of an earlier format is replaced by a build, and refused with
    "rebuild it" by its reader)."""
    from elquery.kb.surface_forms.layout import FORMAT_PREFIX

    return _sqlite_format(path).startswith(FORMAT_PREFIX)


def _sqlite_of_format(path: Path, format_name: str) -> bool:
    """True for an SQLite file whose ``meta`` table names ``format_name`` as its format."""
    return _sqlite_format(path) == format_name


def _sqlite_format(path: Path) -> str:
    """The format an SQLite file's ``meta`` table names ("" when it names none or is not SQLite)."""
    if not path.is_file():
        return ""
    try:
        with sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.DatabaseError:
        return ""
    return row[0] if row is not None and isinstance(row[0], str) else ""


def _is_tagme(path: Path) -> bool:
    from elquery.kb.tagme.layout import FORMAT, META_FILE

    try:
        return json.loads((path / META_FILE).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _is_identifiers(path: Path) -> bool:
    from elquery.kb.identifiers import FORMAT

    return _sqlite_of_format(path, FORMAT)


KINDS: dict[str, Callable[[Path], bool]] = {
    "entity index": _is_index, "surface-form store": _is_surface_forms, "TAGME artefact": _is_tagme,
    "identifiers table": _is_identifiers,
}
"""Each kind of artefact and whether a path is one of it."""

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
    elquery artefact of ``kind`` (:data:`KINDS`): one line naming the path and the command that
    builds one."""
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
