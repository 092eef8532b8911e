"""Command line: ``elquery index surface-forms`` (build) and ``elquery surface-forms`` (lookups)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from elquery.base import COMMAND_SUMMARIES, ElqueryError, add_workers_argument, positive_int, workers_of
from elquery.spark import add_engine_arguments, check_engine
from elquery.indexing.surface_forms.memory import DEFAULT_MEMORY_MB


def _build(args: argparse.Namespace) -> int:
    from elquery.indexing.surface_forms.build import BuildOptions, build_store

    options = BuildOptions(
        dumps=tuple(args.dumps),
        facc=tuple(args.facc),
        facc_annotations=tuple(args.facc_annotations),
        min_posterior=args.min_posterior,
        anchors=args.anchors,
        kb_aliases=args.kb_aliases,
        min_count=args.min_count,
        workers=workers_of(args),
        memory_mb=args.memory,
    )
    report = build_store(args.out, options, overwrite=args.overwrite)
    for line in report.summary_lines():
        print(line, file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _facc_counts(args: argparse.Namespace) -> int:
    if args.engine == "spark" and args.workers is not None:
        raise ElqueryError("--workers goes with --engine local; Spark's parallelism comes from --master")
    check_engine(args.engine, args.master)
    if args.engine == "spark":
        from elquery.indexing.surface_forms.facc_spark import count_annotations_spark

        report = count_annotations_spark(args.annotations, args.out, min_posterior=args.min_posterior,
                                         memory_mb=args.memory, master=args.master)
    else:
        from elquery.indexing.surface_forms.facc_annotations import count_annotations

        report = count_annotations(args.annotations, args.out, min_posterior=args.min_posterior,
                                   memory_mb=args.memory, workers=workers_of(args))
    for line in report.summary_lines():
        print(line, file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _min_posterior(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--min-posterior", type=float, default=0.0, metavar="P",
                        help="keep only FACC1 annotations whose posterior (column 6) is at least P (default 0: "
                        "every published annotation; FACC1 already kept only confident ones)")


def _memory(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str) -> None:
    """``--memory MB``, the same in every command of the surface-form stage."""
    parser.add_argument("--memory", type=positive_int, default=DEFAULT_MEMORY_MB, metavar="MB",
                        help=f"memory per process for the rows held before they are spilled to disk and merged "
                        f"(default {DEFAULT_MEMORY_MB}; {what}); docs/surface-forms.md")


def _print(data: object) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _lookup(args: argparse.Namespace) -> int:
    from elquery.kb.normalize import normalize
    from elquery.kb.surface_forms.store import SurfaceFormStore

    with SurfaceFormStore(args.store) as store:
        candidates = store.lookup(args.text)
    _print({"form": normalize(args.text), "candidates": [asdict(c) for c in candidates[: args.limit]]})
    return 0


def _aliases(args: argparse.Namespace) -> int:
    from elquery.kb.identifiers import identifiers_without_table, parse_identifier, resolve, table_of_index
    from elquery.kb.surface_forms.store import SurfaceFormStore

    if args.index is not None and not Path(args.index).is_dir():
        raise ElqueryError(f"--index {args.index}: no such entity index")
    table = table_of_index(args.index)
    named = parse_identifier(args.entity)
    entity = resolve(args.entity, table)
    if entity is None:
        if named is None:
            reason = "not an entity id (docs/identifiers.md)"
        elif table is None:
            reason = f"a {named.scheme} id needs --index, an entity index with an identifiers table (elquery build)"
        else:
            reason = f"no entity has this {named.scheme} id in {args.index}'s identifiers table"
        raise ElqueryError(f"{args.entity!r}: {reason}")
    with SurfaceFormStore(args.store) as store:
        aliases = store.aliases(entity)
    ids = identifiers_without_table(entity) if table is None else table.of(entity)
    _print({"entity": entity, "ids": ids.as_dict(), "aliases": [asdict(a) for a in aliases[: args.limit]]})
    return 0


def register_index(index_commands: argparse._SubParsersAction) -> None:
    """Add ``surface-forms`` to the ``elquery index`` subcommands."""
    build = index_commands.add_parser(
        "surface-forms",
        help="build the surface-form dictionary and commonness table (methods.md §3)",
        description="Build the surface-form store (SQLite) from KB aliases in DBpedia dumps, FACC count files "
        "and DBpedia's Wikipedia anchor texts.",
    )
    build.add_argument("--dumps", type=Path, nargs="+", required=True, metavar="DIR",
                       help="DBpedia dump directories or files (labels, redirects, persondata, anchor_text, freebase_links)")
    build.add_argument("--facc", type=Path, nargs="+", default=[], metavar="FILE",
                       help="FACC count files or directories of them (rows: form<TAB>Freebase id<TAB>count; .tsv/.gz/.bz2)")
    build.add_argument("--facc-annotations", type=Path, nargs="+", default=[], metavar="PATH",
                       help="raw FACC1 annotation files, archives or directories (counted first, as by "
                       "`elquery index facc-counts`)")
    _min_posterior(build)
    build.add_argument("--anchors", action="store_true", help="count Wikipedia anchor texts (anchor_text dataset)")
    build.add_argument("--kb-aliases", action=argparse.BooleanOptionalAction, default=True,
                       help="KB aliases: rdfs:label, foaf:name, redirect labels (default: on)")
    build.add_argument("--min-count", type=int, default=1, metavar="N",
                       help="drop a pair's FACC or anchor count below N (default: 1)")
    build.add_argument("--out", type=Path, required=True, metavar="SF.db", help="the store to write")
    build.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    add_workers_argument(build, "worker processes (the store does not depend on it)")
    _memory(build, "the store does not depend on it")
    build.set_defaults(func=_build)

    counts = index_commands.add_parser(
        "facc-counts",
        help="count raw FACC1 annotations into form<TAB>mid<TAB>count (the --facc input)",
        description="Read the published FACC1 annotation files (8 tab-separated columns per annotation; plain, "
        ".gz, .bz2, or inside .tar/.tgz archives; directories searched recursively), normalize each mention as "
        "the surface-form store does and count the (form, Freebase mid) pairs, in bounded memory (runs spilled "
        "to disk and merged) with one process per file. Malformed lines are counted and reported per file. "
        "See docs/surface-forms.md.")
    counts.add_argument("annotations", type=Path, nargs="+", metavar="PATH", help="annotation files, archives or directories")
    counts.add_argument("--out", type=Path, required=True, metavar="COUNTS.tsv", help="the counts file to write ('-': stdout)")
    _min_posterior(counts)
    _memory(counts, "the counts do not depend on it")
    add_workers_argument(counts, "worker processes, one file at a time each (the counts do not depend on it)")
    add_engine_arguments(counts, "one task per file; every executor must read the files at the paths given")
    counts.set_defaults(func=_facc_counts)


def register(commands: argparse._SubParsersAction) -> None:
    """Add the top-level ``surface-forms`` group."""
    group = commands.add_parser("surface-forms", help=COMMAND_SUMMARIES["surface-forms"])
    sub = group.add_subparsers(dest="surface_forms_command", required=True, metavar="COMMAND")
    lookup = sub.add_parser("lookup", help="candidates of a text, by commonness (JSON)")
    lookup.add_argument("store", type=Path, metavar="SF.db")
    lookup.add_argument("text")
    lookup.add_argument("--limit", type=positive_int, default=None, help="print at most this many candidates (>= 1)")
    lookup.set_defaults(func=_lookup)
    aliases = sub.add_parser("aliases", help="surface forms of an entity, by count (JSON)")
    aliases.add_argument("store", type=Path, metavar="SF.db")
    aliases.add_argument("entity", help="the entity in any spelling of docs/identifiers.md: '<dbpedia:Rome>', Rome, "
                         "a Wikipedia URL, and with --index a Wikidata QID (Q220), Freebase mid (/m/06c62) or curid:N")
    aliases.add_argument("--index", metavar="INDEX", help="entity index whose identifiers table (elquery build) "
                         "resolves QIDs, mids and page ids and gives the entity's ids")
    aliases.add_argument("--limit", type=positive_int, default=None, help="print at most this many forms (>= 1)")
    aliases.set_defaults(func=_aliases)
