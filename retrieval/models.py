"""Retrieval models (methods.md §4) as plain parameter objects, and their command-line names.

* :class:`LanguageModel`: a mixture of per-field language models (MLM, Eq. 12-13) scored by the
  normalized query likelihood (Eq. 16). :func:`mlm` (names 0.2 / content 0.8, Jelinek-Mercer
  lambda = 0.1), :func:`lm` (one field, Jelinek-Mercer) and :func:`lm_dirichlet` (one field,
  Dirichlet) are its usual instances.
* :class:`BM25` (one field) and :class:`BM25F` (Lucene's CombinedFieldQuery over several fields),
  Lucene's own scoring (its norms are lossy; the exact field lengths matter only to the language
  models).
* :class:`Rerank`: BM25 top ``depth``, re-ranked by an exact language model.
* :func:`prms`: PRMS (Kim, Xue and Croft 2009), a :class:`LanguageModel` whose field weights are
  each term's mapping probabilities P(f|t).
* :class:`SequentialDependence`: SDM (Metzler and Croft 2005, :func:`sdm`) and FSDM (Zhiltsov,
  Kotov and Nikolaev 2015, :func:`fsdm`): unigrams, ordered and unordered windows of adjacent query
  terms, counted exactly from the index's positions.
* :class:`EntityLinkingRetrieval`: ELR (Hasibi, Balog and Bratsberg, ICTIR 2016, :func:`sdm_elr`,
  :func:`fsdm_elr`, :func:`mlm_elr`): a term-based model plus a component matching the query's
  linked entities against each entity's related entities (the index's ``relations`` field).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from elquery.base import ElqueryError
from elquery.indexing.index_format import FIELDS, TEXT_FIELDS

DEFAULT_FIELD_WEIGHTS = {"names": 0.2, "content": 0.8}
DEFAULT_LAMBDA = 0.1
DEFAULT_MU = 2000.0


def _check_field(name: str) -> None:
    """A text field some index may hold (whether the one scored holds it is checked with it:
    :func:`model_fields`, ``EntityIndex.require_fields``)."""
    if name not in TEXT_FIELDS:
        raise ElqueryError(f"unknown field {name!r}; fields are {', '.join(TEXT_FIELDS)}")


def _check_fields(names: list[str], model: str) -> None:
    for name in names:
        _check_field(name)
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
        _check_fields([f.field for f in self.fields], "a language model")
        if any(not (f.weight >= 0 and math.isfinite(f.weight)) for f in self.fields):
            raise ElqueryError("field weights must be non-negative")
        total = sum(f.weight for f in self.fields)
        if abs(total - 1) > 1e-9:
            raise ElqueryError(f"field weights must sum to 1, got {total:g}")

    def request_lines(self) -> list[str]:
        lines = [f"field\t{f.field}\t{f.weight!r}\t{f.smoothing.request()}" for f in self.fields]
        return [*lines, "prms"] if self.mapping else lines


@dataclass(frozen=True)
class BM25:
    """Lucene BM25 on one field (Anserini's defaults k1 = 0.9, b = 0.4)."""

    field: str = "content"
    k1: float = 0.9
    b: float = 0.4
    name: str = "bm25"

    def __post_init__(self) -> None:
        _check_field(self.field)
        _check_bm25(self.k1, self.b)

    def request_line(self) -> str:
        return f"bm25\t{self.field}\t{self.k1!r}\t{self.b!r}"


@dataclass(frozen=True)
class BM25F:
    """Lucene's BM25F (CombinedFieldQuery): field term frequencies and lengths are combined with
    the field weights (each at least 1) before BM25 saturation."""

    field_weights: tuple[tuple[str, float], ...] = (("names", 2.0), ("content", 1.0))
    k1: float = 0.9
    b: float = 0.4
    name: str = "bm25f"

    def __post_init__(self) -> None:
        for name, weight in self.field_weights:
            _check_field(name)
            if not (weight >= 1 and math.isfinite(weight)):
                raise ElqueryError(f"BM25F field weights must be at least 1, got {name}={weight}")
        _check_bm25(self.k1, self.b)

    def request_line(self) -> str:
        weights = "\t".join(f"{name}\t{weight!r}" for name, weight in self.field_weights)
        return f"bm25f\t{self.k1!r}\t{self.b!r}\t{weights}"


def _check_bm25(k1: float, b: float) -> None:
    if not (k1 >= 0 and math.isfinite(k1)) or not 0 <= b <= 1:
        raise ElqueryError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")


@dataclass(frozen=True)
class Rerank:
    """First-stage BM25 top ``depth``, re-ranked by the exact language model."""

    first: BM25 | BM25F
    then: LanguageModel | SequentialDependence
    depth: int = 1000
    name: str = "bm25-mlm"

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ElqueryError(f"re-ranking depth must be at least 1, got {self.depth}")


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
        _check_fields([f.field for f in self.fields], "a dependence model")
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


ExactModel = LanguageModel | SequentialDependence | EntityLinkingRetrieval
Model = LanguageModel | SequentialDependence | BM25 | BM25F | Rerank | EntityLinkingRetrieval


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


def lm(field: str = "content", lambda_: float = DEFAULT_LAMBDA) -> LanguageModel:
    """Query likelihood with Jelinek-Mercer smoothing on one field."""
    return LanguageModel((FieldModel(field, 1.0, JelinekMercer(lambda_)),), name="lm")


def lm_dirichlet(field: str = "content", mu: float = DEFAULT_MU) -> LanguageModel:
    """Query likelihood with Dirichlet smoothing on one field."""
    return LanguageModel((FieldModel(field, 1.0, Dirichlet(mu)),), name="lm-dirichlet")


# --- command-line names -------------------------------------------------------------------------

MODEL_HELP = {
    "mlm": "MLM (Eq. 12-13) + Eq. 16; params weight.FIELD (names 0.2, content 0.8), lambda (0.1), "
    "lambda.FIELD, mu.FIELD (Dirichlet for that field)",
    "lm": "Jelinek-Mercer LM; params field (content), lambda (0.1)",
    "lm-dirichlet": "Dirichlet LM; params field (content), mu (2000)",
    "bm25": "Lucene BM25; params field (content), k1 (0.9), b (0.4)",
    "bm25f": "Lucene BM25F; params weight.FIELD (names 2, content 1; >= 1), k1 (0.9), b (0.4)",
    "bm25-mlm": "BM25 top depth (1000) re-ranked by exact MLM; params depth, bm25.k1, bm25.b, "
    "bm25.field and the mlm params",
    "prms": "PRMS (field weights P(f|t) per term) + Eq. 16; params lambda (0.1), lambda.FIELD, mu.FIELD",
    "sdm": "SDM on one field, Dirichlet; params field (content), mu (2000), lambda.T/O/U (0.8/0.1/0.1), window (8)",
    "fsdm": "FSDM; params weight.FIELD (names 0.2, content 0.8; all components), weight.T|O|U.FIELD, "
    "mu.FIELD (average field length), lambda.T/O/U (0.8/0.1/0.1), window (8)",
    "sdm-elr": "SDM+ELR (needs --links and an index built with --relations); the sdm params, "
    "lambda.T/O/U/E (0.8/0.05/0.05/0.1), alpha (0.1), predicates (0: one field of all related entities)",
    "fsdm-elr": "FSDM+ELR (needs --links, --relations index); the fsdm params, lambda.T/O/U/E (0.8/0.05/0.05/0.1), "
    "alpha (0.1), predicates (10 predicate fields per linked entity)",
    "mlm-elr": "MLM+ELR (needs --links, --relations index); the mlm params, lambda.T/E (0.9/0.1), alpha (0.1), "
    "predicates (10)",
}


def parse_params(items: list[str]) -> dict[str, str]:
    """``name=value`` strings into a dict (a later value wins)."""
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ElqueryError(f"--param {item!r}: expected name=value")
        params[name.strip()] = value.strip()
    return params


class _Params:
    """``--param`` values, taken one by one; what is left at the end was not understood."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self.remaining = dict(params)

    def has(self, key: str) -> bool:
        return key in self.remaining

    def text(self, key: str, default: str) -> str:
        return self.remaining.pop(key, default)

    def number(self, key: str, default: float) -> float:
        text = self.remaining.pop(key, None)
        if text is None:
            return default
        try:
            return float(text)
        except ValueError:
            raise ElqueryError(f"--param {key}={text}: not a number") from None

    def whole(self, key: str, default: int) -> int:
        value = self.number(key, default)
        if value != int(value):
            raise ElqueryError(f"--param {key}={value:g}: not a whole number")
        return int(value)


def model_from_name(name: str, params: Mapping[str, str]) -> Model:
    """The model called ``name`` on the command line, with its ``--param`` values."""
    if name not in MODEL_HELP:
        raise ElqueryError(f"unknown model {name!r}; models are {', '.join(MODEL_HELP)}")
    p = _Params(params)
    model: Model
    if name == "lm":
        model = lm(p.text("field", "content"), p.number("lambda", DEFAULT_LAMBDA))
    elif name == "lm-dirichlet":
        model = lm_dirichlet(p.text("field", "content"), p.number("mu", DEFAULT_MU))
    elif name == "bm25":
        model = BM25(p.text("field", "content"), p.number("k1", 0.9), p.number("b", 0.4))
    elif name == "bm25f":
        weights = tuple((f, p.number(f"weight.{f}", w)) for f, w in BM25F().field_weights)
        model = BM25F(weights, p.number("k1", 0.9), p.number("b", 0.4))
    elif name == "mlm":
        model = _mlm(p)
    elif name == "prms":
        model = prms(FIELDS, _smoothing(p, FIELDS))
    elif name == "sdm":
        model = sdm(p.text("field", "content"), p.number("mu", DEFAULT_MU), _lambdas(p), p.whole("window", DEFAULT_WINDOW))
    elif name == "fsdm":
        model = _fsdm(p)
    elif name in ("sdm-elr", "fsdm-elr"):
        lambdas = tuple(p.number(f"lambda.{c}", x) for c, x in zip("TOUE", DEFAULT_ELR_LAMBDAS))
        text = (sdm(p.text("field", "content"), p.number("mu", DEFAULT_MU), window=p.whole("window", DEFAULT_WINDOW))
                if name == "sdm-elr" else _fsdm(p))
        predicates = p.whole("predicates", 0 if name == "sdm-elr" else DEFAULT_PREDICATES)
        model = EntityLinkingRetrieval(text, lambdas, p.number("alpha", DEFAULT_ALPHA), predicates, name=name)  # type: ignore[arg-type]
    elif name == "mlm-elr":
        lambda_t, lambda_e = p.number("lambda.T", DEFAULT_MLM_ELR_LAMBDAS[0]), p.number("lambda.E", DEFAULT_MLM_ELR_LAMBDAS[3])
        model = mlm_elr(_mlm(p), lambda_t, lambda_e, p.number("alpha", DEFAULT_ALPHA),
                        p.whole("predicates", DEFAULT_PREDICATES))
    else:
        first = BM25(p.text("bm25.field", "content"), p.number("bm25.k1", 0.9), p.number("bm25.b", 0.4))
        model = Rerank(first, _mlm(p), p.whole("depth", 1000))
    if p.remaining:
        raise ElqueryError(f"model {name} has no parameter {', '.join(sorted(p.remaining))}; see --help")
    return model


def _mlm(p: _Params) -> LanguageModel:
    weights = {f: p.number(f"weight.{f}", w) for f, w in DEFAULT_FIELD_WEIGHTS.items()}
    return mlm(weights, _smoothing(p, weights))


def _smoothing(p: _Params, fields: Iterable[str]) -> dict[str, Smoothing]:
    default = p.number("lambda", DEFAULT_LAMBDA)
    return {
        f: Dirichlet(p.number(f"mu.{f}", DEFAULT_MU)) if p.has(f"mu.{f}") else JelinekMercer(p.number(f"lambda.{f}", default))
        for f in fields
    }


def _lambdas(p: _Params) -> tuple[float, float, float]:
    return (p.number("lambda.T", DEFAULT_LAMBDAS[0]), p.number("lambda.O", DEFAULT_LAMBDAS[1]),
            p.number("lambda.U", DEFAULT_LAMBDAS[2]))


def _fsdm(p: _Params) -> SequentialDependence:
    weights = {f: p.number(f"weight.{f}", w) for f, w in DEFAULT_FIELD_WEIGHTS.items()}
    components = [{f: p.number(f"weight.{c}.{f}", w) for f, w in weights.items()} for c in "TOU"]
    mu = {f: p.number(f"mu.{f}", 0.0) for f in weights if p.has(f"mu.{f}")}
    return fsdm(*components, mu=mu, lambdas=_lambdas(p), window=p.whole("window", DEFAULT_WINDOW))
