"""Retrieval experiments over entity linking in queries and entity retrieval (methods.md §4,
§7-8): parameter sweeps with a content-hashed run cache, session-aware or given-fold
cross-validation, significance tests and Markdown tables in the layout of the ICTIR'15 tables and
of the DBpedia-Entity v2 paper (per query category), driven by a TOML experiment description.

Python API::

    from elquery.experiments import run_experiment
    result = run_experiment("elquery/experiments/configs/y-erd.toml", "out/y-erd")
    print(result.report)                     # the Markdown tables
    result.summary()                         # [{"task", "method", "metric", "value", "p_value"}, ...]
    result.rows()                            # per-query scores, one record per value
    result.params                            # the tuned thresholds, also in out/y-erd/params.json

    config = load_config("elquery/experiments/configs/sample-erd-dev.toml", artefacts="sample")  # an `elquery build` folder

``Linker(index, surface_forms, params="out/y-erd/params.json")`` links with the tuned thresholds.
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.experiments.config": ("Category", "CrossValidation", "ExperimentConfig", "MentionDetectionSpec",
        "MethodSpec", "RetrievalTaskSpec", "TaskSpec", "load_config"),
    "elquery.experiments.crossval": ("FoldChoice", "choose", "combine", "cross_validate"),
    "elquery.experiments.folds": ("Fold", "given_folds", "leave_one_out", "session_folds", "session_of"),
    "elquery.experiments.runner": ("ExperimentResult", "MethodResult", "run_experiment"),
    "elquery.experiments.sweep": ("Setting", "grid"),
    "elquery.experiments.tables": ("Column", "category_columns", "markdown_table"),
})

__all__ = [
    "Category", "FoldChoice", "Column", "CrossValidation", "ExperimentConfig", "ExperimentResult", "Fold",
    "MentionDetectionSpec", "MethodResult", "MethodSpec", "Setting", "TaskSpec", "choose",
    "RetrievalTaskSpec", "category_columns", "combine", "cross_validate", "given_folds", "grid",
    "leave_one_out", "load_config", "markdown_table", "run_experiment", "session_folds", "session_of",
]
