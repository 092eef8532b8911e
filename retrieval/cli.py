"""``elquery rank``: batch-rank a query file against an entity index into a TREC run."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Sequence

from elquery.base import COMMAND_SUMMARIES, ElqueryError, add_workers_argument, workers_of
from elquery.files import check_output, is_stdio
from elquery.formats.link_output import ENTITY_SCHEMES
from elquery.indexing.artefacts import REQUIRED, add_artefacts_argument, resolve_artefact_args
from elquery.kb.artefacts import check_artefact
from elquery.kb.query_length import DEFAULT_MAX_QUERY_TOKENS, check_query_length, check_query_limit
from elquery.retrieval.models import DEFAULT_K, DEFAULT_MODEL, MAX_K, MODELS, check_k
from elquery.retrieval.models.describe import help_line
from elquery.spark import add_engine_arguments, check_engine


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``rank`` to the top-level ``elquery`` commands."""
    models = "; ".join(help_line(model) for model in MODELS)
    rank = commands.add_parser(
        "rank",
        help=COMMAND_SUMMARIES["rank"],
        description="Rank the entities of an index for every query of a TSV (qid<TAB>query) or JSON "
        "({qid: query}) file and write a TREC run (qid Q0 entity rank score tag), with the index's provenance "
        "beside it in RUN.meta.json. Language-model "
        "scores are the normalized query likelihood (methods.md §4, Eq. 16); ties are ordered by "
        f"entity id. Models: {models}.",
    )
    rank.add_argument("--index", help="entity index directory (elquery index dbpedia)")
    add_artefacts_argument(rank, "--index")
    rank.add_argument("--queries", required=True, help="query file: .json, or TSV qid<TAB>query; - reads standard input")
    rank.add_argument("--model", default=DEFAULT_MODEL, type=MODELS.argument, choices=MODELS.names(),
                      help=f"retrieval model (default {DEFAULT_MODEL})")
    rank.add_argument("--k", type=_k, default=DEFAULT_K, help=f"entities per query, 1 to {MAX_K} (default {DEFAULT_K})")
    rank.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                      help="model parameter, repeatable (see the model list above)")
    rank.add_argument("--out", required=True, help="TREC run file to write; - writes standard output")
    rank.add_argument("--tag", default=None, help="run tag (default elquery-MODEL)")
    rank.add_argument("--entity-ids", choices=ENTITY_SCHEMES, default="dbpedia", metavar="SCHEME",
                      help="the ids the run writes entities as: dbpedia (default), wikipedia (title), wikidata (QID), "
                      "freebase (mid) or pageid (Wikipedia page id), from the index's identifiers table (elquery "
                      "build); an entity without one keeps its DBpedia id, counted on stderr (docs/identifiers.md)")
    rank.add_argument("--links", metavar="FILE", default=None,
                      help=f"linked entities of the queries for the ELR models ({', '.join(_link_takers())}): TSV "
                      "qid<TAB>entity<TAB>score, JSON lines {qid, links}, or `elquery link --format jsonl` output")
    add_workers_argument(rank, "worker processes ranking queries in parallel", former="--threads")
    rank.add_argument("--max-query-tokens", type=int, default=DEFAULT_MAX_QUERY_TOKENS, metavar="N",
                      help="refuse a query file holding a query longer than N normalized tokens, with a one-line "
                      f"error (default {DEFAULT_MAX_QUERY_TOKENS}, as elquery link and the service)")
    add_engine_arguments(rank, "each executor opens the index once; every node must see --index at its path")
    rank.set_defaults(func=_rank)


def _k(text: str) -> int:
    """``--k``: :func:`~elquery.retrieval.models.check_k`, its one line as argparse's error of the option."""
    try:
        return check_k(text)
    except ElqueryError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _link_takers() -> list[str]:
    return [model.name for model in MODELS if model.needs_links]


def _rank(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from elquery.retrieval.batch import rank_many
    from elquery.retrieval.models import parse_params
    from elquery.formats.queries import read_queries
    from elquery.formats.trec_run import Ranked, in_scheme, write_run
    from elquery.kb.identifiers import entity_ids_of

    started = time.monotonic()
    entry = MODELS.get(args.model)
    model = entry.build(parse_params(args.param))
    entry.check_links(args.links is not None)
    if args.links is not None and args.engine == "spark":
        raise ElqueryError("--links goes with --engine local")
    resolve_artefact_args(args, index=REQUIRED)
    if args.index is None:
        raise ElqueryError("give --index DIR or --artefacts DIR")
    check_artefact(args.index, "entity index")
    if args.engine == "spark" and args.workers is not None:
        raise ElqueryError("--workers goes with --engine local; Spark's parallelism comes from --master")
    check_engine(args.engine, args.master)
    limit = check_query_limit(args.max_query_tokens)
    check_output(args.out)
    ids = entity_ids_of(args.index)
    if args.entity_ids != "dbpedia" and ids is None:
        raise ElqueryError(f"--entity-ids {args.entity_ids}: the entity index has no identifiers table (build it "
                           "with `elquery build`, stage identifiers)")
    queries = read_queries(args.queries)
    for query in queries:  # all of them before any work
        check_query_length(query.text, limit, query.qid)
    if args.links is not None:
        from elquery.retrieval.links import with_links

        queries = with_links(queries, args.links, args.index)
    with tqdm(total=len(queries), desc="ranking", unit="query", disable=None) as progress:
        ranked: Iterable[tuple[str, Iterable[Ranked]]]
        if args.engine == "spark":
            from elquery.retrieval.spark import rank_spark

            ranked = rank_spark(args.index, queries, model, args.k, args.master, progress.update)
        else:
            ranked = rank_many(args.index, queries, model, args.k, workers_of(args), progress.update)
        missing = [0]
        if args.entity_ids != "dbpedia":
            assert ids is not None
            scheme = args.entity_ids
            ranked = in_scheme(ranked, lambda entities: {e: i.scheme(scheme) for e, i in ids(entities).items()},
                               missing)
        lines = write_run(args.out, ranked, args.tag or f"elquery-{args.model}")
    if missing[0]:
        print(f"elquery rank: {missing[0]} of the entities written have no {args.entity_ids} id; they keep their "
              "DBpedia id", file=sys.stderr)
    if not is_stdio(args.out):
        from elquery.formats.run_metadata import write_sidecar
        from elquery.kb.provenance import run_metadata

        write_sidecar(args.out, run_metadata("rank", {"index": args.index}))
    print(f"ranked {len(queries)} queries ({lines} lines) with {args.model} in {time.monotonic() - started:.1f} s "
          f"-> {args.out}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from elquery.base import run

    return run([register], prog="python -m elquery.retrieval", argv=argv)
