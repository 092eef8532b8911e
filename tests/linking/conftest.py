"""Fixtures of the linking tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from elquery.linking.tagme import TagmeLinker


@pytest.fixture(scope="module")
def tagme(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TagmeLinker]:
    """TAGME over the demo knowledge base's artefact, built in a cache of the test module's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-tagme")))
        linker = TagmeLinker.demo()
    with linker:
        yield linker
