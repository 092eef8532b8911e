"""Retrieval models (methods.md §4): plain parameter objects, and the registry of the named models
that ``elquery rank --model``, the service's ``/rank`` and the experiment configs run.

The model objects, one module per family:

* :mod:`~elquery.retrieval.models.language`: :class:`LanguageModel`, a mixture of per-field
  language models (MLM, Eq. 12-13) scored by the normalized query likelihood (Eq. 16);
  :func:`mlm`, :func:`lm`, :func:`lm_dirichlet` and :func:`prms` (PRMS: field weights P(f|t)).
* :mod:`~elquery.retrieval.models.bm25`: :class:`BM25` (one field), :class:`BM25F` (Lucene's
  CombinedFieldQuery), and :class:`Rerank` (BM25's top ``depth`` re-ranked by an exact model).
* :mod:`~elquery.retrieval.models.dependence`: :class:`SequentialDependence`, SDM (:func:`sdm`)
  and FSDM (:func:`fsdm`).
* :mod:`~elquery.retrieval.models.elr`: :class:`EntityLinkingRetrieval`, ELR over a term-based
  model (:func:`sdm_elr`, :func:`fsdm_elr`, :func:`mlm_elr`), the models that take links.

The registry: :data:`MODELS` holds a :class:`~elquery.retrieval.models.entry.RetrievalModel` per
name (its typed parameters as ``--param`` spells them, with defaults, ranges and help; whether it
needs links and an index with relations; how it is built), and every door builds models through
it: ``MODELS.get(name).build(params)`` (:func:`model_from_name`). Adding a model is its module (or
an entry in one) plus one line in :data:`MODELS`. :data:`DEFAULT_K` is the number of entities a
ranking holds unless told otherwise, everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elquery.base import ElqueryError
from elquery.registry import Parameter, Registry
from elquery.retrieval.models import bm25, dependence, elr, language
from elquery.retrieval.models.bm25 import BM25, BM25F, Rerank
from elquery.retrieval.models.dependence import (
    DEFAULT_LAMBDAS,
    DEFAULT_WINDOW,
    DependenceField,
    SequentialDependence,
    fsdm,
    sdm,
)
from elquery.retrieval.models.elr import (
    DEFAULT_ALPHA,
    DEFAULT_ELR_LAMBDAS,
    DEFAULT_MLM_ELR_LAMBDAS,
    DEFAULT_PREDICATES,
    EntityLinkingRetrieval,
    fsdm_elr,
    mlm_elr,
    sdm_elr,
)
from elquery.retrieval.models.entry import RetrievalModel, links_refused, parse_params
from elquery.retrieval.models.language import (
    DEFAULT_FIELD_WEIGHTS,
    DEFAULT_LAMBDA,
    DEFAULT_MU,
    Dirichlet,
    FieldModel,
    JelinekMercer,
    LanguageModel,
    Smoothing,
    lm,
    lm_dirichlet,
    mlm,
    prms,
)

ExactModel = LanguageModel | SequentialDependence | EntityLinkingRetrieval
Model = LanguageModel | SequentialDependence | BM25 | BM25F | Rerank | EntityLinkingRetrieval

DEFAULT_K = 1000
"""Entities per query of a ranking unless told otherwise: ``elquery rank --k``, ``/rank``'s ``k``
(within the service's bound), an experiment config's ``depth``, :meth:`Searcher.rank`; 1000, as
trec_eval and the TREC runs count."""

MAX_K = 100_000
"""The most entities a ranking may hold: bounds the work and the output of one query."""

K = Parameter("k", int, DEFAULT_K, f"entities per query, 1 to {MAX_K:,}")
"""k of a ranking: its type and default (its range is :func:`check_k`'s)."""


def check_k(value: object, most: int = MAX_K) -> int:
    """``value`` as k, the entities of a ranking: a whole number (a text is parsed) from 1 to ``most``
    (:data:`MAX_K`, or the service's own lower bound); otherwise one line, the same from every door
    (``elquery rank --k``, :meth:`Searcher.rank`, the batch and Spark rankings, ``/rank``)."""
    k: int = K.validate(value)
    most = min(most, MAX_K)
    if not 1 <= k <= most:
        raise ElqueryError(f"k must be between 1 and {most}, got {k}")
    return k


MODELS: Registry[RetrievalModel] = Registry("model")
"""The named retrieval models, in the order of help texts and documentation tables."""
for _entry in (language.MLM_ENTRY, language.LM_ENTRY, language.LM_DIRICHLET_ENTRY, bm25.BM25_ENTRY,
               bm25.BM25F_ENTRY, bm25.BM25_MLM_ENTRY, language.PRMS_ENTRY, dependence.SDM_ENTRY,
               dependence.FSDM_ENTRY, elr.SDM_ELR_ENTRY, elr.FSDM_ELR_ENTRY, elr.MLM_ELR_ENTRY):
    MODELS.register(_entry)
DEFAULT_MODEL = "mlm"
"""The model of a ranking that names none (``elquery rank``, ``/rank``, :meth:`Searcher.rank`)."""


def model_from_name(name: str, params: Mapping[str, Any]) -> Model:
    """The model called ``name`` with its parameters (``--param`` texts or values)."""
    return MODELS.get(name).build(params)


def model_fields(model: Model) -> tuple[str, ...]:
    """The text fields a model reads (the index scored must hold them)."""
    if isinstance(model, LanguageModel | SequentialDependence):
        return tuple(f.field for f in model.fields)
    if isinstance(model, BM25):
        return (model.field,)
    if isinstance(model, BM25F):
        return tuple(name for name, _ in model.field_weights)
    if isinstance(model, Rerank):
        return tuple(dict.fromkeys((*model_fields(model.first), *model_fields(model.then))))
    return model_fields(model.text)


__all__ = [
    "BM25",
    "BM25F",
    "DEFAULT_ALPHA",
    "DEFAULT_ELR_LAMBDAS",
    "DEFAULT_FIELD_WEIGHTS",
    "DEFAULT_K",
    "DEFAULT_LAMBDA",
    "DEFAULT_LAMBDAS",
    "DEFAULT_MLM_ELR_LAMBDAS",
    "DEFAULT_MODEL",
    "DEFAULT_MU",
    "DEFAULT_PREDICATES",
    "DEFAULT_WINDOW",
    "K",
    "MAX_K",
    "MODELS",
    "DependenceField",
    "Dirichlet",
    "EntityLinkingRetrieval",
    "ExactModel",
    "FieldModel",
    "JelinekMercer",
    "LanguageModel",
    "Model",
    "RetrievalModel",
    "Rerank",
    "SequentialDependence",
    "Smoothing",
    "check_k",
    "fsdm",
    "fsdm_elr",
    "links_refused",
    "lm",
    "lm_dirichlet",
    "mlm",
    "mlm_elr",
    "model_fields",
    "model_from_name",
    "parse_params",
    "prms",
    "sdm",
    "sdm_elr",
]
