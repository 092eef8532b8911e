"""Evaluation of elquery runs against qrels (methods.md section 7).

Reads files only; imports nothing from the indexing, retrieval or linking packages.
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.evaluation.clustering": ("ClusteringScores", "f_alpha", "inverse_purity", "macro_clustering",
        "purity", "score_clustering"),
    "elquery.evaluation.correlation": ("Correlation", "spearman"),
    "elquery.evaluation.errors": ("EvaluationInputError",),
    "elquery.evaluation.interpretation": ("EntitySet", "InterpretationEvaluation", "QueryScores", "entity_scores",
        "evaluate_interpretations", "lean_scores", "score_query", "strict_scores"),
    "elquery.evaluation.mentions": ("MentionRecall", "mention_detection_recall"),
    "elquery.evaluation.rank": ("RankEvaluation", "evaluate_rankings", "parse_metric", "relevant_entities"),
    "elquery.evaluation.readers": ("read_elq", "read_jsonl", "read_trec_qrels", "read_trec_run"),
    "elquery.evaluation.setmetrics": ("PRF", "Aggregate", "f_measure", "macro_average", "set_prf"),
    "elquery.evaluation.significance": ("Comparison", "PairedTest", "compare", "paired_t_test",
        "randomization_test"),
    "elquery.evaluation.tagme_metrics": ("TagmeScores", "annotation_scores", "mentions_match", "topics_scores"),
    "elquery.evaluation.wikification": ("NOT_IN_KB", "WikificationScores", "wikification_scores"),
})

__all__ = [
    "NOT_IN_KB", "PRF", "Aggregate", "ClusteringScores", "Comparison", "Correlation",
    "EvaluationInputError", "EntitySet", "InterpretationEvaluation", "MentionRecall",
    "PairedTest", "QueryScores", "RankEvaluation", "TagmeScores", "WikificationScores",
    "annotation_scores", "compare", "entity_scores", "evaluate_interpretations",
    "evaluate_rankings", "f_alpha", "f_measure", "inverse_purity", "lean_scores",
    "macro_average", "macro_clustering", "mention_detection_recall", "mentions_match",
    "paired_t_test", "parse_metric", "purity", "randomization_test", "read_elq", "read_jsonl",
    "read_trec_qrels", "read_trec_run", "relevant_entities", "score_clustering", "score_query",
    "set_prf", "spearman", "strict_scores", "topics_scores", "wikification_scores",
]
