"""Property tests of the experiment config reader (issue 31, item 7): the shipped configs with one
or two values anywhere replaced by any TOML value (or removed), and any bytes as a config file,
give a parsed config or one :class:`ElqueryError` line naming the file, never another exception."""

from __future__ import annotations

import copy
import datetime
import math
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elquery.base import ElqueryError
from elquery.experiments.config import ExperimentConfig, load_config, parse_config

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
SHIPPED = ("demo.toml", "sample-y-erd.toml", "sample-dbpedia-entity.toml", "dbpedia-entity.toml",
           "ecir17-published.toml")
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
scalars = (texts | st.integers(-2**63, 2**63 - 1) | st.floats() | st.booleans()
           | st.datetimes(timezones=st.none() | st.just(datetime.timezone.utc)) | st.dates() | st.times())
toml_values = st.recursive(scalars,
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
                           max_leaves=12)


@pytest.fixture(autouse=True)
def environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The variables the shipped configs name, and the demo knowledge base's cache."""
    for name in ("ELQUERY_DATA", "ELQUERY_SAMPLE", "ELQUERY_INDEX", "ELQUERY_ECIR17"):
        monkeypatch.setenv(name, "/nonexistent")
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path_factory.getbasetemp() / "elquery-cache-properties"))


@st.composite
def mutated_configs(draw: st.DrawFn) -> tuple[Path, dict[str, Any]]:
    """A shipped config, parsed, with one or two values (at any depth) replaced or removed."""
    file = CONFIGS / draw(st.sampled_from(SHIPPED))
    data = tomllib.loads(file.read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(1, 2))):
        where: Any = data
        while True:
            keys = list(where) if isinstance(where, dict) else list(range(len(where)))
            if not keys:
                break
            key = draw(st.sampled_from(keys))
            if isinstance(where[key], (dict, list)) and draw(st.booleans()):
                where = where[key]
                continue
            if isinstance(where, dict) and draw(st.integers(0, 4)) == 0:
                del where[key]
            else:
                where[key] = draw(toml_values)
            break
    return file, copy.deepcopy(data)


def _one_line_about(error: ElqueryError, file: Path) -> None:
    message = str(error)
    assert message.startswith(f"{file}") and "\n" not in message, message


@SETTINGS
@given(mutated_configs())
def test_any_value_anywhere_gives_a_config_or_one_line(case: tuple[Path, dict[str, Any]]) -> None:
    file, data = case
    try:
        config = parse_config(file, data)
    except ElqueryError as error:
        _one_line_about(error, file)
        return
    assert isinstance(config, ExperimentConfig)
    spec = config.entity_retrieval
    assert spec is None or 1 <= spec.depth <= 100_000
    assert config.crossval.folds >= 2
    assert all(math.isfinite(f.tolerance) and f.tolerance >= 0 for f in config.expected)


@SETTINGS
@given(st.binary(max_size=300) | st.sampled_from([b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbfname = 1\n",
                                                  b"a = " + b"[" * 50_000]))
def test_any_bytes_give_a_config_or_one_line(tmp_path: Path, raw: bytes) -> None:
    file = tmp_path / "config.toml"
    file.write_bytes(raw)
    try:
        load_config(file)
    except ElqueryError as error:
        _one_line_about(error, file)
