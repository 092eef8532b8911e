"""Surface-form sources in the DBpedia dumps (methods.md §2-3): KB aliases (rdfs:label, foaf:name,
redirect labels), Wikipedia anchor texts (dbo:wikiPageWikiLinkText) and the Freebase mapping
(owl:sameAs to ``http://rdf.freebase.com/ns/m.…``).

Files are chosen by predicate, not by name, with one exception that saves reading huge files:
a file whose name starts with a DBpedia dataset name is read only for the predicates that
dataset carries (``labels_`` rdfs:label, ``redirects_``/``transitive_redirects_``
dbo:wikiPageRedirects, ``persondata_`` foaf:name, ``anchor_text_`` anchor texts,
``freebase_links_`` owl:sameAs), and the other DBpedia datasets named in ``SKIPPED_DATASETS``
(page links, abstracts, infoboxes, ...) are not read. Any other file is scanned for every
predicate needed.

Every entity is resolved through the redirects (transitively), so candidates are never redirect
pages: the label of a redirect page becomes an alias of its target (the title from the redirect
URI, percent-decoded with underscores as spaces, when the page has no label), and anchors and
Freebase ids that name a redirect page count for its target.
"""

from __future__ import annotations

import io
import re
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import IO

from elquery.base import ElqueryError
from elquery.indexing.surface_forms.mid_numbers import FreebaseLinks, MidNumbers
from elquery.indexing.ntriples import MAX_LINE_CHARS, ObjectKind, ParseReport, numbered_lines, open_text, parse_line, plain_statement
from elquery.kb.entities import entity_id

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
REDIRECT = "http://dbpedia.org/ontology/wikiPageRedirects"
ANCHOR_TEXT = "http://dbpedia.org/ontology/wikiPageWikiLinkText"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
FREEBASE_MID_PREFIX = "http://rdf.freebase.com/ns/m."
DISAMBIGUATION = "(disambiguation)"
_DISAMBIGUATION_IDS = ("(disambiguation)>", "%28disambiguation%29>")

DATASET_PREDICATES = {
    "labels_": frozenset({RDFS_LABEL}),
    "redirects_": frozenset({REDIRECT}),
    "transitive_redirects_": frozenset({REDIRECT}),
    "persondata_": frozenset({FOAF_NAME}),
    "anchor_text_": frozenset({ANCHOR_TEXT}),
    "freebase_links_": frozenset({SAME_AS}),
}
SKIPPED_DATASETS = (
    "article_categories_", "article_templates_", "category_labels_", "citation_", "commons_page_links_",
    "disambiguations_", "equations_", "external_links_", "genders_", "geo_coordinates_", "geonames_links_",
    "homepages_", "images_", "infobox_", "instance_types_", "interlanguage_links_", "long_abstracts_",
    "mappingbased_", "nif_", "out_degree_", "page_ids_", "page_length_", "page_links_", "raw_tables_",
    "revision_ids_", "revision_uris_", "short_abstracts_", "skos_categories_", "specific_mappingbased_",
    "template_parameters_", "topical_concepts_", "wikipedia_links_",
)  # fmt: skip
_MAX_REDIRECT_HOPS = 64

OnText = Callable[[str, int], None]


def predicates_of(path: Path, wanted: frozenset[str]) -> frozenset[str]:
    """The predicates of ``wanted`` worth looking for in ``path`` (chosen by file name prefix)."""
    for prefix, carried in DATASET_PREDICATES.items():
        if path.name.startswith(prefix):
            return wanted & carried
    if path.name.startswith(SKIPPED_DATASETS):
        return frozenset()
    return wanted


def _scan_lines(
    lines: Iterable[tuple[int, str]], path: Path, predicates: frozenset[str], report: ParseReport
) -> Iterator[tuple[str, str, str, bool]]:
    """``scan`` over numbered lines of ``path``: every line is judged by the one N-Triples rule
    (:func:`~elquery.indexing.ntriples.plain_statement`, else
    :func:`~elquery.indexing.ntriples.parse_line`), whatever its predicate, so the malformed lines
    counted are those ``index dbpedia`` counts."""
    file_report = report.file(path)
    for number, line in lines:
        plain = plain_statement(line)
        if plain is not None:
            subject, predicate, obj, literal = plain
            if predicate in predicates:
                file_report.triples += 1
                yield predicate, subject, obj, literal
            continue
        try:
            triple = parse_line(line)
        except ValueError as exc:
            file_report.record_malformed(number, exc, report.max_errors)
            continue
        if triple is not None and triple.predicate in predicates:
            file_report.triples += 1
            yield triple.predicate, triple.subject, triple.object, triple.kind is ObjectKind.LITERAL


