"""``elquery ltr``: learning to rank for ELQ (methods.md §9): ``features`` (a features file of the
candidate pairs of some queries) and ``train`` (a random-forest model, saved as ONNX).

Start-up imports argparse only; each command imports its work when it runs."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from elquery.base import COMMAND_SUMMARIES, ElqueryError, add_workers_argument, positive_int, workers_of
from elquery.files import check_input, check_output
from elquery.indexing.artefacts import REQUIRED, add_artefacts_argument, resolve_artefact_args

DEFAULT_COMMONNESS_THRESHOLD = 0.1  # methods.md §9: the ltr entry's default (a test compares; not imported, for start-up)
FORMATS = ("tsv", "letor")


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``ltr`` (``features``, ``train``) to the top-level ``elquery`` commands."""
    ltr = commands.add_parser(
        "ltr", help=COMMAND_SUMMARIES["ltr"],
        description="Learning to rank for entity linking in queries (ECIR 2017): the 28 features of every "
        "candidate (mention, entity) pair, and a random-forest model trained on them.")
    actions = ltr.add_subparsers(dest="ltr_command", required=True, metavar="ACTION")
    features = actions.add_parser(
        "features", help="write the features of every candidate pair of some queries",
        description="One row per candidate (mention, entity) pair of each query (commonness >= c): qid, mention, "
        "its character offsets, entity, label (1 if the entity is in some ground-truth interpretation, from "
        "--qrels) and the 28 features of methods.md §9. Needs an index built with the LTR fields and a "
        "surface-form store with KB aliases. FEATURES.meta.json records the artefacts' provenance ids, "
        "which a model trained on the file keeps.")
    features.add_argument("--queries", metavar="FILE", required=True,
                          help="query file: .json {qid: query}, or TSV qid<TAB>query")
    features.add_argument("--qrels", metavar="QRELS",
                          help="ELQ ground truth (qrels-elq.txt: qid<TAB>score<TAB>entity... per interpretation) "
                          "for the label column, its entities in any id scheme (DBpedia, Wikipedia URL, Wikidata, "
                          "Freebase, page id: resolved through the index's identifiers table); without it the labels "
                          "are empty (tsv) or 0 (letor)")
    features.add_argument("--index", help="entity index directory (elquery index dbpedia)")
    features.add_argument("--surface-forms", metavar="SF.db", help="surface-form store (elquery index surface-forms)")
    add_artefacts_argument(features, "--index and --surface-forms")
    features.add_argument("--commonness-threshold", type=float, metavar="C", default=DEFAULT_COMMONNESS_THRESHOLD,
                          help=f"candidates are the pairs with commonness >= C (default {DEFAULT_COMMONNESS_THRESHOLD:g})")
    features.add_argument("--format", choices=FORMATS, default="tsv",
                          help="tsv: header row and named columns (what `elquery ltr train` reads); letor: "
                          "SVMlight/LETOR lines (RankLib, LightGBM, XGBoost) with the names in a header comment")
    features.add_argument("--out", metavar="FEATURES", required=True, help="features file to write")
    features.add_argument("--max-query-tokens", type=positive_int, default=1000, metavar="N",
                          help="refuse a query longer than N normalized tokens (default 1000)")
    features.set_defaults(func=_features)

    train = actions.add_parser(
        "train", help="train the random-forest model on a features file",
        description="Fit scikit-learn's RandomForestRegressor on the labelled TSV features file (label 1 for the "
        "entities of the ground truth) and save it as ONNX, with the feature names, parameters, seed, the "
        "training file's SHA-256 and the artefacts' provenance ids. Deterministic for a seed.")
    train.add_argument("--features", metavar="FEATURES", required=True,
                       help="labelled TSV features file (elquery ltr features --qrels)")
    train.add_argument("--out", metavar="MODEL", required=True, help="model file to write (ONNX)")
    train.add_argument("--trees", type=positive_int, default=1000, metavar="N", help="trees in the forest (default 1000)")
    train.add_argument("--max-features", type=positive_int, default=3, metavar="N",
                       help="features tried per split (default 3)")
    train.add_argument("--seed", type=int, default=1, metavar="N", help="random seed (default 1)")
    add_workers_argument(train, "train the trees in N threads (the model is the same for any N)")
    train.set_defaults(func=_train)

    info = actions.add_parser(
        "info", help="print what a model was trained on, and check it against artefacts",
        description="Print a model's metadata (features, parameters, seed, training data, the artefacts' "
        "provenance ids) as JSON; with --artefacts (or --index and --surface-forms), refuse it unless it was "
        "trained on features of those artefacts, as linking with it would.")
    info.add_argument("model", metavar="MODEL", help="model file (elquery ltr train)")
    info.add_argument("--index", help="entity index directory the model will score features of")
    info.add_argument("--surface-forms", metavar="SF.db", help="surface-form store the model will score features of")
    add_artefacts_argument(info, "--index and --surface-forms")
    info.set_defaults(func=_info)


