"""Shared fixtures: the real data under ../shared/data (or $ELQUERY_DATA), skipped when absent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def data_root() -> Path:
    return Path(os.environ.get("ELQUERY_DATA", REPO.parent / "shared" / "data"))


def require_data(relative: str) -> Path:
    path = data_root() / relative
    if not path.exists():
        pytest.skip(f"real data not found at {path} (set ELQUERY_DATA to the shared data folder)")
    return path


@pytest.fixture(scope="session")
def dbpedia_sample() -> Path:
    """The real DBpedia 2015-10 sample (98 entities)."""
    return require_data("dbpedia-2015-10-sample")


@pytest.fixture(scope="session")
def elq_data() -> Path:
    return require_data("elq")


SPARK_MASTER = "local[2]"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One Spark session in local mode (two cores) for the ``--engine spark`` tests; they are
    skipped, with the reason, when the optional extra ``elquery[spark]`` is not installed."""
    pytest.importorskip("pyspark", reason="the optional extra is not installed: pip install 'elquery[spark]'")
    from elquery.spark import session

    spark = session(SPARK_MASTER)
    yield spark
    spark.stop()
