"""The spill phase as elquery wrote it in Python before it moved to Java (DumpSpiller): the
reference the Java spill must match byte for byte. Reads with ``read_triples`` (the Python
N-Triples reader, still the reader of the other builders)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from elquery.indexing.entity_documents import OWL_SAME_AS, RDFS_LABEL, REDIRECTS, WIKI_LINK, title_text
from elquery.indexing.ntriples import ObjectKind, ParseReport, read_triples
from elquery.kb.entities import DBPEDIA_RESOURCE

_LITERAL, _IRI, _REDIRECT, _LINK = "L", "I", "R", "W"
_SPILL_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_SPILL_ESCAPED = re.compile(r"[\\\t\n\r]")


@dataclass
class PythonSpill:
    """What the Python spill produced: the labels differing from the URI title, counts."""

    labels: dict[str, str] = field(default_factory=dict)
    report: ParseReport = field(default_factory=ParseReport)
    spilled: int = 0


def partition_of(subject: str, partitions: int) -> int:
    """Stable (process-independent) partition of a subject IRI."""
    return zlib.crc32(subject.encode("utf-8")) % partitions


def spill_escape(text: str) -> str:
    return _SPILL_ESCAPED.sub(lambda m: _SPILL_ESCAPES[m.group()], text)


def python_spill(files: Iterable[Path], out_dir: Path, partitions: int, links_only: Iterable[Path] = ()) -> PythonSpill:
    """Read dump files once, appending each statement about a DBpedia resource to its subject's
    partition file ``out_dir/part-NNNN.tsv`` (lines ``subject TAB kind TAB predicate TAB value``).
    Redirects are filed under their *target*, carrying the redirect page's IRI. Of a file in
    ``links_only``, only the wiki page links to DBpedia resources (kind W, no predicate, the
    target's title)."""
    links = set(links_only)
    out_dir.mkdir(parents=True, exist_ok=True)
    handles = [open(out_dir / f"part-{p:04d}.tsv", "w", encoding="utf-8", newline="\n") for p in range(partitions)]
    result = PythonSpill()
    try:
        for path in files:
            for triple in read_triples(path, result.report):
                subject, predicate, value = triple.subject, triple.predicate, triple.object
                if not subject.startswith(DBPEDIA_RESOURCE) or predicate == OWL_SAME_AS:
                    continue
                if path in links:
                    if (triple.kind is not ObjectKind.IRI or predicate != WIKI_LINK
                            or not value.startswith(DBPEDIA_RESOURCE) or value == DBPEDIA_RESOURCE):
                        continue
                    record = (subject, _LINK, "", value[len(DBPEDIA_RESOURCE):])
                elif triple.kind is ObjectKind.LITERAL:
                    if predicate == RDFS_LABEL and value != title_text(subject):
                        result.labels[subject] = value
                    record = (subject, _LITERAL, predicate, spill_escape(value))
                elif predicate == REDIRECTS:
                    if triple.kind is not ObjectKind.IRI or not value.startswith(DBPEDIA_RESOURCE):
                        continue  # a redirect to anything but a DBpedia resource names no entity
                    record = (value, _REDIRECT, predicate, subject)
                elif triple.kind is ObjectKind.IRI:
                    record = (subject, _IRI, predicate, value)
                else:
                    continue  # blank-node objects carry no text
                handles[partition_of(record[0], partitions)].write("\t".join(record) + "\n")
                result.spilled += 1
    finally:
        for handle in handles:
            handle.close()
    return result
