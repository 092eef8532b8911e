"""Entity documents from DBpedia dumps (methods.md §2), in bounded memory.

The dumps are read once and every statement about a DBpedia resource is *spilled* into one of P
partition files chosen by a stable hash of its subject, so that a partition holds everything known
about its entities and fits in memory. Labels that differ from the title written in the URI are
kept in a (small) dictionary for resolving object URIs. Then each partition is grouped by subject
to count predicates (for the top-N choice) and, in a second read, to build the documents:

* ``names``: rdfs:label, foaf:name, and the labels of the redirect pages pointing at the entity;
* ``content``: the values of the top-N predicates (by number of indexed entities having them,
  owl:sameAs excluded), object URIs resolved to their label, or else to the title in the URI;
* ``relations`` (only when asked, for ELR): the (id, predicate) pairs of the DBpedia resources
  that are objects of the top-N predicates, distinct and sorted;
* only entities with both rdfs:label and rdfs:comment are kept.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from elquery.indexing.ntriples import DBPEDIA_RESOURCE, ParseReport, dump_bytes, entity_id

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
REDIRECTS = "http://dbpedia.org/ontology/wikiPageRedirects"
OWL_SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"

# Datasets that describe links or bookkeeping rather than entities; skipped by file name.
SKIPPED_DATASETS = (
    "anchor_text",
    "page_links",
    "freebase_links",
    "page_ids",
    "out_degree",
    "revision_ids",
    "revision_uris",
    "wikipedia_links",
    "interlanguage_links",
    "external_links",
    "images",
    "disambiguations",
)

# Wikipedia namespaces whose prefix is dropped when a URI's title becomes text.
_NAMESPACES = ("Category:", "File:", "Image:", "Template:", "Portal:", "Wikipedia:", "Help:", "Book:", "Draft:")

# Partition record kinds.
_LITERAL, _IRI, _REDIRECT = "L", "I", "R"
_LABELS_FILE = "labels.tsv"
"""Where the spill leaves its labels for a moment (``subject TAB escaped label`` lines)."""


@functools.lru_cache(maxsize=1 << 16)
def title_text(iri: str) -> str:
    """The text a URI names when no label is known (methods.md §2): the title (DBpedia resource)
    or local name (other IRIs), percent-decoded, underscores as spaces, a Wikipedia namespace
    prefix such as ``Category:`` dropped (other colons are part of the title). Cached: object
    IRIs repeat (categories, classes, popular entities)."""
    if iri.startswith(DBPEDIA_RESOURCE):
        title = iri[len(DBPEDIA_RESOURCE):]
    else:
        title = iri.rstrip("/#").rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    title = unquote(title).replace("_", " ")
    if title.startswith(_NAMESPACES):
        return title.partition(":")[2]
    return title


_SPILL_UNESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
_SPILL_UNESCAPED = re.compile(r"\\[\\tnr]")


def _spill_unescape(text: str) -> str:
    """A literal value of a partition file as it was read: DumpSpiller escapes backslash, tab
    and line ends (as ``\\\\ \\t \\n \\r``) so that it stays on one line."""
    return _SPILL_UNESCAPED.sub(lambda m: _SPILL_UNESCAPES[m.group()], text) if "\\" in text else text


def is_skipped_dataset(path: Path, skipped: Iterable[str] = SKIPPED_DATASETS) -> bool:
    return path.name.startswith(tuple(skipped))


@dataclass
class SpillResult:
    """What a spill of some dump files produced: labels differing from the URI title, counts."""

    labels: dict[str, str] = field(default_factory=dict)
    report: ParseReport = field(default_factory=ParseReport)
    spilled: int = 0


def spill(files: Iterable[Path], out_dir: Path, partitions: int) -> SpillResult:
    """Read dump files once, appending each statement about a DBpedia resource to its subject's
    partition file ``out_dir/part-NNNN.tsv`` (lines ``subject TAB kind TAB predicate TAB value``,
    partition ``crc32(UTF-8 subject) mod partitions``, literal values escaped as
    :func:`_spill_unescape` reads them back).
    Redirects are filed under their *target*, carrying the redirect page's IRI; owl:sameAs,
    blank-node objects and redirects to anything but a DBpedia resource are left out.

    The files are decompressed here (:func:`~elquery.indexing.ntriples.dump_bytes`, a thread
    ahead); the lines are parsed and checked (as :func:`~elquery.indexing.ntriples.read_triples`
    does: the same malformed lines and reasons) and written in Java, by
    ``org.elquery.index.DumpSpiller``, at the same time."""
    from elquery.indexing.jvm import java_class

    out_dir.mkdir(parents=True, exist_ok=True)
    result = SpillResult()
    spiller = java_class("org.elquery.index.DumpSpiller")(str(out_dir), partitions)
    try:
        for path in files:
            file_report = result.report.file(path)
            spiller.begin(str(path), result.report.max_errors)
            for piece in dump_bytes(path):
                spiller.feed(piece, len(piece))
            triples, malformed, *errors = spiller.end()
            file_report.triples, file_report.malformed, file_report.errors = int(triples), int(malformed), errors
        labels_file = out_dir / _LABELS_FILE
        spiller.writeLabels(str(labels_file))
        result.spilled = spiller.spilled()
    finally:
        spiller.close()
    with open(labels_file, encoding="utf-8", newline="\n") as handle:
        for line in handle:
            subject, label = line.rstrip("\n").split("\t", 1)
            result.labels[subject] = _spill_unescape(label)
    labels_file.unlink()
    return result


@dataclass(frozen=True, slots=True)
class EntityDocument:
    """One entity's fielded document; field values are kept apart (one string per value).
    ``relations``: (related entity id, predicate IRI) pairs (an index built with ``--relations``)."""

    entity: str
    names: tuple[str, ...]
    content: tuple[str, ...]
    relations: tuple[tuple[str, str], ...] = ()


class _Statements:
    """What a partition says about one subject."""

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
                    statements.literals.append((predicate, _spill_unescape(value)))
                elif kind == _IRI:
                    statements.iris.append((predicate, value))
                else:
                    statements.redirects.append(value)
    return groups


def count_predicates(partition_files: Iterable[Path]) -> Counter[str]:
    """Number of indexable entities (rdfs:label and rdfs:comment literals) having each predicate
    (literal or IRI statements), over one partition's files; the values are not read."""
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


