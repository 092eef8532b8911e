"""``elquery index ...``: build the artefacts (entity index, surface forms) and inspect them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from elquery.base import COMMAND_SUMMARIES, add_workers_argument, positive_int, workers_of

from elquery.indexing.entity_documents import SKIPPED_DATASETS
from elquery.indexing.surface_forms.cli import register_index as register_surface_forms_index
from elquery.indexing.surface_forms.memory import DEFAULT_MEMORY_MB
from elquery.indexing.tagme.cli import register_index as register_tagme_index


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``index`` (with its artefact subcommands) to the top-level ``elquery`` commands."""
    index = commands.add_parser("index", help=COMMAND_SUMMARIES["index"], description=__doc__)
    register_artefacts(index.add_subparsers(dest="index_command", required=True, metavar="ARTEFACT"))


def register_artefacts(index_commands: argparse._SubParsersAction) -> None:
    """Add the artefact builders (``dbpedia``, ``stats``, ...) to a subparsers object."""
    dbpedia = index_commands.add_parser(
        "dbpedia",
        help="build the fielded Lucene entity index from DBpedia dumps",
        description="Build the fielded Lucene entity index (fields names and content, exact field "
        "lengths) from DBpedia dumps (.ttl/.nt, plain, .bz2 or .gz). Only entities with both "
        "rdfs:label and rdfs:comment are indexed (methods.md §2). By default the index also holds the "
        "fields the LTR linker's features read (title, short_abstract, long_abstract, wiki_links, "
        "categories; methods.md §9) and the entities' redirect and link counts; the page links dataset is "
        "then read for its links.",
    )
    dbpedia.add_argument("--dumps", nargs="+", required=True, metavar="DIR_OR_FILE",
                         help="dump files, or directories holding them")
    dbpedia.add_argument("--out", required=True, help="index directory to create")
    dbpedia.add_argument("--top-predicates", type=int, default=1000, metavar="N",
                         help="predicates indexed into content, most frequent first (default 1000)")
    add_workers_argument(dbpedia, "worker processes (the index does not depend on it)", former="--threads")
    dbpedia.add_argument("--skip-datasets", default=",".join(SKIPPED_DATASETS), metavar="PREFIXES",
                         help="comma-separated file-name prefixes of dump files not read "
                         "(default: link and bookkeeping datasets: %(default)s); page_links is still read for "
                         "the wiki_links field unless --no-ltr-fields")
    dbpedia.add_argument("--overwrite", action="store_true", help="replace an existing index at --out")
    dbpedia.add_argument("--relations", action="store_true",
                         help="also index the fields relations and typed_relations: the ids of the entities each "
                         "entity links to through URI-valued objects of the top predicates, in all and per predicate "
                         "(for the ELR models sdm-elr, fsdm-elr, mlm-elr)")
    dbpedia.add_argument("--no-ltr-fields", dest="ltr_fields", action="store_false",
                         help="leave out the LTR fields (title, short_abstract, long_abstract, wiki_links, categories) "
                         "and the redirect and link counts, and do not read page_links: a smaller, faster build that "
                         "the LTR linker refuses")
    dbpedia.set_defaults(func=_index_dbpedia)

    stats = index_commands.add_parser("stats", help="print an index's statistics as JSON")
    stats.add_argument("index", help="index directory")
    stats.set_defaults(func=_index_stats)
    register_surface_forms_index(index_commands)
    register_tagme_index(index_commands)


def _index_dbpedia(args: argparse.Namespace) -> int:
    from elquery.indexing.build_index import build_dbpedia_index

    summary = build_dbpedia_index(
        args.dumps,
        args.out,
        top_predicates_n=args.top_predicates,
        workers=workers_of(args),
        overwrite=args.overwrite,
        skipped_datasets=[p for p in args.skip_datasets.split(",") if p],
        relations=args.relations,
        ltr_fields=args.ltr_fields,
    )
    for line in summary.report.summary_lines():
        print(line, file=sys.stderr)
    print(summary.line())
    return 0


