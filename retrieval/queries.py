"""Query files as the retrieval layer reads them: the format is :mod:`elquery.formats.queries`
(TSV or JSON, the qid and blank-query rules, :func:`check_query_text`), re-exported here for the
code that imports it from this module; what is the retrieval layer's own is turning a record into
what a searcher ranks (:func:`searched_query`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from elquery.formats.queries import BLANK, WHAT, QueryRecord, check_query_text, read_queries

if TYPE_CHECKING:
    from elquery.retrieval.scoring import LinkedQuery

__all__ = ["BLANK", "WHAT", "QueryRecord", "check_query_text", "read_queries", "searched_query"]


def searched_query(record: QueryRecord) -> str | LinkedQuery:
    """What a searcher ranks for ``record``: its text, or its text with its links."""
    if not record.links:
        return record.text
    from elquery.retrieval.scoring import LinkedQuery  # numpy and Java: not loaded to read queries

    return LinkedQuery(record.text, record.links)