def top_predicates(counts: Counter[str], n: int) -> list[str]:
    """The n most frequent predicates; ties broken by the predicate IRI (deterministic)."""
    return [p for p, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]]


def build_documents(
    partition_files: Iterable[Path], labels: dict[str, str], predicates: frozenset[str], *, relations: bool = False
) -> Iterator[EntityDocument]:
    """The documents of one partition's indexable entities, sorted by entity id; with
    ``relations``, each also lists the distinct (id, predicate) pairs of the DBpedia resources
    that are objects of its top predicates (sorted)."""

    def resolve(iri: str) -> str:
        return labels.get(iri) or title_text(iri)

    groups = _grouped(partition_files)
    documents = []
    for subject, statements in groups.items():
        if not statements.indexable:
            continue
        # Sorted: the order of the statements in the partition files depends on how the dump
        # files were spread over the spill workers (--threads); the documents must not.
        literals, iris = sorted(statements.literals), sorted(statements.iris)
        names = [v for p, v in literals if p in (RDFS_LABEL, FOAF_NAME)]
        names += [resolve(r) for r in sorted(statements.redirects)]
        content = [v for p, v in literals if p in predicates]
        content += [resolve(v) for p, v in iris if p in predicates]
        eid = entity_id(subject)
        assert eid is not None  # spill() keeps DBpedia resources only
        related = sorted({(r, p) for p, v in iris if p in predicates and (r := entity_id(v)) is not None}) if relations else ()
        documents.append(EntityDocument(eid, tuple(names), tuple(content), tuple(related)))
    documents.sort(key=lambda d: d.entity)
    return iter(documents)
