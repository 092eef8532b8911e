"""Sequential dependence models (methods.md §4): SDM (Metzler and Croft 2005, :func:`sdm`) and
FSDM (Zhiltsov, Kotov and Nikolaev 2015, :func:`fsdm`): unigrams, ordered and unordered windows
of adjacent query terms, counted exactly from the index's positions; the registry's ``sdm`` and
``fsdm``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from elquery.base import ElqueryError
from elquery.registry import Parameter
from elquery.retrieval.models.entry import MIXTURE_FIELDS, RetrievalModel, Values, given_or, per_field
from elquery.retrieval.models.language import DEFAULT_FIELD_WEIGHTS, DEFAULT_MU, FIELD, MU, check_fields

DEFAULT_LAMBDAS = (0.8, 0.1, 0.1)
DEFAULT_WINDOW = 8


@dataclass(frozen=True)
class DependenceField:
    """One field of FSDM: its weight in the unigram, ordered-window and unordered-window
    mixtures, and its Dirichlet prior mu_f (None: the field's average length |C_f| / N)."""

    field: str
    unigram: float
    ordered: float
    unordered: float
    mu: float | None = None


@dataclass(frozen=True)
class SequentialDependence:
    """FSDM (and SDM, one field): score(e, q) = lambda_T sum_i f_T(q_i, e) + lambda_O sum_i
    f_O(q_i q_i+1, e) + lambda_U sum_i f_U(q_i q_i+1, e), f_X(x, e) = log sum_f w_f^X (n_X(x, e_f)
    + mu_f cf_X(x, f) / |C_f|) / (|e_f| + mu_f); n_O counts the ordered window #1, n_U the
    unordered window of ``window`` positions (methods.md §4). Each component's field weights
    sum to 1."""

    fields: tuple[DependenceField, ...]
    lambdas: tuple[float, float, float] = DEFAULT_LAMBDAS
    window: int = DEFAULT_WINDOW
    name: str = "fsdm"

    def __post_init__(self) -> None:
        check_fields([f.field for f in self.fields], "a dependence model")
        for component in ("unigram", "ordered", "unordered"):
            weights = [getattr(f, component) for f in self.fields]
            if any(not (w >= 0 and math.isfinite(w)) for w in weights) or abs(sum(weights) - 1) > 1e-9:
                raise ElqueryError(f"{component} field weights must be non-negative and sum to 1, got {weights}")
        for f in self.fields:
            if f.mu is not None and not (f.mu > 0 and math.isfinite(f.mu)):
                raise ElqueryError(f"Dirichlet mu must be positive, got {f.field}={f.mu}")
        if len(self.lambdas) != 3 or any(not (x >= 0 and math.isfinite(x)) for x in self.lambdas) or not any(self.lambdas):
            raise ElqueryError(f"the three lambdas must be non-negative, not all 0, got {self.lambdas}")
        if self.window < 2:
            raise ElqueryError(f"the unordered window must be at least 2, got {self.window}")

    def request_lines(self) -> list[str]:
        """The model's lines of a request (mu ``average``: |C_f| / N, at least 1)."""
        lines = [f"lambda\t{self.lambdas[0]!r}\t{self.lambdas[1]!r}\t{self.lambdas[2]!r}", f"window\t{self.window}"]
        for f in self.fields:
            mu = "average" if f.mu is None else repr(f.mu)
            lines.append(f"field\t{f.field}\t{f.unigram!r}\t{f.ordered!r}\t{f.unordered!r}\t{mu}")
        return lines




def sdm(field: str = "content", mu: float | None = DEFAULT_MU, lambdas: tuple[float, float, float] = DEFAULT_LAMBDAS,
        window: int = DEFAULT_WINDOW) -> SequentialDependence:
    """SDM (Metzler and Croft 2005) on one field, Dirichlet smoothed (mu 2000; None: the field's
    average length)."""
    return SequentialDependence((DependenceField(field, 1.0, 1.0, 1.0, mu),), lambdas, window, name="sdm")


def fsdm(
    unigram: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
    ordered: Mapping[str, float] | None = None,
    unordered: Mapping[str, float] | None = None,
    mu: Mapping[str, float] | None = None,
    lambdas: tuple[float, float, float] = DEFAULT_LAMBDAS,
    window: int = DEFAULT_WINDOW,
) -> SequentialDependence:
    """FSDM (Zhiltsov, Kotov and Nikolaev 2015): per-field mixtures for each component (the
    window weights default to the unigram ones), mu_f the field's average length unless given."""
    ordered = unigram if ordered is None else ordered
    unordered = unigram if unordered is None else unordered
    names = list(dict.fromkeys([*unigram, *ordered, *unordered]))
    fields = tuple(
        DependenceField(f, float(unigram.get(f, 0.0)), float(ordered.get(f, 0.0)), float(unordered.get(f, 0.0)),
                        None if mu is None or f not in mu else float(mu[f]))
        for f in names
    )
    return SequentialDependence(fields, lambdas, window, name="fsdm")



# --- the registry's dependence models ----------------------------------------------------------

COMPONENTS = {"T": "unigram", "O": "ordered-window", "U": "unordered-window"}
LAMBDA_PARAMETERS = tuple(Parameter(f"lambda.{c}", float, default, f"weight lambda_{c} of the {name} component",
                                    minimum=0.0) for (c, name), default in zip(COMPONENTS.items(), DEFAULT_LAMBDAS))
WINDOW = Parameter("window", int, DEFAULT_WINDOW, "positions of the unordered window", minimum=2)
SDM_MU = replace(MU, help="Dirichlet prior mu of the field")
FIELD_PARAMETERS = (
    *per_field("weight.{}", DEFAULT_FIELD_WEIGHTS, "the field's weight in all three components; each component's "
               "weights sum to 1", minimum=0.0),
    *(p for c, name in COMPONENTS.items()
      for p in per_field(f"weight.{c}.{{}}", None, f"the field's weight in the {name} component (default: weight.FIELD)",
                         minimum=0.0)),
    *per_field("mu.{}", None, "the field's Dirichlet prior mu (default: its average length)",
               minimum=0.0, open_minimum=True),
)
"""The fields' parameters of FSDM (also those of FSDM+ELR)."""


def lambdas_of(values: Values) -> tuple[float, float, float]:
    """lambda_T, lambda_O and lambda_U of ``values``."""
    return values["lambda.T"], values["lambda.O"], values["lambda.U"]


def sdm_of(values: Values, lambdas: tuple[float, float, float]) -> SequentialDependence:
    """SDM of the ``field``, ``mu`` and ``window`` of ``values``."""
    return sdm(values["field"], values["mu"], lambdas, values["window"])


def fsdm_of(values: Values, lambdas: tuple[float, float, float]) -> SequentialDependence:
    """FSDM of the :data:`FIELD_PARAMETERS` and ``window`` of ``values``."""
    weights = {f: values[f"weight.{f}"] for f in MIXTURE_FIELDS}
    unigram, ordered, unordered = (
        {f: given_or(values[f"weight.{c}.{f}"], weights[f]) for f in MIXTURE_FIELDS} for c in COMPONENTS)
    mu = {f: values[f"mu.{f}"] for f in MIXTURE_FIELDS if values[f"mu.{f}"] is not None}
    return fsdm(unigram, ordered, unordered, mu=mu, lambdas=lambdas, window=values["window"])


SDM_ENTRY = RetrievalModel("sdm", "SDM", "sequential dependence model of one field, Dirichlet smoothed",
                           (FIELD, SDM_MU, *LAMBDA_PARAMETERS, WINDOW),
                           lambda values: sdm_of(values, lambdas_of(values)))
FSDM_ENTRY = RetrievalModel("fsdm", "FSDM", "fielded sequential dependence model",
                            (*FIELD_PARAMETERS, *LAMBDA_PARAMETERS, WINDOW),
                            lambda values: fsdm_of(values, lambdas_of(values)))
