"""Bundled demo knowledge base: a tiny, hand-written, DBpedia-shaped KB for offline use.

About 50 entities grouped around ambiguous query words ("new york", "manhattan",
"jacksonville", "total recall", "the music man", "obama", ...), stored as N-Triples files named and
shaped like the DBpedia 2015-10 datasets (labels_en, short_abstracts_en, transitive_redirects_en,
persondata_en, mappingbased_objects_en, mappingbased_literals_en, instance_types_en,
article_categories_en, freebase_links_en), plus a FACC-style commonness table
(``surface form<TAB>mid<TAB>count``) whose mids map to DBpedia through freebase_links_en.nt.
All text is original (not copied from Wikipedia or DBpedia) and the Freebase mids are made up.
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


def dumps() -> list[Path]:
    """The demo KB's N-Triples files, in sorted order (as ``elquery.indexing.ntriples.dump_files`` lists
    a directory)."""
    return [DEMO_DIR / name for name in DUMP_NAMES]


def facc_files() -> list[Path]:
    """The demo FACC count files (``surface form<TAB>Freebase mid<TAB>count``, no header)."""
    return [DEMO_DIR / name for name in FACC_NAMES]


def cache_dir() -> Path:
    """Where built demo artefacts live: ``$ELQUERY_CACHE`` or ``~/.cache/elquery``."""
    return Path(os.environ.get("ELQUERY_CACHE") or Path.home() / ".cache" / "elquery")


def _fingerprint() -> str:
    """A digest of the demo files and of the code that builds the artefacts, so edited demo data
    or a changed index / store format is rebuilt, never served stale."""
    builders = sorted(DEMO_DIR.parent.glob("*.py")) + sorted((DEMO_DIR.parent / "surface_forms").glob("*.py"))
    digest = hashlib.sha256()
    for path in (*dumps(), *facc_files(), *builders):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def demo_artefacts() -> tuple[Path, Path]:
    """(index, surface forms) of the demo KB, built on first use into :func:`cache_dir`.

    Both are built with the same code a user runs on real dumps (``elquery index dbpedia`` and
    ``elquery index surface-forms --facc``), each into a temporary path renamed on success, so a
    crashed first run leaves nothing half-built behind."""
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.surface_forms import BuildOptions, build_store

    root = cache_dir() / f"demo-{_fingerprint()}"
    index, surface_forms = root / "index", root / "surface_forms.db"
    if not index.exists():
        build_dbpedia_index(dumps(), index, threads=1)
    if not surface_forms.exists():
        build_store(surface_forms, BuildOptions(tuple(dumps()), tuple(facc_files()), workers=1, progress=False))
    return index, surface_forms
