"""ELR (Hasibi, Balog and Bratsberg, ICTIR 2016; methods.md §4): a term-based model plus a
component matching the query's linked entities against each entity's related entities (the
index's ``relations`` field): :func:`sdm_elr`, :func:`fsdm_elr`, :func:`mlm_elr`, the registry's
``sdm-elr``, ``fsdm-elr`` and ``mlm-elr``, the models that take links (scored by
:mod:`elquery.retrieval.elr`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from elquery.base import ElqueryError
from elquery.registry import Parameter
from elquery.retrieval.models.dependence import (
    COMPONENTS,
    DEFAULT_LAMBDAS,
    FIELD_PARAMETERS,
    SDM_MU,
    WINDOW,
    SequentialDependence,
    fsdm,
    fsdm_of,
    sdm,
    sdm_of,
)
from elquery.retrieval.models.entry import RetrievalModel, Values
from elquery.retrieval.models.language import FIELD, MIXTURE_PARAMETERS, LanguageModel, mixture_of, mlm

DEFAULT_ELR_LAMBDAS = (0.8, 0.05, 0.05, 0.1)
DEFAULT_MLM_ELR_LAMBDAS = (0.9, 0.0, 0.0, 0.1)
DEFAULT_ALPHA = 0.1
DEFAULT_PREDICATES = 10


@dataclass(frozen=True)
class EntityLinkingRetrieval:
    """ELR (Hasibi, Balog and Bratsberg, ICTIR 2016) over a term-based model ``text``:

    score(e, q) = lambda_T/|T| sum_i f_T(q_i, e) + lambda_O/|O| sum_i f_O(q_i q_i+1, e)
                  + lambda_U/|U| sum_i f_U(q_i q_i+1, e) + lambda_E sum_{e_i in E(q)} w(e_i) f_E(e_i, e),

    f_T, f_O, f_U those of SDM/FSDM (``text``'s own lambdas are replaced by these), |T| = n query
    terms, |O| = |U| = n - 1; for a language model ``text``, the first three are lambda_T times its
    Eq. 16 score (lambda_O = lambda_U = 0). w(e_i) = s(e_i) / sum_j s(e_j), s the linker's score;

    f_E(e_i, e) = log sum_{f in F(e_i)} P(f|e_i) [(1 - alpha) 1(e_i in f(e)) + alpha df_f(e_i) / N_f],

    f(e) the entities e relates to through predicate f, df_f(e_i) the entities whose f holds e_i,
    N_f those with a non-empty f, F(e_i) the ``predicates`` predicates of highest df_f(e_i) (ties
    in IRI order), P(f|e_i) proportional to df_f(e_i) / |C_f| * N_f (|C_f| = sum_e |f(e)|). With
    ``predicates`` 0, one field instead: R(e), all the related entities, P = 1 (methods.md §4)."""

    text: LanguageModel | SequentialDependence
    lambdas: tuple[float, float, float, float] = DEFAULT_ELR_LAMBDAS
    alpha: float = DEFAULT_ALPHA
    predicates: int = 0
    name: str = "sdm-elr"

    def __post_init__(self) -> None:
        if len(self.lambdas) != 4 or any(not (x >= 0 and math.isfinite(x)) for x in self.lambdas) or not any(self.lambdas):
            raise ElqueryError(f"the four ELR lambdas must be non-negative, not all 0, got {self.lambdas}")
        if isinstance(self.text, LanguageModel) and (self.lambdas[1] or self.lambdas[2]):
            raise ElqueryError("a language model has no window components: lambda.O and lambda.U must be 0")
        if not 0 < self.alpha <= 1:
            raise ElqueryError(f"the ELR smoothing alpha must be in (0, 1], got {self.alpha}")
        if isinstance(self.predicates, bool) or not isinstance(self.predicates, int) or self.predicates < 0:
            raise ElqueryError(f"the number of ELR predicate fields must be a whole number >= 0, got {self.predicates}")



def sdm_elr(text: SequentialDependence | None = None, lambdas: tuple[float, float, float, float] = DEFAULT_ELR_LAMBDAS,
            alpha: float = DEFAULT_ALPHA, predicates: int = 0) -> EntityLinkingRetrieval:
    """SDM+ELR: :func:`sdm` (its lambdas replaced) plus the entity component (0.8/0.05/0.05/0.1)
    on the one field of all related entities, as SDM matches one text field."""
    return EntityLinkingRetrieval(text or sdm(), lambdas, alpha, predicates, name="sdm-elr")


def fsdm_elr(text: SequentialDependence | None = None, lambdas: tuple[float, float, float, float] = DEFAULT_ELR_LAMBDAS,
             alpha: float = DEFAULT_ALPHA, predicates: int = DEFAULT_PREDICATES) -> EntityLinkingRetrieval:
    """FSDM+ELR: :func:`fsdm` (its lambdas replaced) plus the entity component over each linked
    entity's top 10 predicate fields."""
    return EntityLinkingRetrieval(text or fsdm(), lambdas, alpha, predicates, name="fsdm-elr")


def mlm_elr(text: LanguageModel | None = None, lambda_t: float = DEFAULT_MLM_ELR_LAMBDAS[0],
            lambda_e: float = DEFAULT_MLM_ELR_LAMBDAS[3], alpha: float = DEFAULT_ALPHA,
            predicates: int = DEFAULT_PREDICATES) -> EntityLinkingRetrieval:
    """MLM+ELR: lambda_T (0.9) times Eq. 16 of :func:`mlm` plus lambda_E (0.1) times the entity
    component over each linked entity's top 10 predicate fields."""
    return EntityLinkingRetrieval(text or mlm(), (lambda_t, 0.0, 0.0, lambda_e), alpha, predicates, name="mlm-elr")



# --- the registry's ELR models -----------------------------------------------------------------

ELR_LAMBDAS = tuple(Parameter(f"lambda.{c}", float, default, f"weight lambda_{c} of the {name} component", minimum=0.0)
                    for (c, name), default in zip({**COMPONENTS, "E": "entity"}.items(), DEFAULT_ELR_LAMBDAS))
MLM_ELR_LAMBDAS = (
    Parameter("lambda.T", float, DEFAULT_MLM_ELR_LAMBDAS[0], "weight lambda_T of MLM's score (Eq. 16)", minimum=0.0),
    replace(ELR_LAMBDAS[3], default=DEFAULT_MLM_ELR_LAMBDAS[3]),
)
ALPHA = Parameter("alpha", float, DEFAULT_ALPHA, "smoothing alpha of the entity component",
                  minimum=0.0, maximum=1.0, open_minimum=True)


def _predicates(default: int) -> Parameter:
    return Parameter("predicates", int, default, "predicate fields per linked entity (0: one field of all the related "
                     "entities)", minimum=0)


def _elr_lambdas(values: Values) -> tuple[float, float, float, float]:
    return values["lambda.T"], values["lambda.O"], values["lambda.U"], values["lambda.E"]


SDM_ELR_ENTRY = RetrievalModel(
    "sdm-elr", "SDM+ELR", "SDM plus the entity component over one field of all the related entities",
    (FIELD, SDM_MU, WINDOW, *ELR_LAMBDAS, ALPHA, _predicates(0)),
    lambda values: sdm_elr(sdm_of(values, DEFAULT_LAMBDAS), _elr_lambdas(values), values["alpha"], values["predicates"]),
    needs_links=True, needs_relations=True)
FSDM_ELR_ENTRY = RetrievalModel(
    "fsdm-elr", "FSDM+ELR", "FSDM plus the entity component over each linked entity's top predicate fields",
    (*FIELD_PARAMETERS, WINDOW, *ELR_LAMBDAS, ALPHA, _predicates(DEFAULT_PREDICATES)),
    lambda values: fsdm_elr(fsdm_of(values, DEFAULT_LAMBDAS), _elr_lambdas(values), values["alpha"],
                            values["predicates"]),
    needs_links=True, needs_relations=True)
MLM_ELR_ENTRY = RetrievalModel(
    "mlm-elr", "MLM+ELR", "MLM plus the entity component over each linked entity's top predicate fields",
    (*MIXTURE_PARAMETERS, *MLM_ELR_LAMBDAS, ALPHA, _predicates(DEFAULT_PREDICATES)),
    lambda values: mlm_elr(mixture_of(values), values["lambda.T"], values["lambda.E"], values["alpha"],
                           values["predicates"]),
    needs_links=True, needs_relations=True)
