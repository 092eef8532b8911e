"""The length limit of a query, the same at every door that takes query text: ``elquery link`` and
``elquery rank`` (one query or a query file), the Python API's linkers, and the service's
``/link``, ``/rank``, ``/tag``, ``/spot`` and ``/nif``.

A query is measured in normalized tokens (:func:`elquery.kb.normalize.query_tokens`, methods.md
§3), whatever the door does with it next; a query over the limit is refused with one line, before
any work on it starts (never truncated: a truncated query would silently get another answer).
"""

from __future__ import annotations

from collections.abc import Sequence

from elquery.base import ElqueryError
from elquery.kb.normalize import query_tokens

DEFAULT_MAX_QUERY_TOKENS = 1000
"""The longest query taken, in normalized tokens (web search queries have a handful): a bound on
the work of one query, shared by every entry point (CLI, API, experiments, batches, service)."""


def check_query_length(query: str | Sequence[str], limit: int = DEFAULT_MAX_QUERY_TOKENS,
                       qid: str | None = None) -> None:
    """Refuse a query (its text, or its normalized tokens) longer than ``limit`` tokens: "query of
    N tokens is longer than the limit of L (...)", or "query 'QID' of N tokens ..." for a query of
    a batch."""
    count = len(query_tokens(query) if isinstance(query, str) else query)
    if count > limit:
        name = "query" if qid is None else f"query {qid!r}"
        raise ElqueryError(f"{name} of {count} tokens is longer than the limit of {limit} "
                           "(raise it with --max-query-tokens / max_query_tokens)")


def check_query_limit(limit: int) -> int:
    """``limit`` if it is a valid maximum query length (a whole number >= 1)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ElqueryError(f"the maximum query length must be a whole number of tokens >= 1, got {limit!r}")
    return limit
