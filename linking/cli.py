"""``elquery link``: entity linking in queries (methods.md §1, §3-5) into an elq, trec or jsonl run."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from elquery.base import ElqueryError
from elquery.files import check_output, is_stdio
from elquery.indexing.artefacts import REQUIRED, add_artefacts_argument, resolve_artefact_args
from elquery.linking.methods import DEFAULT_COMMONNESS_THRESHOLD, METHODS
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS

MAX_WORKERS = 256
from elquery.linking.output import FORMATS
from elquery.spark import add_engine_arguments, check_engine

if TYPE_CHECKING:
    from elquery.linking.linker import Linker
    from elquery.linking.params import LinkingParams
    from elquery.linking.tagme.annotator import TagmeLinker

SINGLE_QUERY_ID = "q1"
TAGME = "tagme"  # the TAGME baseline (methods.md §6); its options are in elquery.linking.tagme.cli


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``link`` to the top-level ``elquery`` commands."""
    from elquery.linking.linker import DEFAULT_GIF_THRESHOLD, DEFAULT_METHOD, DEMO_GIF_THRESHOLD
    from elquery.linking.tagme.cli import add_arguments as add_tagme_arguments

    def defaults(table: dict[str, float]) -> str:
        return ", ".join(f"{m} {table[m]:g}" for m in METHODS)

    link = commands.add_parser(
        "link",
        help="link entities in queries (interpretations and entity ranking)",
        description="Annotate queries with interpretations (sets of non-overlapping linked mentions) "
        "and rank the entities they mention: mention detection over all token spans (KB aliases and "
        "web surface forms with commonness >= c), candidate ranking (CMNS, MLM, MLMc, MLMcg), "
        "interpretation finding (GIF with threshold s, or TopRanked); methods.md §3-5. Without "
        "--index/--surface-forms the bundled demo knowledge base is used (built on first use). "
        "--method tagme runs the TAGME baseline (methods.md §6) over a --tagme artefact instead. "
        "Where a threshold comes from: its option if given, else the --params FILE of a tuned "
        "`elquery experiment` (its OUT/params.json) where it has the method, else the demo KB's "
        "defaults (without --index), else the method's default; the summary line on stderr says which.",
    )
    link.add_argument("query", nargs="?", help=f"one query (its qid is {SINGLE_QUERY_ID})")
    link.add_argument("--queries", metavar="FILE",
                      help="query file: .json {qid: query}, or TSV qid<TAB>query; - reads standard input")
    link.add_argument("--index", help="entity index directory (elquery index dbpedia)")
    link.add_argument("--surface-forms", metavar="SF.db", help="surface-form store (elquery index surface-forms)")
    add_artefacts_argument(link, "--index and --surface-forms (or --tagme, with --method tagme)")
    link.add_argument("--method", choices=(*METHODS, TAGME), default=DEFAULT_METHOD,
                      help=f"candidate ranking (default {DEFAULT_METHOD}), or the TAGME baseline (with --tagme DIR)")
    add_tagme_arguments(link)
    finding = link.add_mutually_exclusive_group()
    finding.add_argument("--gif-threshold", type=float, metavar="S",
                         help=f"GIF score threshold s (default: from --params FILE, else per method: "
                         f"{defaults(DEFAULT_GIF_THRESHOLD)}; on the demo KB: {defaults(DEMO_GIF_THRESHOLD)})")
    finding.add_argument("--top-ranked", action="store_true",
                         help="TopRanked baseline instead of GIF: one interpretation, the top entity")
    link.add_argument("--commonness-threshold", type=float, metavar="C",
                      help=f"commonness threshold c of web matches, '>=' (default: from --params FILE, else "
                      f"per method: {defaults(DEFAULT_COMMONNESS_THRESHOLD)})")
    link.add_argument("--params", metavar="FILE",
                      help="tuned thresholds: the params.json `elquery experiment` writes into its --out folder "
                      "(c and s per method, TAGME's rho_na), used where no option gives them")
    link.add_argument("--whitelist", metavar="FILE", help="keep only these entities (one id per line)")
    link.add_argument("--format", choices=FORMATS, default="elq",
                      help="elq: qid<TAB>score<TAB>entity... per interpretation; trec: entity ranking; "
                      "jsonl: mentions, spans, scores, interpretations and ranking (default elq)")
    link.add_argument("--out", metavar="RUN", help="file to write (default, or -: standard output)")
    link.add_argument("--tag", help="run tag of the trec format (default elquery-METHOD)")
    link.add_argument("--workers", type=int, default=1, metavar="N",
                      help="link a query file in at most N processes, this one and N-1 workers (default 1); "
                      "a file gets one per 25,000 queries (a worker's start-up and JIT warm-up cost more than it "
                      "saves on fewer)")
    add_engine_arguments(link, "each executor builds the linker once; every node must see the artefacts at their paths")
    link.add_argument("--max-query-tokens", type=int, default=DEFAULT_MAX_QUERY_TOKENS, metavar="N",
                      help="refuse a query longer than N normalized tokens, with a one-line error "
                      f"(default {DEFAULT_MAX_QUERY_TOKENS}; mention detection costs O(query length x longest "
                      "surface form))")
    link.set_defaults(func=_link)


