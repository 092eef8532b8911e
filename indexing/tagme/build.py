"""``elquery index tagme``: build the TAGME artefact from DBpedia dumps (methods.md §6).

One pass over each dataset, in this order: redirects (so that every later reference to a
redirect page resolves to its target), labels (titles), anchor_text (anchors), page_links (the
in-link graph), long_abstracts (document frequencies of the dictionary forms), then page_ids
(the Wikipedia page ids of the entities, for TAGME's answers).

Memory: the page numbering (about 100 bytes per page: some 2 GB for the 15M pages and redirects
of a full English DBpedia) and a link count per page, one form partition at a time, the phrase
prefixes of the dictionary forms during the abstract pass, and one range of at most 2^21 links
at a time (the 150M links of a full page_links go to disk: 1.2 GB). Nothing grows with the
number of links or anchor occurrences.
The artefact is built in a temporary directory beside ``out`` and renamed on success.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm import tqdm

from elquery.indexing.entity_documents import RDFS_LABEL, REDIRECTS, title_text
from elquery.indexing.build_outputs import check_output, replace, work_folder
from elquery.indexing.ntriples import ObjectKind, ParseReport, Triple, read_triples
from elquery.indexing.provenance import BuildPlan, write_provenance
from elquery.indexing.tagme.datasets import TagmeDumps, find_dumps
from elquery.indexing.tagme.dictionary import FormSpill, aggregate, title_variants
from elquery.indexing.tagme.document_frequency import document_frequencies, phrase_prefixes
from elquery.indexing.tagme.graph import EdgeSpill, build_csr
from elquery.kb.tagme.layout import DICTIONARY_FILE, write_meta
from elquery.indexing.tagme.nodes import NodeIds
from elquery.indexing.tagme.params import TagmeBuildParams
from elquery.indexing.tagme.dictionary_writer import DictionaryWriter

WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink"
WIKI_LINK_TEXT = "http://dbpedia.org/ontology/wikiPageWikiLinkText"
WIKI_PAGE_ID = "http://dbpedia.org/ontology/wikiPageID"
DISAMBIGUATION_SUFFIX = "(disambiguation)"
PARTITIONS = 256


@dataclass(frozen=True)
class TagmeBuildSummary:
    """What a build wrote, and the parse report of the dumps it read."""

    out: str
    forms: int
    pairs: int
    entities: int
    edges: int
    abstracts: int
    forms_df_below_link: int
    seconds: float
    report: ParseReport = field(repr=False, compare=False)

    def warnings(self) -> list[str]:
        """One line when df was counted over too small a collection for some forms' lp."""
        if not self.forms_df_below_link:
            return []
        return [f"warning: {self.forms_df_below_link} of {self.forms} forms occur in fewer of the "
                f"{self.abstracts} long abstracts than they are linked from: df is counted "
                "over too small a text collection for their link probability to be meaningful"]

    def line(self) -> str:
        data = asdict(self)
        del data["report"]
        return json.dumps(data)


def _triples(path: Path, report: ParseReport, desc: str) -> Iterable[Triple]:
    return tqdm(read_triples(path, report), desc=desc, unit=" triples", disable=None)


def _read_titles(dumps: TagmeDumps, nodes: NodeIds, forms: FormSpill, report: ParseReport) -> None:
    if dumps.redirects is not None:
        for t in _triples(dumps.redirects, report, "redirects"):
            if t.predicate == REDIRECTS and t.kind is ObjectKind.IRI:
                source, target = nodes.node(t.subject), nodes.resolve_iri(t.object)
                if source is not None and target is not None:
                    nodes.add_redirect(source, target)
                    title = title_text(t.subject)
                    if not title.endswith(DISAMBIGUATION_SUFFIX):
                        forms.title(title, target)
    if dumps.labels is not None:
        for t in _triples(dumps.labels, report, "labels"):
            if t.predicate == RDFS_LABEL and t.kind is ObjectKind.LITERAL:
                node = nodes.node(t.subject)
                if node is not None and not nodes.is_redirect(node) and not t.object.endswith(DISAMBIGUATION_SUFFIX):
                    for variant in title_variants(t.object):
                        forms.title(variant, node)