def _index_stats(args: argparse.Namespace) -> int:
    from elquery.kb.entity_index import EntityIndex

    with EntityIndex(args.index) as index:
        print(json.dumps(index.stats(), indent=1))
    return 0


def register_build(commands: argparse._SubParsersAction) -> None:
    """Add ``build`` (every artefact, stage by stage) and ``info`` (provenance) to the top-level commands."""
    from elquery.indexing.tagme.params import TagmeBuildParams

    tagme = TagmeBuildParams()
    build = commands.add_parser(
        "build", help=COMMAND_SUMMARIES["build"],
        description="Build the entity index, the surface-form store (KB names, Wikipedia anchors and FACC counts) "
        "and the TAGME artefact into ARTEFACTS_DIR/{index,surface-forms.db,tagme}, and the identifiers table (Wikipedia "
        "page ids, Freebase mids, Wikidata QIDs) into ARTEFACTS_DIR/index/identifiers.db, stage by stage, with the options "
        "of each stage's own command (elquery index dbpedia, surface-forms, tagme). By default every stage the "
        "inputs allow is built, and one line says which were skipped and why (TAGME needs anchor_text, page_links "
        "and long_abstracts). A stage whose artefact exists with the same provenance (elquery version, options, "
        "input files by size and SHA-256) is skipped, so an interrupted build resumes where it stopped. "
        "See docs/commands/build.md.")
    build.add_argument("--data", nargs="+", required=True, type=Path, metavar="DIR",
                       help="DBpedia dump folders or files (as `elquery index dbpedia --dumps`)")
    build.add_argument("--out", required=True, type=Path, metavar="ARTEFACTS_DIR", help="artefacts folder (created)")
    build.add_argument("--stages", metavar="LIST",
                       help="comma-separated stages to build, of index, identifiers, surface-forms, tagme (default: every stage "
                       "the inputs allow); a chosen stage whose inputs are missing is an error")
    add_workers_argument(build, "worker processes (the artefacts do not depend on it)")
    index = build.add_argument_group("index (as `elquery index dbpedia`)")
    index.add_argument("--top-predicates", type=positive_int, default=1000, metavar="N",
                       help="predicates indexed into content (default 1000)")
    index.add_argument("--skip-datasets", default=",".join(SKIPPED_DATASETS), metavar="PREFIXES",
                       help="comma-separated file-name prefixes of dump files the index does not read "
                       "(default: link and bookkeeping datasets)")
    index.add_argument("--relations", action="store_true",
                       help="also index the fields relations and typed_relations, for the ELR models sdm-elr, "
                       "fsdm-elr, mlm-elr")
    index.add_argument("--no-ltr-fields", dest="ltr_fields", action="store_false",
                       help="leave out the LTR linker's fields and counts (and do not read page_links)")
    forms = build.add_argument_group("surface forms (as `elquery index surface-forms`)")
    forms.add_argument("--facc", nargs="+", default=[], type=Path, metavar="FILE",
                       help="FACC count files or folders of them (form<TAB>Freebase id<TAB>count)")
    forms.add_argument("--facc-annotations", nargs="+", default=[], type=Path, metavar="PATH",
                       help="raw FACC1 annotation files, archives or folders (counted first)")
    forms.add_argument("--min-posterior", type=float, default=0.0, metavar="P",
                       help="keep FACC1 annotations with posterior >= P (default 0)")
    forms.add_argument("--anchors", action=argparse.BooleanOptionalAction, default=None,
                       help="count Wikipedia anchor texts (default: when an anchor_text dump is among --data)")
    forms.add_argument("--kb-aliases", action=argparse.BooleanOptionalAction, default=True,
                       help="KB aliases: rdfs:label, foaf:name, redirect labels (default: on)")
    forms.add_argument("--min-count", type=positive_int, default=1, metavar="N",
                       help="drop a pair's FACC or anchor count below N (default 1)")
    forms.add_argument("--memory", type=positive_int, default=DEFAULT_MEMORY_MB, metavar="MB",
                       help=f"memory per process for the rows held before they are spilled to disk and merged "
                       f"(default {DEFAULT_MEMORY_MB}; the store does not depend on it)")
    tagme_group = build.add_argument_group("TAGME (as `elquery index tagme`)")
    tagme_group.add_argument("--min-link", type=positive_int, default=tagme.min_link, metavar="N",
                             help=f"drop forms linked fewer than N times (default {tagme.min_link})")
    tagme_group.add_argument("--max-tokens", type=positive_int, default=tagme.max_tokens, metavar="N",
                             help=f"longest surface form in tokens (default {tagme.max_tokens})")
    build.set_defaults(func=_build_all)

    info = commands.add_parser(
        "info", help=COMMAND_SUMMARIES["info"],
        description="Print what an artefact was built from and how: elquery version, input files (size, "
        "SHA-256), options, build report and times. ARTEFACT is an index, a surface-form store, a TAGME "
        "artefact or a folder written by `elquery build` (all three).")
    info.add_argument("artefact", type=Path, metavar="ARTEFACT",
                      help="an index, surface-form store or TAGME artefact, or an `elquery build` folder")
    info.add_argument("--json", action="store_true", help="print the records as JSON")
    info.set_defaults(func=_info)


