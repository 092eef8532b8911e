"""Retrieval experiments over entity linking in queries (methods.md §7-8): parameter sweeps with
a content-hashed run cache, session-aware cross-validation, significance tests and Markdown
tables in the layout of the ICTIR'15 tables, driven by a TOML experiment description.

Python API::

    from elquery.experiments import run_experiment
    result = run_experiment("elquery/experiments/configs/y-erd.toml", "out/y-erd")
    print(result.report)                     # the Markdown tables
    result.summary()                         # [{"task", "method", "metric", "value", "p_value"}, ...]
    result.rows()                            # per-query scores, one record per value
"""

from elquery.experiments.config import (CrossValidation, ExperimentConfig, MentionDetectionSpec,
                                        MethodSpec, TaskSpec, load_config)
from elquery.experiments.crossval import FoldChoice, choose, combine, cross_validate
from elquery.experiments.folds import Fold, leave_one_out, session_folds, session_of
from elquery.experiments.runner import ExperimentResult, MethodResult, run_experiment
from elquery.experiments.sweep import Setting, grid
from elquery.experiments.tables import Column, markdown_table

__all__ = [
    "FoldChoice", "Column", "CrossValidation", "ExperimentConfig", "ExperimentResult", "Fold",
    "MentionDetectionSpec", "MethodResult", "MethodSpec", "Setting", "TaskSpec", "choose",
    "combine", "cross_validate", "grid", "leave_one_out", "load_config", "markdown_table",
    "run_experiment", "session_folds", "session_of",
]
