"""Entity documents from DBpedia dumps (methods.md §2), in bounded memory.

The dumps are read once and every statement about a DBpedia resource is *spilled* into one of P
partition files chosen by a stable hash of its subject, so that a partition holds everything known
about its entities and fits in memory. Labels that differ from the title written in the URI are
written beside the partition files for resolving object URIs. Then each partition is grouped by
subject to count predicates (for the top-N choice) and, in a second read, to build the documents
(both in Java, ``org.elquery.index.PartitionDocuments``, one call per partition):

* ``names``: rdfs:label, foaf:name, and the labels of the redirect pages pointing at the entity;
* ``content``: the values of the top-N predicates (by number of indexed entities having them,
  owl:sameAs excluded), object URIs resolved to their label, or else to the title in the URI;
* ``relations`` (only when asked, for ELR): the (id, predicate) pairs of the DBpedia resources
  that are objects of the top-N predicates, distinct and sorted;
* the LTR fields (when asked, methods.md §9; :data:`~elquery.kb.index_format.LTR_FIELDS`),
  each of distinct values: ``title`` (rdfs:label), ``short_abstract`` (rdfs:comment),
  ``long_abstract`` (dbo:abstract), ``wiki_links`` (the DBpedia resources dbo:wikiPageWikiLink
  links to, as :func:`title_text`) and ``categories`` (dct:subject, as :func:`title_text`), and the
  counts ``redirects`` (distinct redirect pages) and ``links`` (distinct wiki link targets). The
  page links dataset (:data:`LINK_DATASETS`), skipped otherwise, is then read for its links only;
* only entities with both rdfs:label and rdfs:comment are kept.

Statements are taken sorted by (predicate, value), redirects by IRI and documents by entity id,
in code point order; an object URI resolves to its label, or (no label, or an empty one) to
:func:`title_text`; a field's text holds its values one per line, a value's own tabs and line
ends turned into spaces.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from elquery.kb.index_format import ENTITY_COUNTS, LTR_FIELDS
from elquery.kb.jvm import java_class, utf8_texts
from elquery.indexing.ntriples import ParseReport, dump_bytes
from elquery.kb.entities import DBPEDIA_RESOURCE

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
REDIRECTS = "http://dbpedia.org/ontology/wikiPageRedirects"
WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink"
ABSTRACT = "http://dbpedia.org/ontology/abstract"
DCT_SUBJECT = "http://purl.org/dc/terms/subject"
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

LINK_DATASETS = ("page_links",)
"""Datasets of wiki page links: read for their dbo:wikiPageWikiLink statements alone when the index
has the LTR fields, even if the skipped datasets name them (they never go into ``content`` then)."""

# Wikipedia namespaces whose prefix is dropped when a URI's title becomes text.
_NAMESPACES = ("Category:", "File:", "Image:", "Template:", "Portal:", "Wikipedia:", "Help:", "Book:", "Draft:")

LABELS_FILE = "labels.tsv"
"""Where the spill leaves its labels (``subject TAB escaped label`` lines) beside the partition files."""


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


def is_skipped_dataset(path: Path, skipped: Iterable[str] = SKIPPED_DATASETS) -> bool:
    return path.name.startswith(tuple(skipped))


def is_link_dataset(path: Path) -> bool:
    return path.name.startswith(LINK_DATASETS)


@dataclass
class SpillResult:
    """What a spill of some dump files produced: the file of the labels differing from the URI
    title (``subject TAB label`` lines, the label escaped as in the partition files), counts."""

    labels_file: Path
    report: ParseReport = field(default_factory=ParseReport)
    spilled: int = 0


def spill(files: Iterable[Path], out_dir: Path, partitions: int, *, links_only: Iterable[Path] = ()) -> SpillResult:
    """Read dump files once, appending each statement about a DBpedia resource to its subject's
    partition file ``out_dir/part-NNNN.tsv`` (lines ``subject TAB kind TAB predicate TAB value``,
    partition ``crc32(UTF-8 subject) mod partitions``, literal values with backslash, tab and
    line ends escaped as ``\\\\ \\t \\n \\r``) and the labels to ``out_dir/labels.tsv``.
    Redirects are filed under their *target*, carrying the redirect page's IRI; owl:sameAs,
    blank-node objects and redirects to anything but a DBpedia resource are left out. Of the
    files in ``links_only`` only the wiki page links to DBpedia resources are kept (kind W, no
    predicate, the target's title as value: the LTR fields).

    The files are decompressed here (:func:`~elquery.indexing.ntriples.dump_bytes`, a thread
    ahead); the lines are parsed and checked (as :func:`~elquery.indexing.ntriples.read_triples`
    does: the same malformed lines and reasons) and written in Java, by
    ``org.elquery.index.DumpSpiller``, at the same time."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = SpillResult(out_dir / LABELS_FILE)
    spiller = java_class("org.elquery.index.DumpSpiller")(str(out_dir), partitions)
    links = set(links_only)
    try:
        for path in files:
            file_report = result.report.file(path)
            spiller.begin(str(path), result.report.max_errors, path in links)
            for piece in dump_bytes(path):
                spiller.feed(piece, len(piece))
            triples, malformed, *errors = utf8_texts(spiller.end())
            file_report.triples, file_report.malformed, file_report.errors = int(triples), int(malformed), errors
        spiller.writeLabels(str(result.labels_file))
        result.spilled = spiller.spilled()
    finally:
        spiller.close()
    return result


@dataclass(frozen=True, slots=True)
class EntityDocument:
    """One entity's fielded document; field values are kept apart (one string per value).
    ``relations``: (related entity id, predicate IRI) pairs (an index built with ``--relations``);
    ``title`` to ``categories`` and the counts ``redirects`` and ``links``: the LTR fields (read by
    a writer that has them)."""

    entity: str
    names: tuple[str, ...]
    content: tuple[str, ...]
    relations: tuple[tuple[str, str], ...] = ()
    title: tuple[str, ...] = ()
    short_abstract: tuple[str, ...] = ()
    long_abstract: tuple[str, ...] = ()
    wiki_links: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    redirects: int = 0
    links: int = 0


@dataclass(frozen=True, slots=True)
class DocumentTexts:
    """The texts of one entity's document as the index receives them: ``names`` and ``content``
    one value per line; ``relations`` one ``id TAB predicate`` pair per line (empty unless asked);
    the LTR fields one value per line and the two counts (empty and 0 unless asked)."""

    entity: str
    names: str
    content: str
    relations: str = ""
    title: str = ""
    short_abstract: str = ""
    long_abstract: str = ""
    wiki_links: str = ""
    categories: str = ""
    redirects: int = 0
    links: int = 0


def count_predicates(partition_files: Sequence[Path]) -> Counter[str]:
    """Number of indexable entities (rdfs:label and rdfs:comment literals) having each predicate
    (literal or IRI statements), over one partition's files; the values are not read."""
    lines = java_class("org.elquery.index.PartitionDocuments").countPredicates([str(p) for p in partition_files])
    return Counter({predicate: int(count) for predicate, count in (line.split("\t") for line in lines.split("\n") if line)})


def top_predicates(counts: Counter[str], n: int) -> list[str]:
    """The n most frequent predicates; ties broken by the predicate IRI (deterministic)."""
    return [p for p, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]]


