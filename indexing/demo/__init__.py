"""Bundled demo knowledge base: a tiny, hand-written, DBpedia-shaped KB for offline use.

About 50 entities grouped around ambiguous query words ("new york", "manhattan",
"jacksonville", "total recall", "the music man", "obama", ...), stored as N-Triples files named and
shaped like the DBpedia 2015-10 datasets (labels_en, short_abstracts_en, transitive_redirects_en,
persondata_en, mappingbased_objects_en, mappingbased_literals_en, instance_types_en,
article_categories_en, freebase_links_en), plus a FACC-style commonness table
(``surface form<TAB>mid<TAB>count``) whose mids map to DBpedia through freebase_links_en.nt, and
the datasets TAGME reads (anchor_text_en, page_links_en, long_abstracts_en, page_ids_en).
All text is original (not copied from Wikipedia or DBpedia); the Freebase mids and the page ids
are made up.
See README.md in this folder for the files and the example queries the KB is designed for.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

DEMO_DIR = Path(__file__).parent

DUMP_NAMES = (
    "article_categories_en.nt",
    "freebase_links_en.nt",
    "instance_types_en.nt",
    "labels_en.nt",
    "mappingbased_literals_en.nt",
    "mappingbased_objects_en.nt",
    "persondata_en.nt",
    "short_abstracts_en.nt",
    "transitive_redirects_en.nt",
)
FACC_NAMES = ("facc_counts.tsv",)
TAGME_NAMES = (
    "anchor_text_en.nt",
    "long_abstracts_en.nt",
    "page_ids_en.nt",
    "page_links_en.nt",
)


def dumps() -> list[Path]:
    """The demo KB's N-Triples files, in sorted order (as ``elquery.indexing.ntriples.dump_files`` lists
    a directory)."""
    return [DEMO_DIR / name for name in DUMP_NAMES]


def facc_files() -> list[Path]:
    """The demo FACC count files (``surface form<TAB>Freebase mid<TAB>count``, no header)."""
    return [DEMO_DIR / name for name in FACC_NAMES]


def tagme_dumps() -> list[Path]:
    """The files the demo's TAGME artefact is built from: the datasets only TAGME reads (anchor
    texts, page links, long abstracts, page ids) with the KB's labels and redirects."""
    return [DEMO_DIR / name for name in (*TAGME_NAMES, "labels_en.nt", "transitive_redirects_en.nt")]


def cache_dir() -> Path:
    """Where built demo artefacts live: ``$ELQUERY_CACHE`` or ``~/.cache/elquery``."""
    return Path(os.environ.get("ELQUERY_CACHE") or Path.home() / ".cache" / "elquery")


def _fingerprint() -> str:
    """A digest of the demo files and of the code that builds the artefacts, so edited demo data
    or a changed index / store format is rebuilt, never served stale."""
    builders = [path for folder in ("", "surface_forms", "tagme")
                for path in sorted((DEMO_DIR.parent / folder).glob("*.py"))]
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
