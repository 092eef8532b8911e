"""Language models (methods.md §4): a mixture of per-field language models (MLM, Eq. 12-13)
scored by the normalized query likelihood (Eq. 16). :func:`mlm` (names 0.2 / content 0.8,
Jelinek-Mercer lambda = 0.1), :func:`lm` (one field, Jelinek-Mercer), :func:`lm_dirichlet` (one
field, Dirichlet) and :func:`prms` (PRMS, Kim, Xue and Croft 2009: each term's field weights are
its mapping probabilities P(f|t)) are its usual instances, and the registry's models ``mlm``,
``lm``, ``lm-dirichlet`` and ``prms``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from elquery.base import ElqueryError
from elquery.kb.index_format import FIELDS, TEXT_FIELDS
from elquery.registry import Parameter
from elquery.retrieval.models.entry import MIXTURE_FIELDS, RetrievalModel, Values, given_or, per_field

DEFAULT_FIELD_WEIGHTS = {"names": 0.2, "content": 0.8}
DEFAULT_LAMBDA = 0.1
DEFAULT_MU = 2000.0


def check_field(name: str) -> None:
    """A text field some index may hold (whether the one scored holds it is checked with it:
    :func:`model_fields`, ``EntityIndex.require_fields``)."""
    if name not in TEXT_FIELDS:
        raise ElqueryError(f"unknown field {name!r}; fields are {', '.join(TEXT_FIELDS)}")


def check_fields(names: list[str], model: str) -> None:
    for name in names:
        check_field(name)
    if len(set(names)) != len(names) or not names:
        raise ElqueryError(f"{model} needs distinct fields, got {names}")



@dataclass(frozen=True)
class JelinekMercer:
    """p_f(t|e) = (1 - lambda) n(t, e_f)/|e_f| + lambda P(t|C_f) (Eq. 12); an empty field gives
    lambda P(t|C_f)."""

    lambda_: float = DEFAULT_LAMBDA

    def __post_init__(self) -> None:
        if not 0 < self.lambda_ <= 1:
            raise ElqueryError(f"Jelinek-Mercer lambda must be in (0, 1], got {self.lambda_}")

    def request(self) -> str:
        return f"jm\t{self.lambda_!r}"


@dataclass(frozen=True)
class Dirichlet:
    """p_f(t|e) = (n(t, e_f) + mu P(t|C_f)) / (|e_f| + mu)."""

    mu: float = DEFAULT_MU

    def __post_init__(self) -> None:
        if not (self.mu > 0 and math.isfinite(self.mu)):
            raise ElqueryError(f"Dirichlet mu must be positive, got {self.mu}")

    def request(self) -> str:
        return f"dirichlet\t{self.mu!r}"


Smoothing = JelinekMercer | Dirichlet


@dataclass(frozen=True)
class FieldModel:
    """One field of a mixture: its weight mu_f and its smoothing."""

    field: str
    weight: float
    smoothing: Smoothing = JelinekMercer()


@dataclass(frozen=True)
class LanguageModel:
    """P(t|theta_e) = sum_f mu_f p_f(t|e) (Eq. 12-13), ranked by the normalized query likelihood
    (Eq. 16). The weights must sum to 1."""

    fields: tuple[FieldModel, ...]
    name: str = "mlm"
    mapping: bool = False
    """PRMS: each term's field weights are P(f|t) = P(t|C_f) P(f) / sum_f' P(t|C_f') P(f'), P(f)
    the share of entities with a non-empty field f; the given weights are then unused."""

    def __post_init__(self) -> None:
        check_fields([f.field for f in self.fields], "a language model")
        if any(not (f.weight >= 0 and math.isfinite(f.weight)) for f in self.fields):
            raise ElqueryError("field weights must be non-negative")
        total = sum(f.weight for f in self.fields)
        if abs(total - 1) > 1e-9:
            raise ElqueryError(f"field weights must sum to 1, got {total:g}")

    def request_lines(self) -> list[str]:
        lines = [f"field\t{f.field}\t{f.weight!r}\t{f.smoothing.request()}" for f in self.fields]
        return [*lines, "prms"] if self.mapping else lines


def mlm(
    field_weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
    smoothing: float | Smoothing | Mapping[str, float | Smoothing] = DEFAULT_LAMBDA,
) -> LanguageModel:
    """MLM (Eq. 12-13): per-field weights, and one smoothing for all fields (a float is a
    Jelinek-Mercer lambda) or one per field."""

    def smoothing_of(name: str) -> Smoothing:
        value = smoothing.get(name, DEFAULT_LAMBDA) if isinstance(smoothing, Mapping) else smoothing
        return value if isinstance(value, JelinekMercer | Dirichlet) else JelinekMercer(float(value))

    return LanguageModel(tuple(FieldModel(f, float(w), smoothing_of(f)) for f, w in field_weights.items()))


def prms(
    fields: tuple[str, ...] = FIELDS,
    smoothing: float | Smoothing | Mapping[str, float | Smoothing] = DEFAULT_LAMBDA,
) -> LanguageModel:
    """PRMS (Kim, Xue and Croft 2009): P(t|theta_e) = sum_f P(f|t) p_f(t|e), the mapping
    probability P(f|t) computed from the index's statistics per term; smoothing as :func:`mlm`."""
    model = mlm({f: 1 / len(fields) for f in fields}, smoothing)
    return LanguageModel(model.fields, name="prms", mapping=True)


