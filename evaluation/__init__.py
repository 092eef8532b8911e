"""Evaluation of elquery runs against qrels (methods.md section 7).

Reads files only; imports nothing from the indexing, retrieval or linking packages.
"""

from elquery.evaluation.clustering import (ClusteringScores, f_alpha, inverse_purity, macro_clustering,
                                   purity, score_clustering)
from elquery.evaluation.correlation import Correlation, spearman
from elquery.evaluation.errors import EvaluationInputError
from elquery.evaluation.interpretation import (EntitySet, InterpretationEvaluation, QueryScores,
                                       entity_scores, evaluate_interpretations, lean_scores,
                                       score_query, strict_scores)
from elquery.evaluation.mentions import MentionRecall, mention_detection_recall
from elquery.evaluation.rank import RankEvaluation, evaluate_rankings, parse_metric, relevant_entities
from elquery.evaluation.readers import read_elq, read_jsonl, read_trec_qrels, read_trec_run
from elquery.evaluation.setmetrics import PRF, Aggregate, f_measure, macro_average, set_prf
from elquery.evaluation.significance import Comparison, PairedTest, compare, paired_t_test, randomization_test
from elquery.evaluation.tagme_metrics import TagmeScores, annotation_scores, mentions_match, topics_scores
from elquery.evaluation.wikification import NOT_IN_KB, WikificationScores, wikification_scores

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
