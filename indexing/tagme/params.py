"""The build-time parameters of the TAGME artefact (methods.md §6), importable without the build's
numpy and tqdm (the command line shows their defaults in its help)."""

from __future__ import annotations

from dataclasses import dataclass

from elquery.base import ElqueryError


@dataclass(frozen=True)
class TagmeBuildParams:
    """Build-time parameters of methods.md §6: link(m) >= ``min_link``; spans of up to
    ``max_tokens`` tokens."""

    min_link: int = 2
    max_tokens: int = 6

    def __post_init__(self) -> None:
        if self.min_link < 1 or self.max_tokens < 1:
            raise ElqueryError("--min-link and --max-tokens must be at least 1")
