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
        ("nope", {}, "unknown model 'nope'; models are mlm, lm, lm-dirichlet, bm25, bm25f, bm25-mlm, prms, sdm, fsdm, "
                     "sdm-elr, fsdm-elr, mlm-elr"),
        ("mlm", {"k1": "1"}, "mlm has no parameter k1; its parameters are weight.names, weight.content, lambda, "
                             "lambda.names, lambda.content, mu.names, mu.content"),
        ("mlm", {"lambda": "x"}, "mlm: lambda must be a number, got 'x'"),
        ("mlm", {"lambda": "0"}, "mlm: lambda must be 0 < lambda <= 1, got 0"),
        ("mlm", {"weight.names": "0.5"}, "mlm: field weights must sum to 1, got 1.3"),
        ("mlm", {"weight.names": "-0.2", "weight.content": "1.2"}, "mlm: weight.names must be 0 <= weight.names, got -0.2"),
        ("mlm", {"lambda.names": "0.5", "mu.names": "3"},
         "mlm: give lambda.names (Jelinek-Mercer) or mu.names (Dirichlet), not both"),
        ("lm", {"field": "abstract"}, "lm: field must be one of names, content, title, short_abstract, long_abstract, "
                                      "wiki_links, categories, got 'abstract'"),
        ("lm-dirichlet", {"mu": "0"}, "lm-dirichlet: mu must be 0 < mu, got 0"),
        ("bm25", {"b": "2"}, "bm25: b must be 0 <= b <= 1, got 2"),
        ("bm25", {"k1": "-1"}, "bm25: k1 must be 0 <= k1, got -1"),
        ("bm25f", {"weight.names": "0.5"}, "bm25f: weight.names must be 1 <= weight.names, got 0.5"),
        ("bm25-mlm", {"depth": "2.5"}, "bm25-mlm: depth must be a whole number, got '2.5'"),
        ("bm25-mlm", {"depth": "0"}, "bm25-mlm: depth must be 1 <= depth, got 0"),
    ],
)
def test_bad_models_are_user_errors(name: str, params: dict[str, str], message: str) -> None:
    with pytest.raises(ElqueryError) as refused:
        model_from_name(name, params)
    assert str(refused.value) == message


def test_parse_params() -> None:
    assert parse_params(["lambda=0.2", " mu.names = 5 ", "lambda=0.3"]) == {"lambda": "0.3", "mu.names": "5"}
    for bad in ("lambda", "=3"):
        with pytest.raises(ElqueryError, match="expected name=value"):
            parse_params([bad])
