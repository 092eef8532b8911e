"""``elquery evaluate`` with ``--index INDEX`` or ``--artefacts DIR``: qrels and runs written in any
identifier scheme (docs/identifiers.md), every id resolved to its DBpedia id through the index's
identifiers table by the experiments' readers (:class:`~elquery.experiments.entity_ids.ExperimentIds`)
before :mod:`elquery.evaluation`, which compares ids as they are, scores them. Without either
option the command reads its files as written (:data:`elquery.evaluation.cli.AS_WRITTEN`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.evaluation import cli as evaluation_cli

COMMAND = "elquery evaluate"


def register(subparsers: Any) -> None:
    """``elquery evaluate elq|rank|compare`` (:func:`elquery.evaluation.cli.register`) with the
    options naming the identifiers table."""
    evaluation_cli.register(subparsers, options=_add_options, readers=readers)


def _add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--index", metavar="INDEX",
                       help="entity index directory (elquery build) whose identifiers table resolves the "
                       "qrels' and runs' ids written in any scheme (Wikidata QIDs, Freebase mids, "
                       "Wikipedia URLs, titles and page ids) to DBpedia ids; without it, ids are "
                       "compared as written")
    group.add_argument("--artefacts", metavar="DIR",
                       help="artefacts folder written by `elquery build` (index, surface-forms.db, tagme), "
                       "in place of --index")


def readers(args: argparse.Namespace) -> evaluation_cli.Readers:
    """The readers of the command's files: as written without ``--index``/``--artefacts``, else
    resolving through the index's identifiers table (one line on stderr per file whose ids name
    no entity); an index without a table is an error."""
    if args.index is None and args.artefacts is None:
        return evaluation_cli.AS_WRITTEN
    from elquery.kb.identifiers import table_of_index, table_path

    index = Path(args.index) if args.index is not None else _index_of(Path(args.artefacts))
    if table_of_index(index) is None:
        raise ElqueryError(f"{table_path(index)}: no identifiers table in this index (build it with `elquery build`, "
                           "stage identifiers)")
    return resolving_readers(index)


def resolving_readers(index: Path, notes: list[str] | None = None,
                      named: Callable[[str], str] = str) -> evaluation_cli.Readers:
    """Readers resolving ids through the identifiers table of ``index``; the note on a file's ids
    that name no entity, the file called ``named(path)``, is printed on stderr after ``elquery
    evaluate: ``, or appended to ``notes`` when given (the MCP tool's warnings)."""
    from elquery.experiments.entity_ids import ExperimentIds

    ids = ExperimentIds(index, command=COMMAND if notes is None else None, notes=notes)
    return evaluation_cli.Readers(elq=lambda path: ids.elq(Path(path), Path(named(path))),
                                  trec_qrels=lambda path: ids.trec_qrels(Path(path), Path(named(path))),
                                  trec_run=lambda path: ids.trec_run(Path(path), Path(named(path))))


def _index_of(artefacts: Path) -> Path:
    from elquery.indexing.artefacts import REQUIRED, artefact_paths

    return artefact_paths(artefacts, index=REQUIRED)["index"]
