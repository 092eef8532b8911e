"""The count and write phases' documents as elquery made them in Python before they moved to Java
(``org.elquery.index.PartitionDocuments``): the reference the Java documents must match text for
text. ``python_field_texts`` gives what the Python build handed to ``EntityWriter`` per document:
``(entity id, names text, content text, relations text)``."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from elquery.indexing.entity_documents import FOAF_NAME, RDFS_COMMENT, RDFS_LABEL, EntityDocument, title_text
from elquery.indexing.ntriples import entity_id

_LITERAL, _IRI = "L", "I"
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
    __slots__ = ("literals", "iris", "redirects")

    def __init__(self) -> None:
        self.literals: list[tuple[str, str]] = []
        self.iris: list[tuple[str, str]] = []
        self.redirects: list[str] = []

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


def python_build_documents(
    partition_files: Iterable[Path], labels: dict[str, str], predicates: frozenset[str], *, relations: bool = False
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
        documents.append(EntityDocument(eid, tuple(names), tuple(content), tuple(related)))
    documents.sort(key=lambda d: d.entity)
    return documents


def field_text(values: Sequence[str]) -> str:
    return "\n".join(_LINE_BREAKS.sub(" ", value) for value in values)


def python_field_texts(
    partition_files: Iterable[Path], labels: dict[str, str], predicates: frozenset[str], *, relations: bool = False
) -> list[tuple[str, ...]]:
    texts = []
    for d in python_build_documents(partition_files, labels, predicates, relations=relations):
        row: tuple[str, ...] = (d.entity, field_text(d.names), field_text(d.content))
        if relations:
            row += ("\n".join(f"{entity}\t{predicate}" for entity, predicate in d.relations),)
        texts.append(row)
    return texts
