"""``elquery index tagme``: the TAGME artefact's command (methods.md §6)."""

from __future__ import annotations

import argparse
import sys

from elquery.indexing.tagme.params import TagmeBuildParams


def register_index(index_commands: argparse._SubParsersAction) -> None:
    """Add ``tagme`` to the ``elquery index`` artefacts."""
    defaults = TagmeBuildParams()
    tagme = index_commands.add_parser(
        "tagme",
        help="build the TAGME artefact (anchor dictionary, in-link graph, document frequencies)",
        description="Build the TAGME artefact (methods.md §6) from DBpedia dumps: the anchor "
        "dictionary (anchor_text link counts, titles, titles cut at '(' or ',', redirects) in "
        "SQLite, the in-link graph of page_links as CSR arrays, and phrase document frequencies "
        "over long_abstracts (an approximation of full Wikipedia text; lp = link / df, 0 when df = 0).",
    )
    tagme.add_argument("--dumps", nargs="+", required=True, metavar="DIR_OR_FILE",
                       help="dump files or directories holding anchor_text_en, page_links_en, "
                       "long_abstracts_en and optionally labels_en, transitive_redirects_en")
    tagme.add_argument("--out", required=True, help="artefact directory to create")
    tagme.add_argument("--min-link", type=int, default=defaults.min_link, metavar="N",
                       help="drop surface forms linked fewer than N times (default %(default)s)")
    tagme.add_argument("--max-tokens", type=int, default=defaults.max_tokens, metavar="N",
                       help="longest surface form, in tokens (default %(default)s)")
    tagme.add_argument("--overwrite", action="store_true", help="replace an existing artefact at --out")
    tagme.set_defaults(func=_index_tagme)


def _index_tagme(args: argparse.Namespace) -> int:
    from elquery.indexing.tagme.build import build_tagme

    summary = build_tagme(args.dumps, args.out, TagmeBuildParams(args.min_link, args.max_tokens),
                          overwrite=args.overwrite)
    for line in [*summary.report.summary_lines(), *summary.warnings()]:
        print(line, file=sys.stderr)
    print(summary.line())
    return 0
