"""Opening a TAGME artefact directory (methods.md §6): dictionary, in-link graph, metadata."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from elquery.kb.tagme.graph import InlinkGraph
from elquery.kb.tagme.layout import DICTIONARY_FILE, read_meta
from elquery.kb.tagme.store import AnchorDictionary


class TagmeArtefact:
    """An open artefact built by ``elquery index tagme``. ``graph.entities`` is |E| of the
    Milne-Witten relatedness: the number of pages with at least one in- or out-link in
    page_links (redirects resolved)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.meta: dict[str, Any] = read_meta(self.directory)
        self.dictionary = AnchorDictionary(self.directory / DICTIONARY_FILE)
        self.graph = InlinkGraph(self.directory, int(self.meta["entities"]))

    @property
    def max_tokens(self) -> int:
        """The longest surface form kept by the build, in tokens."""
        return int(self.meta["max_tokens"])

    def close(self) -> None:
        self.dictionary.close()

    def __enter__(self) -> TagmeArtefact:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
