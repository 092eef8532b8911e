"""LTR's commonness threshold c is the registry's parameter at every door (issue 28.1): the
feature extractor (the Python API of ``elquery ltr features``) takes its default from the LTR
entry of METHODS and refuses a value with the registry's line, as ``open_linker``, the Linker and
``elquery link --method ltr`` do. Before, the extractor had a default and a check of its own
("commonness threshold must be between 0 and 1, got 1.5")."""

from __future__ import annotations

import pytest

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.linking.linker import Linker
from elquery.linking.ltr import cli as ltr_cli
from elquery.linking.ltr.features import DEFAULT_COMMONNESS_THRESHOLD, FeatureExtractor
from elquery.linking.methods import METHODS, open_linker

C = METHODS.get("ltr").parameter("commonness_threshold")


def test_the_extractors_default_is_the_registrys() -> None:
    assert C is not None and DEFAULT_COMMONNESS_THRESHOLD == C.default == 0.1
    # `elquery ltr features` names it without importing the registry (its parser is built at start-up)
    assert ltr_cli.DEFAULT_COMMONNESS_THRESHOLD == C.default


@pytest.mark.parametrize(("value", "message"), [
    (1.5, "ltr: commonness_threshold must be 0 <= commonness_threshold <= 1, got 1.5"),
    (-0.1, "ltr: commonness_threshold must be 0 <= commonness_threshold <= 1, got -0.1"),
    (float("nan"), "ltr: commonness_threshold must be a number, got nan"),
    ("x", "ltr: commonness_threshold must be a number, got 'x'"),
])
def test_the_extractor_refuses_what_the_linker_refuses(value: object, message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # checked before any artefact is opened: the paths need not exist
    with pytest.raises(ElqueryError) as refused:
        FeatureExtractor("index", "sf.db", value)
    assert str(refused.value) == message
    with pytest.raises(ElqueryError) as refused:
        open_linker("ltr", {"index": "index", "surface_forms": "sf.db"}, model="m.onnx", commonness_threshold=value)
    assert str(refused.value) == message
    with pytest.raises(ElqueryError) as refused:
        Linker("index", "sf.db", "ltr", model="m.onnx", commonness_threshold=value)
    assert str(refused.value) == message
    if isinstance(value, float) and value == value:
        capsys.readouterr()
        assert elquery(["link", "q", "--method", "ltr", "--model", "m.onnx", "--commonness-threshold", str(value)]) == 2
        assert capsys.readouterr().err == f"elquery: error: {message}\n"


def test_elquery_ltr_features_refuses_with_the_registrys_line(tmp_path: pytest.TempPathFactory,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ltr", "features", "--queries", "q.tsv", "--index", "index", "--surface-forms", "sf.db",
            "--commonness-threshold", "1.5", "--out", "features.tsv"]
    capsys.readouterr()
    assert elquery(argv) == 2
    assert capsys.readouterr().err == ("elquery: error: ltr: commonness_threshold must be 0 <= commonness_threshold "
                                       "<= 1, got 1.5\n")