def _read_links(dumps: TagmeDumps, nodes: NodeIds, forms: FormSpill, edges: EdgeSpill, report: ParseReport) -> None:
    for t in _triples(dumps.anchor_text, report, "anchor_text"):
        if t.predicate == WIKI_LINK_TEXT and t.kind is ObjectKind.LITERAL:
            node = nodes.resolve_iri(t.subject)
            if node is not None:
                forms.anchor(t.object, node)
    for t in _triples(dumps.page_links, report, "page_links"):
        if t.predicate == WIKI_LINK and t.kind is ObjectKind.IRI:
            source, target = nodes.resolve_iri(t.subject), nodes.resolve_iri(t.object)
            if source is not None and target is not None:
                edges.add(source, target)


def _page_ids(dumps: TagmeDumps, nodes: NodeIds, report: ParseReport) -> Iterable[tuple[int, int]]:
    """(node, Wikipedia page id) of the entities (pages that are not redirects) that have one."""
    if dumps.page_ids is None:
        return
    for t in _triples(dumps.page_ids, report, "page_ids"):
        if t.predicate == WIKI_PAGE_ID and t.kind is ObjectKind.LITERAL and t.object.isdigit():
            node = nodes.known(t.subject)
            if node is not None and not nodes.is_redirect(node):
                yield node, int(t.object)


def _build(dumps: TagmeDumps, params: TagmeBuildParams, directory: Path, report: ParseReport) -> dict[str, int]:
    work = directory / "work"
    nodes = NodeIds()
    forms = FormSpill(work / "forms", PARTITIONS, params.max_tokens)
    edges = EdgeSpill(work / "edges")
    try:
        _read_titles(dumps, nodes, forms, report)
        _read_links(dumps, nodes, forms, edges, report)
    finally:
        forms.close()
    graph = build_csr(edges, len(nodes), directory)
    writer = DictionaryWriter(directory / DICTIONARY_FILE)
    for partition in tqdm(forms.paths, desc="dictionary", unit=" partitions", disable=None):
        writer.add_forms(aggregate(partition, params.min_link))
    prefixes = phrase_prefixes(writer.forms_in_order())
    df, abstracts = document_frequencies(dumps.long_abstracts, prefixes, params.max_tokens, report)
    del prefixes
    writer.set_document_frequencies(df)
    writer.add_entities((node, nodes.entity(node)) for node in range(len(nodes)) if not nodes.is_redirect(node))
    writer.add_page_ids(_page_ids(dumps, nodes, report))
    df_below_link = writer.forms_with_df_below_link()
    writer.close()
    shutil.rmtree(work)
    return {"forms": writer.forms, "pairs": writer.pairs, "entities": graph.entities, "nodes": graph.nodes,
            "edges": graph.edges, "abstracts": abstracts, "forms_df_below_link": df_below_link}


def tagme_plan(dumps: Iterable[Path | str], params: TagmeBuildParams = TagmeBuildParams()) -> BuildPlan:
    """The dump files a TAGME build reads and the parameters that shape it (its provenance)."""
    found = find_dumps(dumps)
    return BuildPlan("TAGME artefact", tuple(Path(p) for p in found.files().values()), asdict(params))


def build_tagme(
    dumps: Iterable[Path | str],
    out: Path | str,
    params: TagmeBuildParams = TagmeBuildParams(),
    *,
    overwrite: bool = False,
) -> TagmeBuildSummary:
    """Build the TAGME artefact directory ``out`` from the dump files/directories ``dumps``
    (anchor_text, page_links, long_abstracts required; labels and transitive_redirects used when
    present)."""
    started = time.monotonic()
    found = find_dumps(dumps)
    plan = tagme_plan(dumps, params)
    out = Path(out)
    check_output(out, "TAGME artefact", overwrite)
    report = ParseReport()
    with work_folder(out) as work:
        temporary = work / "artefact"
        temporary.mkdir()
        counts = _build(found, params, temporary, report)
        write_meta(temporary, {**asdict(params), **counts, "df_collection": "long_abstracts", "dumps": found.files()})
        write_provenance(temporary, plan.record({**counts, "triples": report.triples, "malformed": report.malformed}))
        replace(temporary, out)
    return TagmeBuildSummary(str(out), counts["forms"], counts["pairs"], counts["entities"], counts["edges"],
                             counts["abstracts"], counts["forms_df_below_link"], round(time.monotonic() - started, 3),
                             report)
