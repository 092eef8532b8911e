"""``elquery link``: entity linking in queries (methods.md §1, §3-5) into an elq, trec or jsonl run."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from elquery.base import COMMAND_SUMMARIES, ElqueryError, add_workers_argument, workers_of
from elquery.files import check_output, is_stdio
from elquery.formats.link_output import ENTITY_SCHEMES, FORMATS
from elquery.indexing.artefacts import REQUIRED, add_artefacts_argument, resolve_artefact_args
from elquery.kb.artefacts import KIND_OF, check_artefact
from elquery.kb.query_length import DEFAULT_MAX_QUERY_TOKENS, check_query_length, check_query_limit
from elquery.spark import add_engine_arguments, check_engine

if TYPE_CHECKING:
    from elquery.linking.batch import OpenLinker
    from elquery.linking.methods import LinkingMethod
    from elquery.linking.params import LinkingParams
    from elquery.registry import Parameter, Registry

SINGLE_QUERY_ID = "q1"
ARTEFACT_FLAGS = {
    "index": ("--index", "INDEX", "entity index directory (elquery index dbpedia)"),
    "surface_forms": ("--surface-forms", "SF.db", "surface-form store (elquery index surface-forms)"),
    "tagme": ("--tagme", "DIR", "TAGME artefact built by `elquery index tagme` (--method tagme without it: the demo "
              "knowledge base's, built on first use)"),
}
"""The artefact options: each method of the registry reads some of these kinds (its ``artefacts``)."""
KNOWLEDGE_BASE = ("index", "surface_forms")
"""The knowledge base of the Linker methods: its two artefacts are given together, or neither for
the demo knowledge base (CMNS reads the store only)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``link`` to the top-level ``elquery`` commands; the method options come from the
    registry (:data:`elquery.linking.methods.METHODS`)."""
    from elquery.linking.methods import DEFAULT_METHOD, METHODS

    ranking = ", ".join(m.display for m in METHODS if m.finders)
    own = " ".join(f"--method {m.name}: {m.summary}." for m in METHODS if not m.finders)
    link = commands.add_parser(
        "link",
        help=COMMAND_SUMMARIES["link"],
        description="Annotate queries with interpretations (sets of non-overlapping linked mentions) "
        "and rank the entities they mention: mention detection over all token spans (KB aliases and "
        f"web surface forms with commonness >= c), candidate ranking ({ranking}), "
        "interpretation finding (GIF with threshold s, or TopRanked); methods.md §3-5. Without "
        "--index/--surface-forms the bundled demo knowledge base is used (built on first use). "
        f"{own} Where a parameter comes from: its option if given, else the --params FILE of a tuned "
        "`elquery experiment` (its OUT/params.json) where it has the method, else the demo KB's "
        "defaults (without --index), else the method's default; the summary line on stderr says which.",
    )
    link.add_argument("query", nargs="?", help=f"one query (its qid is {SINGLE_QUERY_ID})")
    link.add_argument("--queries", metavar="FILE",
                      help="query file: .json {qid: query}, or TSV qid<TAB>query; - reads standard input")
    for flag, metavar, text in ARTEFACT_FLAGS.values():
        link.add_argument(flag, metavar=metavar, help=text)
    add_artefacts_argument(link, "--index and --surface-forms (or --tagme, with --method tagme)")
    link.add_argument("--method", type=METHODS.argument, choices=METHODS.names(), default=DEFAULT_METHOD, help=f"linking method "
                      f"(default {DEFAULT_METHOD}): " + "; ".join(f"{m.name}: {m.summary}" for m in METHODS))
    _add_parameter_arguments(link, METHODS)
    link.add_argument("--params", metavar="FILE",
                      help="tuned thresholds: the params.json `elquery experiment` writes into its --out folder "
                      "(c and s per method, TAGME's rho_na), used where no option gives them")
    link.add_argument("--whitelist", metavar="FILE", help="keep only these entities (one id per line)")
    link.add_argument("--format", choices=FORMATS, default="elq",
                      help="elq: qid<TAB>score<TAB>entity... per interpretation; trec: entity ranking; "
                      "jsonl: mentions, spans, scores, interpretations and ranking (default elq)")
    link.add_argument("--entity-ids", choices=ENTITY_SCHEMES, default="dbpedia", metavar="SCHEME",
                      help="the ids elq and trec write entities as: dbpedia (default), wikipedia (title), wikidata "
                      "(QID), freebase (mid) or pageid (Wikipedia page id), from the index's identifiers table "
                      "(elquery build); an entity without one keeps its DBpedia id, counted on stderr "
                      "(docs/identifiers.md)")
    link.add_argument("--out", metavar="RUN", help="file to write (default, or -: standard output)")
    link.add_argument("--tag", help="run tag of the trec format (default elquery-METHOD)")
    add_workers_argument(link, "link a query file in at most N processes, this one and N-1 workers; a file gets "
                         "one per 25,000 queries (a worker's start-up and JIT warm-up cost more than it saves on "
                         "fewer)")
    add_engine_arguments(link, "each executor builds the linker once; every node must see the artefacts at their paths")
    link.add_argument("--max-query-tokens", type=int, default=DEFAULT_MAX_QUERY_TOKENS, metavar="N",
                      help="refuse a query longer than N normalized tokens, with a one-line error "
                      f"(default {DEFAULT_MAX_QUERY_TOKENS}; mention detection costs O(query length x longest "
                      "surface form))")
    link.set_defaults(func=_link)


def _add_parameter_arguments(link: argparse.ArgumentParser, methods: Registry[LinkingMethod]) -> None:
    """The options of the methods' parameters: a flag per parameter (``--gif-threshold S``,
    ``--model MODEL``), the help naming each method's default (and the demo's); the finder flags
    (``--top-ranked``, exclusive with GIF's threshold); a method's ``NAME=VALUE`` option."""
    from elquery.linking.methods.method import SYMBOLS

    finder = link.add_mutually_exclusive_group()
    finder_parameters = {m.score_threshold for m in methods if m.finders}
    for name, owners in _flag_parameters(methods).items():
        parameter = owners[0][1]
        where = finder if name in finder_parameters else link
        where.add_argument(parameter.flag, metavar=SYMBOLS.get(name, name).upper(), help=_parameter_help(owners))
    finder.add_argument("--top-ranked", action="store_true",
                        help="TopRanked baseline instead of GIF: one interpretation, the top entity")
    for method in methods:
        if method.option is not None:
            defaults = ", ".join(f"{p.name}={p.default}" for p in method.parameters)
            link.add_argument(method.option, action="append", default=[], metavar="NAME=VALUE",
                              help=f"a {method.display} parameter of --method {method.name}, repeatable "
                              f"(defaults: {defaults})")


def _flag_parameters(methods: Registry[LinkingMethod]) -> dict[str, list[tuple[LinkingMethod, Parameter]]]:
    """Each parameter with a flag of its own, with the methods that have it."""
    found: dict[str, list[tuple[LinkingMethod, Parameter]]] = {}
    for method in methods:
        if method.option is None:
            for parameter in method.parameters:
                found.setdefault(parameter.name, []).append((method, parameter))
    return found


def _parameter_help(owners: list[tuple[LinkingMethod, Parameter]]) -> str:
    """``GIF score threshold s (default: from --params FILE, else per method: cmns 0.1, ...; on the
    demo KB: ...)``; a required parameter: ``(--method ltr; required)``."""
    first = owners[0][1]
    names = ", ".join(m.name for m, _ in owners)
    if first.required:
        return f"{first.help} (--method {names}; required)"
    tuned = " from --params FILE, else" if any(first.name in m.tuned for m, _ in owners) else ""
    text = f"{first.help} (default:{tuned} per method: " + ", ".join(f"{m.name} {_shown(p.default)}" for m, p in owners)
    if any(p.demo_default is not None for _, p in owners):
        text += "; on the demo KB: " + ", ".join(f"{m.name} {_shown(p.default_for(True))}" for m, p in owners)
    return text + ")"


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _link(args: argparse.Namespace) -> int:
    from elquery.linking.methods import METHODS
    from elquery.formats.link_output import RunFormat, unmapped, write_texts
    from elquery.kb.identifiers import entity_ids_of

    started = time.monotonic()
    method = METHODS.get(args.method)
    if (args.query is None) == (args.queries is None):
        raise ElqueryError("give either one QUERY or --queries FILE")
    if args.query is not None:
        from elquery.formats.queries import check_query_text

        check_query_length(check_query_text(args.query), check_query_limit(args.max_query_tokens))
    kinds = _artefact_kinds(method)
    resolve_artefact_args(args, **{kind: REQUIRED for kind in kinds})
    _check_options(args, method, kinds)
    if any(getattr(args, kind) is None for kind in kinds) and any(getattr(args, kind) for kind in kinds):
        raise ElqueryError("give --index and --surface-forms together (or neither, for the demo knowledge base)")
    for kind in kinds:  # each path given, before any work (a worker pool above all)
        if getattr(args, kind):
            check_artefact(getattr(args, kind), KIND_OF[kind])
    if args.engine == "spark" and args.workers is not None:
        raise ElqueryError("--workers goes with --engine local; Spark's parallelism comes from --master")
    check_engine(args.engine, args.master)
    params = _params(args)
    values = method.values(_given(args, method), params, demo=_demo(args, kinds))  # the registry checks them
    check_output(args.out)
    if args.queries is not None:
        from elquery.formats.queries import read_queries

        queries = [(q.qid, q.text) for q in read_queries(args.queries)]
        for qid, text in queries:  # all of them before any work
            check_query_length(text, check_query_limit(args.max_query_tokens), qid)
    else:
        queries = [(SINGLE_QUERY_ID, args.query)]
    ids = entity_ids_of(args.index)
    run_format = RunFormat(args.format, args.tag or f"elquery-{args.method}", None, ids, args.entity_ids)
    with _linker(args, params) as linker:
        metadata = _metadata(args, values.given.get("model"))
        run_format = RunFormat(args.format, run_format.tag, metadata, ids, args.entity_ids)
        if args.engine == "spark":
            from elquery.linking.spark import link_spark

            texts = link_spark(linker.factory(), queries, run_format, args.master)
        else:
            texts = linker.link_many(queries, workers_of(args), run_format)
        kept = [0]
        texts = _counting(texts, lambda text: unmapped(text, args.format, args.entity_ids), kept)
        count = write_texts(texts, args.out, args.format, metadata)
        if kept[0]:
            print(f"elquery link: {kept[0]} of the entities written have no {args.entity_ids} id; they keep their "
                  "DBpedia id", file=sys.stderr)
        shown = [name for name in method.tuned if not (args.top_ranked and name == method.score_threshold)]
        described = f"{linker.describe()} [{values.origins(shown)}]"
    if not is_stdio(args.out):
        print(f"linked {count} queries with {described} in {time.monotonic() - started:.1f} s -> {args.out}",
              file=sys.stderr)
    return 0


def _counting(texts: Iterable[str], count: Callable[[str], int], total: list[int]) -> Iterator[str]:
    """``texts``, adding ``count`` of each to ``total[0]``."""
    for text in texts:
        total[0] += count(text)
        yield text


def _artefact_kinds(method: LinkingMethod) -> tuple[str, ...]:
    """The artefact options of ``method``: the knowledge base's two (given together) if it reads
    either, and the others it reads."""
    kb = KNOWLEDGE_BASE if set(KNOWLEDGE_BASE) & set(method.artefacts) else ()
    return (*kb, *(kind for kind in ARTEFACT_FLAGS if kind in method.artefacts and kind not in KNOWLEDGE_BASE))


def _check_options(args: argparse.Namespace, method: LinkingMethod, kinds: tuple[str, ...]) -> None:
    """Every option given applies to ``method`` (its artefacts, parameters, option and finders)."""
    from elquery.linking.methods import METHODS, TOP_RANKED

    own = {p.name for p in method.parameters} if method.option is None else set()
    given = [ARTEFACT_FLAGS[kind][0] for kind in ARTEFACT_FLAGS if kind not in kinds and getattr(args, kind)]
    given += [owners[0][1].flag for name, owners in _flag_parameters(METHODS).items()
              if name not in own and getattr(args, name) is not None]
    given += [m.option for m in METHODS if m.option is not None and m.option != method.option
              and getattr(args, _attribute(m.option))]
    if args.top_ranked and TOP_RANKED not in method.finders:
        given.append("--top-ranked")
    if given:
        takes = f" ({method.display} takes {method.option} NAME=VALUE)" if method.option else ""
        raise ElqueryError(f"not options of --method {method.name}: {', '.join(given)}{takes}")


def _attribute(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def _given(args: argparse.Namespace, method: LinkingMethod) -> dict[str, str]:
    """The parameter values the options give ``method``, as texts (the registry parses them)."""
    if method.option is None:
        return {p.name: getattr(args, p.name) for p in method.parameters if getattr(args, p.name) is not None}
    names = [p.name for p in method.parameters]
    given = {}
    for pair in getattr(args, _attribute(method.option)):
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in names:
            raise ElqueryError(f"{method.option} {pair!r}: expected NAME=VALUE with NAME one of {', '.join(names)}")
        given[name] = value
    return given


def _demo(args: argparse.Namespace, kinds: tuple[str, ...]) -> bool:
    """True without artefact options: the demo knowledge base."""
    return all(getattr(args, kind) is None for kind in kinds)


def _metadata(args: argparse.Namespace, model: Path | None) -> dict | None:
    """The provenance of the artefacts given (docs/formats.md), with the file name and SHA-256 of
    the ``model`` a method scores with; none for the demo knowledge base."""
    from elquery.files import sha256_of
    from elquery.kb.provenance import run_metadata

    artefacts = {kind: getattr(args, kind) for kind in ARTEFACT_FLAGS}
    if all(path is None for path in artefacts.values()):
        return None
    metadata = run_metadata("link", artefacts)
    if model is not None:
        metadata["model"] = {"file": Path(model).name, "sha256": sha256_of(model)}
    return metadata


def _params(args: argparse.Namespace) -> LinkingParams | None:
    """The thresholds of ``--params FILE`` (checked before any work), if given."""
    from elquery.linking.params import load_params

    return None if args.params is None else load_params(args.params)


def _linker(args: argparse.Namespace, params: LinkingParams | None = None) -> OpenLinker:
    """The linker the options describe, over the given artefacts or the demo KB, with the
    parameters of ``params`` where the options give none."""
    from elquery.kb.identifiers import table_of_index
    from elquery.linking.mentions import read_whitelist
    from elquery.linking.methods import METHODS, LinkOptions
    from elquery.linking.methods.method import demo_artefacts

    method = METHODS.get(args.method)
    kinds = _artefact_kinds(method)
    demo = _demo(args, kinds)
    artefacts = demo_artefacts(method.artefacts) if demo else {kind: getattr(args, kind) for kind in kinds}
    whitelist = read_whitelist(args.whitelist, table_of_index(args.index)) if args.whitelist else None
    options = LinkOptions(args.top_ranked, whitelist, args.max_query_tokens, params, demo)
    return method.open(artefacts, _given(args, method), options)


def main(argv: Sequence[str] | None = None) -> int:
    from elquery.base import run

    return run([register], prog="python -m elquery.linking", argv=argv)
