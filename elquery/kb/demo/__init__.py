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
The artefacts built from them (index, surface forms, TAGME) are those of
:mod:`elquery.indexing.demo`, made on first use into :func:`cache_dir`.
"""

from __future__ import annotations

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
