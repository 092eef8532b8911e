"""Entity ids: elquery names a DBpedia entity ``<dbpedia:Title>``, Title exactly as in its
resource IRI ``http://dbpedia.org/resource/Title``. :func:`canonical_entity_id` is the one rule
every command and API that takes an entity applies to what a user typed."""

from __future__ import annotations

import re
from urllib.parse import quote

DBPEDIA_RESOURCE = "http://dbpedia.org/resource/"
DBPEDIA_ESCAPED = '"%?#<>[]^`{|}\\'
"""Characters a DBpedia 2015-10 IRI writes percent-encoded (``%22`` for ``"``, ``%3F`` for ``?``)."""
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def entity_id(iri: str) -> str | None:
    """``http://dbpedia.org/resource/Title`` -> ``<dbpedia:Title>`` (Title kept exactly as in the
    URI); ``None`` for any other IRI."""
    if iri.startswith(DBPEDIA_RESOURCE) and len(iri) > len(DBPEDIA_RESOURCE):
        return f"<dbpedia:{iri[len(DBPEDIA_RESOURCE):]}>"
    return None


def canonical_entity_id(text: str) -> str | None:
    """An entity as a user may name it, in elquery's form ``<dbpedia:Title>``: ``<dbpedia:Title>``,
    a DBpedia resource URI (bare or in angle brackets), or a bare title (spaces become
    underscores, as in DBpedia's URIs); ``None`` for anything else (another URI, an empty title,
    whitespace inside an id). The one rule every command and API that takes an entity applies.

    A bare title is encoded as DBpedia writes its IRIs (:func:`dbpedia_title`), so a Wikipedia
    title (``--entity-ids wikipedia``) reads back as its DBpedia id.

    A bare ``Q42`` is read here, with no identifiers table at hand, as the title ``<dbpedia:Q42>``;
    where the index's identifiers table is at hand (whitelists, ``/entity/ID``, qrels, runs, LTR
    ground truth) :func:`elquery.kb.identifiers.resolve` first reads it as a Wikidata QID (the
    bare-Q rule, docs/identifiers.md)."""
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if text.startswith("dbpedia:"):
        text = DBPEDIA_RESOURCE + text[len("dbpedia:"):]
    elif "://" not in text and text:
        text = DBPEDIA_RESOURCE + dbpedia_title(text.replace(" ", "_"))
    found = entity_id(text)
    return found if found is not None and not any(c.isspace() for c in found) else None


def dbpedia_title(title: str) -> str:
    """A title as a DBpedia 2015-10 IRI writes it: each character of :data:`DBPEDIA_ESCAPED`
    percent-encoded, except a ``%`` that already starts an escape (``%3F``; MediaWiki titles hold
    no such sequence, so one is DBpedia's)."""
    kept = {match.start() for match in _ESCAPE.finditer(title)}
    return "".join(quote(c, safe="") if c in DBPEDIA_ESCAPED and i not in kept else c for i, c in enumerate(title))
