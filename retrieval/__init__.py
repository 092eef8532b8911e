"""Entity scoring and ranking over the fielded Lucene entity index (methods.md §4).

Candidate scoring (the linking hot path)::

    from elquery.kb.entity_index import EntityIndex
    from elquery.retrieval import MLMScorer
    scorer = MLMScorer(EntityIndex(path))                 # names 0.2 / content 0.8, lambda 0.1
    scorer.score_candidates("obama family", ["<dbpedia:Barack_Obama>", ...])   # {entity: log score}
    scorer.normalized_query_likelihood("obama family", ids)  # {entity: QueryLikelihood(log_score).score}
    score_each(index, [CandidateScoring(lm("title"), "obama", docids), ...])  # several texts/fields, one Java call

Whole-index ranking::

    from elquery.retrieval import Searcher, BM25, mlm, lm_dirichlet, prms, fsdm
    with Searcher(path) as searcher:
        searcher.rank("obama family", mlm(), k=100)        # [RankedEntity(rank, entity, score)]
        searcher.rank("obama family", BM25(k1=0.9, b=0.4))
        searcher.rank("obama family", prms())               # PRMS: P(f|t) field weights
        searcher.rank("obama family", fsdm())               # FSDM (sdm(): SDM on one field)
        searcher.rank(LinkedQuery("obama family", (("<dbpedia:Barack_Obama>", 0.9),)), sdm_elr())  # ELR
        searcher.score("obama family", ids)                # [EntityScore(entity, log_score, score)]
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.retrieval.models": ("BM25", "BM25F", "DEFAULT_K", "Dirichlet", "EntityLinkingRetrieval", "FieldModel",
        "JelinekMercer", "LanguageModel", "MODELS", "Model", "Rerank", "RetrievalModel", "SequentialDependence", "fsdm",
        "fsdm_elr", "lm", "lm_dirichlet", "mlm", "mlm_elr", "model_from_name", "prms", "sdm", "sdm_elr"),
    "elquery.formats.queries": ("QueryRecord", "read_queries"),
    "elquery.formats.trec_run": ("write_run",),
    "elquery.retrieval.scoring": ("AnalyzedQuery", "CandidateScoring", "EntityPrior", "EntityScorer",
        "LinkedQuery", "MLMScorer", "QueryLikelihood", "analyze", "score_each"),
    "elquery.retrieval.searcher": ("EntityScore", "RankedEntity", "Searcher"),
})

__all__ = [
    "BM25",
    "BM25F",
    "AnalyzedQuery",
    "CandidateScoring",
    "DEFAULT_K",
    "Dirichlet",
    "EntityLinkingRetrieval",
    "EntityPrior",
    "EntityScore",
    "EntityScorer",
    "FieldModel",
    "JelinekMercer",
    "LanguageModel",
    "LinkedQuery",
    "MLMScorer",
    "MODELS",
    "Model",
    "QueryLikelihood",
    "QueryRecord",
    "RankedEntity",
    "Rerank",
    "RetrievalModel",
    "Searcher",
    "SequentialDependence",
    "analyze",
    "fsdm",
    "fsdm_elr",
    "lm",
    "lm_dirichlet",
    "mlm",
    "mlm_elr",
    "model_from_name",
    "prms",
    "read_queries",
    "sdm",
    "score_each",
    "sdm_elr",
    "write_run",
]
