"""Model parameter objects and their command-line names (--model, --param)."""

from __future__ import annotations

import pytest

from elquery.base import ElqueryError
from elquery.retrieval.models import (
    BM25,
    BM25F,
    Dirichlet,
    FieldModel,
    JelinekMercer,
    LanguageModel,
    Rerank,
    lm,
    lm_dirichlet,
    mlm,
    model_from_name,
    parse_params,
)


def test_defaults_follow_methods_section_4() -> None:
    assert mlm() == LanguageModel(
        (FieldModel("names", 0.2, JelinekMercer(0.1)), FieldModel("content", 0.8, JelinekMercer(0.1)))
    )
    assert lm() == LanguageModel((FieldModel("content", 1.0, JelinekMercer(0.1)),), name="lm")
    assert lm_dirichlet().fields[0].smoothing == Dirichlet(2000.0)
    assert (BM25().k1, BM25().b, BM25().field) == (0.9, 0.4, "content")


def test_model_names_and_params() -> None:
    assert model_from_name("mlm", {}) == mlm()
    assert model_from_name("mlm", {"weight.names": "0.3", "weight.content": "0.7", "lambda": "0.2"}) == mlm(
        {"names": 0.3, "content": 0.7}, 0.2
    )
    per_field = model_from_name("mlm", {"lambda.names": "0.5", "mu.content": "100"})
    assert per_field == mlm(smoothing={"names": JelinekMercer(0.5), "content": Dirichlet(100.0)})
    assert model_from_name("lm", {"field": "names", "lambda": "0.3"}) == lm("names", 0.3)
    assert model_from_name("lm-dirichlet", {"mu": "500"}) == lm_dirichlet(mu=500.0)
    assert model_from_name("bm25", {"k1": "1.2", "b": "0.75"}) == BM25(k1=1.2, b=0.75)
    assert model_from_name("bm25f", {"weight.names": "3"}) == BM25F((("names", 3.0), ("content", 1.0)))
    assert model_from_name("bm25-mlm", {"depth": "100", "bm25.k1": "1.0", "lambda": "0.2"}) == Rerank(
        BM25(k1=1.0), mlm(smoothing=0.2), 100
    )


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("nope", {}, "unknown model"),
        ("mlm", {"k1": "1"}, "no parameter k1"),
        ("mlm", {"lambda": "x"}, "not a number"),
        ("mlm", {"lambda": "0"}, "lambda must be in (0, 1]"),
        ("mlm", {"weight.names": "0.5"}, "sum to 1"),
        ("mlm", {"weight.names": "-0.2", "weight.content": "1.2"}, "non-negative"),
        ("lm", {"field": "abstract"}, "unknown field"),
        ("lm-dirichlet", {"mu": "0"}, "mu must be positive"),
        ("bm25", {"b": "2"}, "0 <= b <= 1"),
        ("bm25f", {"weight.names": "0.5"}, "at least 1"),
        ("bm25-mlm", {"depth": "2.5"}, "whole number"),
        ("bm25-mlm", {"depth": "0"}, "at least 1"),
    ],
)
def test_bad_models_are_user_errors(name: str, params: dict[str, str], message: str) -> None:
    with pytest.raises(ElqueryError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        model_from_name(name, params)


def test_parse_params() -> None:
    assert parse_params(["lambda=0.2", " mu.names = 5 ", "lambda=0.3"]) == {"lambda": "0.3", "mu.names": "5"}
    for bad in ("lambda", "=3"):
        with pytest.raises(ElqueryError, match="expected name=value"):
            parse_params([bad])
