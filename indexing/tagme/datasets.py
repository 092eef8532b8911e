"""The DBpedia dump files the TAGME build reads, found by dataset name (methods.md §6)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError
from elquery.indexing.ntriples import dump_files

# dataset -> file-name prefixes that name it (DBpedia 2015-10 English names)
_PREFIXES = {
    "anchor_text": ("anchor_text_en.",),
    "page_links": ("page_links_en.",),
    "long_abstracts": ("long_abstracts_en.",),
    "labels": ("labels_en.",),
    "redirects": ("transitive_redirects_en.",),
    "page_ids": ("page_ids_en.",),
}
REQUIRED = ("anchor_text", "page_links", "long_abstracts")


@dataclass(frozen=True)
class TagmeDumps:
    """One file per dataset; ``labels``, ``redirects`` and ``page_ids`` are optional (no titles /
    redirects in the dictionary, no Wikipedia page ids in TAGME's answers without them)."""

    anchor_text: Path
    page_links: Path
    long_abstracts: Path
    labels: Path | None
    redirects: Path | None
    page_ids: Path | None

    def files(self) -> dict[str, str]:
        return {name: str(path) for name, path in vars(self).items() if path is not None}


def find_dumps(paths: Iterable[Path | str]) -> TagmeDumps:
    """Pick the dataset files out of dump files and directories; a one-line error when a required
    dataset is missing or a dataset has more than one file."""
    found: dict[str, list[Path]] = {name: [] for name in _PREFIXES}
    for path in dump_files(paths):
        for name, prefixes in _PREFIXES.items():
            if path.name.startswith(prefixes):
                found[name].append(path)
    for name, files in found.items():
        if len(files) > 1:
            raise ElqueryError(f"{name}: more than one dump file ({', '.join(map(str, files))}); pass one")
    missing = [name for name in REQUIRED if not found[name]]
    if missing:
        names = ", ".join(f"{name}_en.ttl" for name in missing)
        raise ElqueryError(f"no {names} (plain, .bz2 or .gz) among the dumps; TAGME needs {', '.join(REQUIRED)}")
    optional = {name: files[0] if files else None for name, files in found.items()}
    return TagmeDumps(found["anchor_text"][0], found["page_links"][0], found["long_abstracts"][0],
                      optional["labels"], optional["redirects"], optional["page_ids"])