def lm(field: str = "content", lambda_: float = DEFAULT_LAMBDA) -> LanguageModel:
    """Query likelihood with Jelinek-Mercer smoothing on one field."""
    return LanguageModel((FieldModel(field, 1.0, JelinekMercer(lambda_)),), name="lm")


def lm_dirichlet(field: str = "content", mu: float = DEFAULT_MU) -> LanguageModel:
    """Query likelihood with Dirichlet smoothing on one field."""
    return LanguageModel((FieldModel(field, 1.0, Dirichlet(mu)),), name="lm-dirichlet")



# --- the registry's language models ------------------------------------------------------------

FIELD = Parameter("field", str, "content", "the field scored", choices=TEXT_FIELDS)
LAMBDA = Parameter("lambda", float, DEFAULT_LAMBDA, "Jelinek-Mercer smoothing lambda (Eq. 12)",
                   minimum=0.0, maximum=1.0, open_minimum=True)
MU = Parameter("mu", float, DEFAULT_MU, "Dirichlet prior mu", minimum=0.0, open_minimum=True)
SMOOTHING_PARAMETERS = (
    replace(LAMBDA, help="Jelinek-Mercer lambda of every field (Eq. 12)"),
    *per_field("lambda.{}", None, "the field's Jelinek-Mercer lambda (default: lambda)",
               minimum=0.0, maximum=1.0, open_minimum=True),
    *per_field("mu.{}", None, "the field's Dirichlet prior mu, smoothing it in place of Jelinek-Mercer",
               minimum=0.0, open_minimum=True),
)
MIXTURE_PARAMETERS = (
    *per_field("weight.{}", DEFAULT_FIELD_WEIGHTS, "the field's weight mu_f (Eq. 13); the weights sum to 1",
               minimum=0.0),
    *SMOOTHING_PARAMETERS,
)
"""The parameters of MLM, also those of the models built on it (BM25+MLM, MLM+ELR)."""


def fields_smoothing(values: Values) -> dict[str, Smoothing]:
    """Each mixture field's smoothing: Dirichlet with its ``mu.FIELD`` where given, else
    Jelinek-Mercer with its ``lambda.FIELD`` or ``lambda``."""
    for f in MIXTURE_FIELDS:
        if values[f"mu.{f}"] is not None and values[f"lambda.{f}"] is not None:
            raise ElqueryError(f"give lambda.{f} (Jelinek-Mercer) or mu.{f} (Dirichlet), not both")
    return {f: Dirichlet(values[f"mu.{f}"]) if values[f"mu.{f}"] is not None
            else JelinekMercer(given_or(values[f"lambda.{f}"], values["lambda"])) for f in MIXTURE_FIELDS}


def mixture_of(values: Values) -> LanguageModel:
    """MLM of the :data:`MIXTURE_PARAMETERS` ``values``."""
    return mlm({f: values[f"weight.{f}"] for f in MIXTURE_FIELDS}, fields_smoothing(values))


MLM_ENTRY = RetrievalModel("mlm", "MLM", "mixture of field language models (Eq. 12-13) ranked by Eq. 16",
                           MIXTURE_PARAMETERS, mixture_of)
LM_ENTRY = RetrievalModel("lm", "LM", "query likelihood of one field, Jelinek-Mercer smoothed (Eq. 16)",
                          (FIELD, LAMBDA), lambda values: lm(values["field"], values["lambda"]))
LM_DIRICHLET_ENTRY = RetrievalModel("lm-dirichlet", "LM (Dirichlet)", "query likelihood of one field, Dirichlet smoothed",
                                    (FIELD, MU), lambda values: lm_dirichlet(values["field"], values["mu"]))
PRMS_ENTRY = RetrievalModel("prms", "PRMS", "field weights P(f|t) per query term (Kim, Xue and Croft 2009), ranked by Eq. 16",
                            SMOOTHING_PARAMETERS, lambda values: prms(MIXTURE_FIELDS, fields_smoothing(values)))