def scan(path: Path, predicates: frozenset[str], report: ParseReport) -> Iterator[tuple[str, str, str, bool]]:
    """(predicate, subject, object, object is a literal) of the triples of ``path`` with one of
    ``predicates``. Lines of other predicates are skipped unparsed; malformed lines are counted
    and reported, as all malformed lines are (the one rule: :func:`_scan_lines`)."""
    if not predicates:
        return
    try:
        with open_text(path) as handle:
            yield from _scan_lines(numbered_lines(handle), path, predicates, report)
    except (EOFError, OSError, zlib.error) as exc:
        raise ElqueryError(f"{path}: truncated or corrupt file ({exc})") from exc


_LINK_CHARS = r"""[^\x00-\x20<>"{}|^`\\\x85\u2028\u2029\udc80-\udcff]+"""  # as plain_statement's IRIs
_FREEBASE_LINK = re.compile(
    rf'^<http://dbpedia\.org/resource/({_LINK_CHARS})> <http://www\.w3\.org/2002/07/owl#sameAs> '
    rf'<http://rdf\.freebase\.com/ns/m\.({_LINK_CHARS})> \.[ \t]*$',
    re.MULTILINE,
)
_LINK_BLOCK_CHARS = 1 << 20


def _line_blocks(handle: IO[str]) -> Iterator[str]:
    """Whole lines of ``handle``, about :data:`_LINK_BLOCK_CHARS` characters at a time (the last
    line without its line end, if the file has none, a block of its own). A line longer than
    ``MAX_LINE_CHARS`` is kept as its first ``MAX_LINE_CHARS + 1`` characters (as
    :func:`~elquery.indexing.ntriples.numbered_lines` gives it) and the rest skipped as read."""
    rest, skipping = "", False
    while chunk := handle.read(_LINK_BLOCK_CHARS):
        if skipping:
            end = chunk.find("\n")
            if end < 0:
                continue
            chunk, skipping = rest + "\n" + chunk[end + 1:], False
        else:
            chunk = rest + chunk
        cut = chunk.rfind("\n") + 1
        rest = chunk[cut:]
        if cut:
            yield chunk[:cut]
        if len(rest) > MAX_LINE_CHARS + 1:
            rest, skipping = rest[:MAX_LINE_CHARS + 1], True
    if rest:
        yield rest


def _numbered(block: str, first: int) -> list[tuple[int, str]]:
    """The lines of a block of :func:`_line_blocks`, numbered from ``first``, as
    :func:`~elquery.indexing.ntriples.numbered_lines` gives them (with its line end, at most
    ``MAX_LINE_CHARS + 1`` characters)."""
    return [(first + number - 1, line) for number, line in numbered_lines(io.StringIO(block))]


def freebase_link_batches(path: Path, report: ParseReport) -> Iterator[tuple[list[str], list[str]]]:
    """The owl:sameAs links from DBpedia resources to Freebase in ``path`` (a freebase_links
    dataset), a block of lines at a time (:func:`_line_blocks`): (entity ids, ``/m/…``). A block
    whose lines are all such links, none too long, is matched by one regex; any other block is read
    line by line as ``scan`` does (the same rule)."""
    file_report = report.file(path)
    number = 1
    try:
        with open_text(path) as handle:
            for block in _line_blocks(handle):
                links = _FREEBASE_LINK.findall(block)
                count = block.count("\n")
                if len(links) == count and block.endswith("\n") and max(map(len, block.split("\n"))) < MAX_LINE_CHARS:
                    file_report.triples += len(links)
                    number += count
                    yield [f"<dbpedia:{title}>" for title, _ in links], ["/m/" + mid for _, mid in links]
                    continue
                batch = _numbered(block, number)
                number += len(batch)
                entities, mids = [], []
                for _, subject, obj, literal in _scan_lines(batch, path, frozenset({SAME_AS}), report):
                    entity = entity_id(subject)
                    if entity is not None and not literal and obj.startswith(FREEBASE_MID_PREFIX):
                        entities.append(entity)
                        mids.append("/m/" + obj[len(FREEBASE_MID_PREFIX) :])
                yield entities, mids
    except (EOFError, OSError, zlib.error) as exc:
        raise ElqueryError(f"{path}: truncated or corrupt file ({exc})") from exc


def title_of(entity: str) -> str:
    """``<dbpedia:Rome_(disambiguation)>`` -> ``Rome (disambiguation)`` (percent-decoded)."""
    return urllib.parse.unquote(entity[len("<dbpedia:") : -1]).replace("_", " ")


@dataclass
class Entities:
    """Entity ids ``<dbpedia:Title>`` numbered in order of first appearance."""

    ids: dict[str, int] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)

    def id(self, name: str) -> int:
        number = self.ids.setdefault(name, len(self.names))
        if number == len(self.names):
            self.names.append(name)
        return number

    def ids_of(self, names: list[str]) -> list[int]:
        """:meth:`id` of each of ``names``, in one pass (new names numbered in order of first appearance)."""
        ids, known = self.ids, len(self.names)
        numbers = [ids.setdefault(name, len(ids)) for name in names]
        if len(ids) > known:  # the new names, each once, in the order they were numbered
            self.names.extend(dict.fromkeys(name for name, number in zip(names, numbers) if number >= known))
        return numbers


