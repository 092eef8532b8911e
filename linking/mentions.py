"""Mention detection (methods.md §3): query n-grams, M = M_kb ∪ M_w with commonness threshold c,
optional entity whitelist.

The query is normalized with :func:`elquery.kb.normalize.normalize` (the one normalization shared
with the surface-form store) and split on spaces; every contiguous token span is a possible
mention. The surface-form store looks up all spans at once and answers, per span, the entities it
may name with commonness(m, e) and the sources of the pair (``kb`` when the span is a KB alias of
the entity); this module applies the candidate rules: (m, e) is a candidate if it is a KB match
(M_kb, Eq. 8) or commonness(m, e) >= c (M_w, Eq. 10 with '>=' as in the published runs; c = 0
keeps every web match), and, with a whitelist, only whitelisted entities remain.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from elquery.base import ElqueryError
from elquery.formats.lines import text_lines
from elquery.kb.identifiers import IdentifierTable, parse_identifier, resolve
from elquery.kb.query_length import DEFAULT_MAX_QUERY_TOKENS, check_query_length, check_query_limit
from elquery.kb.surface_forms.layout import KB
from elquery.linking.types import Candidate, Mention

__all__ = ["DEFAULT_MAX_QUERY_TOKENS", "FormEntityLike", "check_query_length", "check_query_limit", "detect",
           "read_whitelist"]


class FormEntityLike(Protocol):
    """An entity a span may name, as the surface-form store reports it
    (:class:`elquery.indexing.surface_forms.store.FormEntity`)."""

    @property
    def entity(self) -> str: ...
    @property
    def commonness(self) -> float: ...
    @property
    def sources(self) -> tuple[str, ...]: ...


def detect(
    tokens: Sequence[str],
    matches: Mapping[tuple[int, int], Iterable[FormEntityLike]],
    commonness_threshold: float,
    whitelist: frozenset[str] | None = None,
) -> list[Candidate]:
    """Candidates M = M_kb ∪ M_w (Eq. 8-10) from the store's ``matches`` per span
    ``(start, end)``; in span order, then by entity id."""
    candidates = []
    for (start, end), found in sorted(matches.items()):
        mention = Mention(" ".join(tokens[start:end]), start, end)
        for match in sorted(found, key=lambda m: m.entity):
            if whitelist is not None and match.entity not in whitelist:
                continue
            in_kb = KB in match.sources
            if in_kb or match.commonness >= commonness_threshold:
                candidates.append(Candidate(mention, match.entity, match.commonness, in_kb))
    return candidates


def read_whitelist(path: Path | str, identifiers: IdentifierTable | None = None) -> frozenset[str]:
    """An entity whitelist: one entity per line in any spelling of
    :data:`elquery.kb.identifiers.SPELLINGS` (a DBpedia id, URI or title, a Wikipedia title or URL,
    and, resolved through the index's ``identifiers`` table, a Wikidata QID, Freebase mid or
    Wikipedia page id); blank lines and ``#`` comments are skipped. A QID, mid or page id no entity
    of the table has (or any, without a table) is left out, and one line on stderr counts them. A
    whitelist naming no entity is an error (it would silently link nothing)."""
    entities = set()
    unknown: list[str] = []
    for number, line in text_lines(path, "whitelist file"):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        named = parse_identifier(text)
        if named is None:
            raise ElqueryError(f"{path}:{number}: not an entity id (expected <dbpedia:Title>, a DBpedia URI, a "
                               f"title or another id of docs/identifiers.md): {text[:80]!r}")
        entity = resolve(text, identifiers)
        if entity is None:
            unknown.append(f"{number}: {text[:80]!r}")
            continue
        entities.add(entity)
    if unknown:
        where = "the index's identifiers table" if identifiers is not None else "no identifiers table (elquery build)"
        print(f"elquery: {path}: {len(unknown)} ids left out, no entity has them in {where} (first: line "
              f"{unknown[0]})", file=sys.stderr)
    if not entities:
        raise ElqueryError(f"{path}: the whitelist names no entity (it would link nothing)")
    return frozenset(entities)



