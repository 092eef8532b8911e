"""The demo knowledge base's artefacts (the files are :mod:`elquery.kb.demo`): the entity index,
the surface-form store and the TAGME artefact, each built on first use, with the code a user runs
on real dumps, into a folder of :func:`~elquery.kb.demo.cache_dir` named by a digest of the demo
files and of the code that builds and reads the artefacts.

The names of :mod:`elquery.kb.demo` (``DEMO_DIR``, ``dumps``, ``facc_files``, ``tagme_dumps``,
``cache_dir``) are kept here for compatibility (one release).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from elquery.kb.demo import (  # noqa: F401  (DUMP_NAMES, FACC_NAMES: kept for compatibility)
    DEMO_DIR,
    DUMP_NAMES,
    FACC_NAMES,
    TAGME_NAMES,
    cache_dir,
    dumps,
    facc_files,
    tagme_dumps,
)

_CODE = (Path(__file__).resolve().parents[1], DEMO_DIR.parent)
"""The folders of the code that builds the artefacts (``elquery.indexing``) and reads them
(``elquery.kb``)."""


def _fingerprint() -> str:
    """A digest of the demo files and of the code that builds and reads the artefacts, so edited
    demo data or a changed index / store format is rebuilt, never served stale."""
    builders = [path for code in _CODE for folder in ("", "surface_forms", "tagme")
                for path in sorted((code / folder).glob("*.py"))]
    digest = hashlib.sha256()
    for path in (*dumps(), *facc_files(), *(DEMO_DIR / name for name in TAGME_NAMES), *builders):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _root() -> Path:
    """The folder of the built demo artefacts (one per :func:`_fingerprint`)."""
    return cache_dir() / f"demo-{_fingerprint()}"


def demo_artefacts() -> tuple[Path, Path]:
    """(index, surface forms) of the demo KB, built on first use into :func:`cache_dir`.

    Both are built with the same code a user runs on real dumps (``elquery index dbpedia`` and
    ``elquery index surface-forms --facc``), each into a temporary path renamed on success, so a
    crashed first run leaves nothing half-built behind."""
    root = _root()
    return _index(root), _surface_forms(root)


def demo_tagme() -> Path:
    """The TAGME artefact of the demo KB, built on first use beside :func:`demo_artefacts` with the
    code of ``elquery index tagme`` over :func:`tagme_dumps` (into a temporary path renamed on
    success)."""
    return _tagme(_root())


def demo_knowledge_base() -> tuple[Path, Path, Path]:
    """(index, surface forms, TAGME artefact) of the demo KB, all from one folder of
    :func:`cache_dir`, each built on first use."""
    root = _root()
    return _index(root), _surface_forms(root), _tagme(root)


def _index(root: Path) -> Path:
    from elquery.indexing.build_index import build_dbpedia_index

    index = root / "index"
    if not index.exists():
        build_dbpedia_index(dumps(), index, workers=1)
    return index


def _surface_forms(root: Path) -> Path:
    from elquery.indexing.surface_forms import BuildOptions, build_store

    surface_forms = root / "surface_forms.db"
    if not surface_forms.exists():
        root.mkdir(parents=True, exist_ok=True)
        build_store(surface_forms, BuildOptions(tuple(dumps()), tuple(facc_files()), workers=1, progress=False))
    return surface_forms


def _tagme(root: Path) -> Path:
    from elquery.indexing.tagme.build import build_tagme

    tagme = root / "tagme"
    if not tagme.exists():
        root.mkdir(parents=True, exist_ok=True)
        build_tagme(tagme_dumps(), tagme)
    return tagme