@dataclass
class DumpReport:
    """What the dumps contributed."""

    parse: ParseReport = field(default_factory=ParseReport)
    redirects: int = 0
    kb_aliases: int = 0
    redirect_title_aliases: int = 0
    anchor_links: int = 0
    freebase_links: int = 0
    freebase_conflicts: int = 0
    skipped_disambiguation: int = 0
    empty_forms: int = 0


def read_redirects(files: Iterable[Path], report: DumpReport) -> dict[str, str]:
    """Redirect page -> final target, redirect chains followed (cycles are dropped)."""
    direct: dict[str, str] = {}
    for path in files:
        for _, subject, obj, literal in scan(path, predicates_of(path, frozenset({REDIRECT})), report.parse):
            source, target = entity_id(subject), None if literal else entity_id(obj)
            if source is not None and target is not None and source != target:
                direct[source] = target
    resolved: dict[str, str] = {}
    for source, target in direct.items():
        for _ in range(_MAX_REDIRECT_HOPS):
            if target not in direct or target == source:
                break
            target = direct[target]
        if target != source and target not in direct:
            resolved[source] = target
    report.redirects = len(resolved)
    return resolved


@dataclass
class DumpSources:
    """Reads the surface-form sources of the dumps, handing KB aliases and anchors to callbacks
    as (text, entity id) and collecting the Freebase mapping ``/m/0abc`` -> entity number
    (:meth:`mid_numbers` once the dumps are read)."""

    redirects: dict[str, str]
    entities: Entities
    report: DumpReport
    mids: FreebaseLinks = field(default_factory=FreebaseLinks)
    _labelled_redirects: set[str] = field(default_factory=set)

    def resolve(self, subject: str) -> str | None:
        """The entity id of a DBpedia resource IRI, through redirects; None for other IRIs and
        for disambiguation pages."""
        entity = entity_id(subject)
        if entity is None:
            return None
        entity = self.redirects.get(entity, entity)
        return None if entity.endswith(_DISAMBIGUATION_IDS) else entity

    def read(self, path: Path, predicates: frozenset[str], on_alias: OnText, on_anchor: OnText) -> None:
        """Read ``predicates`` (a subset of label, foaf:name, anchor text, owl:sameAs) from ``path``."""
        wanted = predicates_of(path, predicates)
        if wanted == {SAME_AS}:
            for linked, mids in freebase_link_batches(path, self.report.parse):
                self._freebase_batch(linked, mids)
            return
        for predicate, subject, obj, literal in scan(path, wanted, self.report.parse):
            if predicate == SAME_AS:
                entity = entity_id(subject)
                if entity is not None and not literal and obj.startswith(FREEBASE_MID_PREFIX):
                    self._freebase(entity, "/m/" + obj[len(FREEBASE_MID_PREFIX) :])
                continue
            if not literal:
                continue
            entity = self.resolve(subject)
            if entity is None:
                self.report.skipped_disambiguation += entity_id(subject) is not None
            elif predicate == ANCHOR_TEXT:
                self.report.anchor_links += 1
                on_anchor(obj, self.entities.id(entity))
            elif obj.endswith(DISAMBIGUATION):
                self.report.skipped_disambiguation += 1
            else:
                redirect = entity_id(subject) if predicate == RDFS_LABEL else None
                if redirect is not None and redirect in self.redirects:
                    self._labelled_redirects.add(redirect)
                self.report.kb_aliases += 1
                on_alias(obj, self.entities.id(entity))

    def finish(self, on_alias: OnText) -> None:
        """After the labels: the title of each redirect page without a label becomes an alias
        of the target."""
        for source, target in self.redirects.items():
            title = title_of(source)
            if source in self._labelled_redirects or source.endswith(_DISAMBIGUATION_IDS) or target.endswith(_DISAMBIGUATION_IDS):
                continue
            self.report.redirect_title_aliases += 1
            on_alias(title, self.entities.id(target))

    def _freebase(self, entity: str, mid: str) -> None:
        """Link ``mid`` to ``entity`` (a batch of one: :meth:`_freebase_batch`)."""
        self._freebase_batch([entity], [mid])

    def _freebase_batch(self, entities: list[str], mids: list[str]) -> None:
        """Link each of ``mids`` to its entity (through redirects; a disambiguation page is no
        entity), the batch in one pass."""
        if self.redirects:
            entities = [self.redirects.get(entity, entity) for entity in entities]
        keep = [not entity.endswith(_DISAMBIGUATION_IDS) for entity in entities]
        if not all(keep):
            entities, mids = list(compress(entities, keep)), list(compress(mids, keep))
        self.report.freebase_links += len(entities)
        self.mids.add_batch(mids, self.entities.ids_of(entities))

    def mid_numbers(self) -> MidNumbers:
        """The Freebase mapping of the links read (a mid linked to several entities keeps the
        smallest entity id), its conflicts counted in the report."""
        mapping, conflicts = self.mids.resolve(self.entities.names)
        self.report.freebase_conflicts += conflicts
        return mapping