def _features(args: argparse.Namespace) -> int:
    from elquery.formats.run_metadata import sidecar_path, write_sidecar
    from elquery.kb.provenance import run_metadata
    from elquery.files import atomic_output, sha256_of
    from elquery.linking.ltr.feature_file import QueryFeatures, labels_of, read_ground_truth, write_features
    from elquery.linking.ltr.features import FEATURES, FeatureExtractor
    from elquery.linking.methods.ltr import COMMONNESS, LTR
    from elquery.formats.queries import read_queries
    from elquery.kb.identifiers import WrittenIds, table_of_index

    started = time.monotonic()
    resolve_artefact_args(args, index=REQUIRED, surface_forms=REQUIRED)
    if args.index is None or args.surface_forms is None:
        raise ElqueryError("give --index and --surface-forms, or --artefacts")
    COMMONNESS.validate(args.commonness_threshold, LTR.name)  # the registry's range and line, before any work
    check_output(args.out)
    if args.out == "-":
        raise ElqueryError("--out must be a file (its .meta.json records the artefacts the features came from)")
    queries = read_queries(args.queries)
    ids = WrittenIds(table_of_index(args.index))  # qrels ids in any scheme, resolved (docs/identifiers.md)
    truth = read_ground_truth(args.qrels, ids) if args.qrels else None
    if truth is not None:
        missing = [q.qid for q in queries if q.qid not in truth]
        if missing:
            raise ElqueryError(f"{args.qrels}: {len(missing)} of the {len(queries)} queries are not in the qrels "
                               f"(first: {missing[0]}); give the qrels of this query file")
        note = ids.note(args.qrels)
        if note is not None:
            print(f"elquery ltr features: {note}", file=sys.stderr)
    metadata = run_metadata("ltr features", {"index": args.index, "surface_forms": args.surface_forms})
    with FeatureExtractor(args.index, args.surface_forms, args.commonness_threshold, args.max_query_tokens) as extractor:
        extracted = []
        for query in queries:
            pairs, matrix = extractor.extract(query.text)
            labels = None if truth is None else labels_of(query.qid, pairs, truth)
            extracted.append(QueryFeatures(query.qid, pairs, matrix, labels))
    out = Path(args.out)
    with atomic_output(out) as stream:
        rows = write_features(stream, extracted, args.format, truth is not None)
    try:
        write_sidecar(out, {
            **metadata, "format": args.format, "features": list(FEATURES), "commonness_threshold": args.commonness_threshold,
            "rows": rows, "queries": {"file": Path(args.queries).name, "sha256": sha256_of(args.queries), "count": len(queries)},
            "qrels": None if args.qrels is None else {"file": Path(args.qrels).name, "sha256": sha256_of(args.qrels)},
        })
    except BaseException:
        out.unlink(missing_ok=True)
        sidecar_path(out).unlink(missing_ok=True)
        raise
    print(f"wrote {rows} candidate pairs of {len(queries)} queries in {time.monotonic() - started:.1f} s -> {out}",
          file=sys.stderr)
    return 0


def _train(args: argparse.Namespace) -> int:
    from elquery.formats.run_metadata import read_sidecar
    from elquery.linking.ltr.feature_file import read_features
    from elquery.linking.ltr.features import FEATURES
    from elquery.linking.ltr.model import MAX_TREES, model_bytes, new_info, train_forest, write_model

    started = time.monotonic()
    if args.trees > MAX_TREES:
        raise ElqueryError(f"--trees must be at most {MAX_TREES}, got {args.trees}")
    if args.max_features > len(FEATURES):
        raise ElqueryError(f"--max-features must be at most {len(FEATURES)} (the features), got {args.max_features}")
    check_input(args.features, "features file")
    check_output(args.out)
    if args.out == "-":
        raise ElqueryError("--out must be a file")
    sidecar = read_sidecar(args.features)
    if sidecar.get("format", "tsv") != "tsv":
        raise ElqueryError(f"{args.features}: a {sidecar['format']} features file; train reads the tsv format")
    table = read_features(args.features)
    forest = train_forest(table.matrix, table.labels, args.trees, args.max_features, args.seed, workers_of(args))
    training = {"file": table.path.name, "sha256": table.sha256, "rows": len(table.labels), "queries": table.queries,
                "positives": int(table.labels.sum())}
    info = new_info(forest, training, sidecar.get("artefacts", {"index": None, "surface_forms": None}),
                    sidecar.get("commonness_threshold"))
    write_model(args.out, model_bytes(forest, info))
    print(f"trained {args.trees} trees on {len(table.labels)} rows of {table.queries} queries in "
          f"{time.monotonic() - started:.1f} s -> {args.out}", file=sys.stderr)
    return 0


def _info(args: argparse.Namespace) -> int:
    import json

    from elquery.linking.ltr.model import LtrModel

    resolve_artefact_args(args, index=REQUIRED, surface_forms=REQUIRED)
    given = {name: path for name, path in (("index", args.index), ("surface_forms", args.surface_forms)) if path}
    info = LtrModel.read_info(args.model, artefacts=given or None)
    print(json.dumps(json.loads(info.to_json()), indent=1, sort_keys=True))
    return 0

