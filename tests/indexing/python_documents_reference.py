"""The count and write phases' documents as elquery made them in Python before they moved to Java
(``org.elquery.index.PartitionDocuments``): the reference the Java documents must match text for
text. ``python_field_texts`` gives what the Python build handed to ``EntityWriter`` per document:
``(entity id, names text, content text, relations text)``. The LTR fields (``ltr``) were added
after the move: their reference is written here from their definition (entity_documents)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from elquery.indexing.entity_documents import (
    ABSTRACT,
    DCT_SUBJECT,
    FOAF_NAME,
    RDFS_COMMENT,
    RDFS_LABEL,
    WIKI_LINK,
    DocumentTexts,
    EntityDocument,
    title_text,
)
from elquery.kb.entities import DBPEDIA_RESOURCE, entity_id

_LITERAL, _IRI, _LINK = "L", "I", "W"
_SPILL_UNESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
_SPILL_UNESCAPED = re.compile(r"\\[\\tnr]")
_LINE_BREAKS = re.compile(r"[\t\r\n]")


def spill_unescape(text: str) -> str:
    return _SPILL_UNESCAPED.sub(lambda m: _SPILL_UNESCAPES[m.group()], text) if "\\" in text else text


def read_labels(files: Iterable[Path]) -> dict[str, str]:
    """The spill's labels files (``subject TAB escaped label`` lines), a later file's label winning."""
    labels: dict[str, str] = {}
    for path in files:
        with open(path, encoding="utf-8", newline="\n") as handle:
            for line in handle:
                subject, label = line.rstrip("\n").split("\t", 1)
                labels[subject] = spill_unescape(label)
    return labels


class _Statements:
    __slots__ = ("literals", "iris", "redirects", "links")

    def __init__(self) -> None:
        self.literals: list[tuple[str, str]] = []
        self.iris: list[tuple[str, str]] = []
        self.redirects: list[str] = []
        self.links: list[str] = []

    @property
    def indexable(self) -> bool:
        predicates = {p for p, _ in self.literals}
        return RDFS_LABEL in predicates and RDFS_COMMENT in predicates


def _grouped(partition_files: Iterable[Path]) -> dict[str, _Statements]:
    groups: dict[str, _Statements] = defaultdict(_Statements)
    for path in partition_files:
        with open(path, encoding="utf-8", newline="\n") as handle:
            for line in handle:
                subject, kind, predicate, value = line.rstrip("\n").split("\t", 3)
                statements = groups[subject]
                if kind == _LITERAL:
                    statements.literals.append((predicate, spill_unescape(value)))
                elif kind == _IRI:
                    statements.iris.append((predicate, value))
                elif kind == _LINK:
                    statements.links.append(value)
                else:
                    statements.redirects.append(value)
    return groups


def python_count_predicates(partition_files: Iterable[Path]) -> Counter[str]:
    literal_predicates: dict[str, set[str]] = defaultdict(set)
    iri_predicates: dict[str, set[str]] = defaultdict(set)
    for path in partition_files:
        with open(path, encoding="utf-8", newline="\n") as handle:
            for line in handle:
                subject, kind, predicate, _ = line.split("\t", 3)
                if kind == _LITERAL:
                    literal_predicates[subject].add(predicate)
                elif kind == _IRI:
                    iri_predicates[subject].add(predicate)
    counts: Counter[str] = Counter()
    for subject, predicates in literal_predicates.items():
        if RDFS_LABEL in predicates and RDFS_COMMENT in predicates:
            counts.update(predicates | iri_predicates.get(subject, set()))
    return counts


def _ltr_fields(statements: _Statements) -> dict[str, Any]:
    """The LTR fields and counts of one entity (entity_documents): distinct values in code point
    order; link targets from W lines and dbo:wikiPageWikiLink IRIs, as titles."""
    def distinct_literals(predicate: str) -> tuple[str, ...]:
        return tuple(sorted({v for p, v in statements.literals if p == predicate}))

    titles = set(statements.links) | {v[len(DBPEDIA_RESOURCE):] for p, v in statements.iris
                                      if p == WIKI_LINK and v.startswith(DBPEDIA_RESOURCE) and v != DBPEDIA_RESOURCE}
    return {
        "title": distinct_literals(RDFS_LABEL),
        "short_abstract": distinct_literals(RDFS_COMMENT),
        "long_abstract": distinct_literals(ABSTRACT),
        "wiki_links": tuple(title_text(DBPEDIA_RESOURCE + t) for t in sorted(titles)),
        "categories": tuple(title_text(v) for v in sorted({v for p, v in statements.iris if p == DCT_SUBJECT})),
        "redirects": len(set(statements.redirects)),
        "links": len(titles),
    }


def python_build_documents(
    partition_files: Iterable[Path], labels: dict[str, str], predicates: frozenset[str], *, relations: bool = False,
    ltr: bool = False,
) -> list[EntityDocument]:
    def resolve(iri: str) -> str:
        return labels.get(iri) or title_text(iri)

    documents = []
    for subject, statements in _grouped(partition_files).items():
        if not statements.indexable:
            continue
        literals, iris = sorted(statements.literals), sorted(statements.iris)
        names = [v for p, v in literals if p in (RDFS_LABEL, FOAF_NAME)]
        names += [resolve(r) for r in sorted(statements.redirects)]
        content = [v for p, v in literals if p in predicates]
        content += [resolve(v) for p, v in iris if p in predicates]
        eid = entity_id(subject)
        assert eid is not None
        related = sorted({(r, p) for p, v in iris if p in predicates and (r := entity_id(v)) is not None}) if relations else ()
        documents.append(EntityDocument(eid, tuple(names), tuple(content), tuple(related),
                                        **(_ltr_fields(statements) if ltr else {})))
    documents.sort(key=lambda d: d.entity)
    return documents


def field_text(values: Sequence[str]) -> str:
    return "\n".join(_LINE_BREAKS.sub(" ", value) for value in values)


def python_field_texts(
    partition_files: Iterable[Path], labels: dict[str, str], predicates: frozenset[str], *, relations: bool = False,
    ltr: bool = False,
) -> list[DocumentTexts]:
    texts = []
    for d in python_build_documents(partition_files, labels, predicates, relations=relations, ltr=ltr):
        texts.append(DocumentTexts(
            d.entity, field_text(d.names), field_text(d.content),
            "\n".join(f"{entity}\t{predicate}" for entity, predicate in d.relations),
            field_text(d.title), field_text(d.short_abstract), field_text(d.long_abstract), field_text(d.wiki_links),
            field_text(d.categories), d.redirects, d.links))
    return texts
