"""Entity ids: elquery names a DBpedia entity ``<dbpedia:Title>``, Title exactly as in its
resource IRI ``http://dbpedia.org/resource/Title``. :func:`canonical_entity_id` is the one rule
every command and API that takes an entity applies to what a user typed."""

from __future__ import annotations

DBPEDIA_RESOURCE = "http://dbpedia.org/resource/"


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
        text = DBPEDIA_RESOURCE + text.replace(" ", "_")
    found = entity_id(text)
    return found if found is not None and not any(c.isspace() for c in found) else None
