"""``elquery index ...``: build the artefacts (entity index, surface forms) and inspect them."""

from __future__ import annotations

import argparse
import json
import sys

from elquery.indexing.entity_documents import SKIPPED_DATASETS
from elquery.indexing.surface_forms.cli import register_index as register_surface_forms_index
from elquery.indexing.tagme.cli import register_index as register_tagme_index


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``index`` (with its artefact subcommands) to the top-level ``elquery`` commands."""
    index = commands.add_parser("index", help="build and inspect indexes", description=__doc__)
    register_artefacts(index.add_subparsers(dest="index_command", required=True, metavar="ARTEFACT"))


def register_artefacts(index_commands: argparse._SubParsersAction) -> None:
    """Add the artefact builders (``dbpedia``, ``stats``, ...) to a subparsers object."""
    dbpedia = index_commands.add_parser(
        "dbpedia",
        help="build the fielded Lucene entity index from DBpedia dumps",
        description="Build the fielded Lucene entity index (fields names and content, exact field "
        "lengths) from DBpedia dumps (.ttl/.nt, plain, .bz2 or .gz). Only entities with both "
        "rdfs:label and rdfs:comment are indexed (methods.md §2).",
    )
    dbpedia.add_argument("--dumps", nargs="+", required=True, metavar="DIR_OR_FILE",
                         help="dump files, or directories holding them")
    dbpedia.add_argument("--out", required=True, help="index directory to create")
    dbpedia.add_argument("--top-predicates", type=int, default=1000, metavar="N",
                         help="predicates indexed into content, most frequent first (default 1000)")
    dbpedia.add_argument("--threads", type=int, default=None, metavar="N",
                         help="worker processes (default: number of cores)")
    dbpedia.add_argument("--skip-datasets", default=",".join(SKIPPED_DATASETS), metavar="PREFIXES",
                         help="comma-separated file-name prefixes of dump files not read "
                         "(default: link and bookkeeping datasets: %(default)s)")
    dbpedia.add_argument("--overwrite", action="store_true", help="replace an existing index at --out")
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
        threads=args.threads,
        overwrite=args.overwrite,
        skipped_datasets=[p for p in args.skip_datasets.split(",") if p],
    )
    for line in summary.report.summary_lines():
        print(line, file=sys.stderr)
    print(summary.line())
    return 0


def _index_stats(args: argparse.Namespace) -> int:
    from elquery.indexing.entity_index import EntityIndex

    with EntityIndex(args.index) as index:
        print(json.dumps(index.stats(), indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    from elquery.base import run

    return run([register_artefacts], prog="python -m elquery.indexing", argv=argv)