def _build_all(args: argparse.Namespace) -> int:
    from elquery.indexing.build_all import BuildAllOptions, build_all
    from elquery.indexing.tagme.params import TagmeBuildParams

    options = BuildAllOptions(
        tuple(args.data),
        stages=None if args.stages is None else tuple(name.strip() for name in args.stages.split(",")),
        top_predicates=args.top_predicates, skip_datasets=tuple(p for p in args.skip_datasets.split(",") if p),
        relations=args.relations, ltr_fields=args.ltr_fields,
        facc=tuple(args.facc), facc_annotations=tuple(args.facc_annotations), min_posterior=args.min_posterior,
        anchors=args.anchors, kb_aliases=args.kb_aliases, min_count=args.min_count, memory_mb=args.memory,
        tagme=TagmeBuildParams(args.min_link, args.max_tokens), workers=workers_of(args))
    results = build_all(args.out, options)
    print(f"{sum(r.built for r in results)} of {len(results)} stages built -> {args.out}")
    return 0


def _info(args: argparse.Namespace) -> int:
    from elquery.base import ElqueryError
    from elquery.indexing.artefacts import ArtefactPaths, is_artefacts_dir
    from elquery.indexing.build_outputs import KINDS
    from elquery.indexing.provenance import read_provenance

    if is_artefacts_dir(args.artefact):
        named = {path.name: path for _, _, path in ArtefactPaths.of(args.artefact).items() if path.exists()}
        identifiers = ArtefactPaths.of(args.artefact).index / "identifiers.db"
        if KINDS["identifiers table"](identifiers):  # the identifiers table inside the index (docs/identifiers.md)
            named = {**{k: v for k, v in named.items() if k == "index"}, "index/identifiers.db": identifiers,
                     **{k: v for k, v in named.items() if k != "index"}}
    elif any(is_kind(args.artefact) for is_kind in KINDS.values()):
        named = {args.artefact.name: args.artefact}
    elif args.artefact.exists():
        raise ElqueryError(f"{args.artefact}: not an elquery artefact (an index, a surface-form store, a TAGME "
                           "artefact or an `elquery build` folder)")
    else:
        raise ElqueryError(f"{args.artefact}: no such artefact")
    records = {name: read_provenance(path) for name, path in named.items()}
    if args.json:
        print(json.dumps({name: r and r.to_json() for name, r in records.items()}, indent=1, sort_keys=True))
        return 0
    for name, record in records.items():
        print(f"== {named[name]}")
        print("\n".join(record.lines()) if record else "no provenance record (built before elquery kept them)")
    return 0


def main(argv: list[str] | None = None) -> int:
    from elquery.base import run

    return run([register_artefacts], prog="python -m elquery.indexing", argv=argv)