def _link(args: argparse.Namespace) -> int:
    from elquery.linking.output import RunFormat, write_texts

    started = time.monotonic()
    if (args.query is None) == (args.queries is None):
        raise ElqueryError("give either one QUERY or --queries FILE")
    if args.query is not None:
        from elquery.retrieval.queries import check_query_text

        check_query_text(args.query)
    if args.method == TAGME:
        resolve_artefact_args(args, tagme=REQUIRED)
    else:
        resolve_artefact_args(args, index=REQUIRED, surface_forms=REQUIRED)
    if args.method != TAGME and (args.tagme or args.tagme_param):
        raise ElqueryError("--tagme and --tagme-param go with --method tagme")
    if args.method != TAGME and (args.index is None) != (args.surface_forms is None):
        raise ElqueryError("give --index and --surface-forms together (or neither, for the demo knowledge base)")
    if not 1 <= args.workers <= MAX_WORKERS:
        raise ElqueryError(f"--workers must be between 1 and {MAX_WORKERS}, got {args.workers}")
    if args.engine == "spark" and args.workers != 1:
        raise ElqueryError("--workers goes with --engine local; Spark's parallelism comes from --master")
    check_engine(args.engine, args.master)
    if args.commonness_threshold is not None and not 0 <= args.commonness_threshold <= 1:
        raise ElqueryError(f"--commonness-threshold must be between 0 and 1, got {args.commonness_threshold:g}")
    check_output(args.out)
    params = _params(args)
    if args.queries is not None:
        from elquery.retrieval.queries import read_queries

        queries = [(q.qid, q.text) for q in read_queries(args.queries)]
    else:
        queries = [(SINGLE_QUERY_ID, args.query)]
    with _linker(args, params) as linker:
        metadata = _metadata(args)
        run_format = RunFormat(args.format, args.tag or f"elquery-{args.method}", metadata)
        if args.engine == "spark":
            from elquery.linking.spark import link_spark

            texts = link_spark(linker.factory(), queries, run_format, args.master)
        else:
            texts = linker.link_many(queries, args.workers, run_format)
        count = write_texts(texts, args.out, args.format, metadata)
        described = linker.describe() + _origins(args, linker, params)
    if not is_stdio(args.out):
        print(f"linked {count} queries with {described} in {time.monotonic() - started:.1f} s -> {args.out}",
              file=sys.stderr)
    return 0


def _metadata(args: argparse.Namespace) -> dict | None:
    """The provenance of the artefacts given (docs/formats.md); none for the demo knowledge base."""
    from elquery.indexing.provenance import run_metadata

    artefacts = {"index": args.index, "surface_forms": args.surface_forms, "tagme": args.tagme}
    if all(path is None for path in artefacts.values()):
        return None
    return run_metadata("link", artefacts)


def _params(args: argparse.Namespace) -> LinkingParams | None:
    """The thresholds of ``--params FILE`` (checked before any work), if given."""
    from elquery.linking.params import load_params

    return None if args.params is None else load_params(args.params)


def _origins(args: argparse.Namespace, linker: Linker | TagmeLinker, params: LinkingParams | None) -> str:
    """`` [c: default, s: params file PATH]`` (TAGME: `` [rho_na: ...]``): where the linker's
    thresholds come from."""
    from elquery.linking.linker import Linker

    if isinstance(linker, Linker):
        return f" [{linker.config.origins()}]"
    if _tagme_rho_given(args):
        return " [rho_na: given]"
    tuned = params.of(TAGME) if params is not None else None
    return f" [rho_na: {params.origin if tuned is not None else 'default'}]"  # type: ignore[union-attr]


def _tagme_rho_given(args: argparse.Namespace) -> bool:
    return "rho_na" in {pair.partition("=")[0].strip().replace("-", "_") for pair in args.tagme_param}


def _linker(args: argparse.Namespace, params: LinkingParams | None = None) -> Linker | TagmeLinker:
    """The linker the options describe: TAGME, or a Linker over the given artefacts or the demo KB,
    with the thresholds of ``params`` where the options give none."""
    from elquery.linking.linker import Linker
    from elquery.linking.mentions import read_whitelist

    if args.method == TAGME:
        from elquery.linking.tagme.cli import linker as tagme_linker

        tuned = params.of(TAGME) if params is not None else None
        if tuned is not None and not _tagme_rho_given(args):
            args = argparse.Namespace(**{**vars(args), "tagme_param": [*args.tagme_param, f"rho_na={tuned.rho_na!r}"]})
        return tagme_linker(args)
    whitelist = read_whitelist(args.whitelist) if args.whitelist else None
    settings = dict(method=args.method, commonness_threshold=args.commonness_threshold,
                    gif_threshold=args.gif_threshold, top_ranked=args.top_ranked, whitelist=whitelist,
                    max_query_tokens=args.max_query_tokens, params=params)
    if args.index is None:
        return Linker.demo(**settings)
    return Linker(args.index, args.surface_forms, **settings)


def main(argv: Sequence[str] | None = None) -> int:
    from elquery.base import run

    return run([register], prog="python -m elquery.linking", argv=argv)
