"""Lucene's BM25 models (methods.md §4): :class:`BM25` on one field and :class:`BM25F`
(CombinedFieldQuery) over several, Lucene's own scoring (its norms are lossy; the exact field
lengths matter only to the language models), and :class:`Rerank`, BM25's top ``depth`` re-ranked
by an exact model; the registry's ``bm25``, ``bm25f`` and ``bm25-mlm``."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from elquery.base import ElqueryError
from elquery.registry import Parameter
from elquery.retrieval.models.entry import MIXTURE_FIELDS, RetrievalModel, Values, per_field
from elquery.retrieval.models.language import FIELD, MIXTURE_PARAMETERS, LanguageModel, check_field, mixture_of

if TYPE_CHECKING:
    from elquery.retrieval.models.dependence import SequentialDependence

DEFAULT_DEPTH = 1000

@dataclass(frozen=True)
class BM25:
    """Lucene BM25 on one field (Anserini's defaults k1 = 0.9, b = 0.4)."""

    field: str = "content"
    k1: float = 0.9
    b: float = 0.4
    name: str = "bm25"

    def __post_init__(self) -> None:
        check_field(self.field)
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
            check_field(name)
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
    depth: int = DEFAULT_DEPTH
    name: str = "bm25-mlm"

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ElqueryError(f"re-ranking depth must be at least 1, got {self.depth}")



# --- the registry's BM25 models ----------------------------------------------------------------

K1 = Parameter("k1", float, BM25.k1, "BM25 term-frequency saturation k1", minimum=0.0)
B = Parameter("b", float, BM25.b, "BM25 length normalization b", minimum=0.0, maximum=1.0)
DEPTH = Parameter("depth", int, DEFAULT_DEPTH, "BM25's top entities re-ranked", minimum=1)


def _bm25f(values: Values) -> BM25F:
    return BM25F(tuple((f, values[f"weight.{f}"]) for f in MIXTURE_FIELDS), values["k1"], values["b"])


def _rerank(values: Values) -> Rerank:
    first = BM25(values["bm25.field"], values["bm25.k1"], values["bm25.b"])
    return Rerank(first, mixture_of(values), values["depth"])


BM25_ENTRY = RetrievalModel("bm25", "BM25", "Lucene's BM25 on one field", (FIELD, K1, B),
                            lambda values: BM25(values["field"], values["k1"], values["b"]))
BM25F_ENTRY = RetrievalModel(
    "bm25f", "BM25F", "Lucene's BM25F (CombinedFieldQuery) over the fields",
    (*per_field("weight.{}", dict(BM25F.field_weights), "the field's weight, multiplying its term frequencies and "
                "lengths before saturation", minimum=1.0), K1, B),
    _bm25f)
BM25_MLM_ENTRY = RetrievalModel(
    "bm25-mlm", "BM25+MLM", "BM25's top depth entities re-ranked by the exact MLM",
    (DEPTH, replace(FIELD, name="bm25.field", help="the field of BM25"), replace(K1, name="bm25.k1"),
     replace(B, name="bm25.b"), *MIXTURE_PARAMETERS),
    _rerank)