def load_labels(labels_files: Sequence[Path]) -> Any:
    """The spill's labels (``PartitionDocuments.Labels``), a later file's label of a subject winning."""
    return java_class("org.elquery.index.PartitionDocuments$Labels")([str(p) for p in labels_files])


def partition_documents(partition_files: Sequence[Path], labels: Any, predicates: Iterable[str], *,
                        relations: bool = False, ltr: bool = False) -> Any:
    """One partition's documents (``org.elquery.index.PartitionDocuments``: its files read and
    grouped), ready for ``EntityIndexWriter.add_partition``; ``labels`` from :func:`load_labels`,
    ``predicates`` the top predicates; with ``relations``, each document also lists the distinct
    (id, predicate) pairs of the DBpedia resources that are objects of its top predicates; with
    ``ltr``, it also has the LTR fields and counts."""
    return java_class("org.elquery.index.PartitionDocuments")(
        [str(p) for p in partition_files], labels, sorted(predicates), relations, ltr)


def document_texts(partition_files: Sequence[Path], labels_files: Sequence[Path], predicates: Iterable[str], *,
                   relations: bool = False, ltr: bool = False) -> list[DocumentTexts]:
    """The texts of :func:`partition_documents`, in entity id order (what the index receives)."""
    documents = partition_documents(partition_files, load_labels(labels_files), predicates, relations=relations, ltr=ltr)
    texts = utf8_texts(documents.textsUtf8())
    names = ["entity", "names", "content", *(["relations"] if relations else [])]
    if ltr:
        names += [*LTR_FIELDS, *ENTITY_COUNTS]
    width = len(names)
    result = []
    for i in range(0, len(texts), width):
        values: dict[str, Any] = dict(zip(names, texts[i:i + width]))
        for name in ENTITY_COUNTS if ltr else ():
            values[name] = int(values[name])
        result.append(DocumentTexts(**values))
    return result
