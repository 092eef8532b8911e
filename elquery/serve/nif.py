"""GERBIL's NIF interface: a NIF document in Turtle in, the same document with its entity
annotations out (GERBIL's A2KB experiment). RDF is read and written with pyoxigraph.

Each ``nif:Context`` with a ``nif:isString`` is linked; each annotation of its best
interpretation becomes a ``nif:Phrase`` ``<CONTEXT_BASE#char=START,END>`` with
``nif:referenceContext``, ``nif:anchorOf``, ``nif:beginIndex``, ``nif:endIndex`` (character
offsets into the context string) and ``itsrdf:taIdentRef`` (the DBpedia resource).
"""

from __future__ import annotations

from collections.abc import Callable

import pyoxigraph as rdf

from elquery.linking.types import LinkResult

NIF = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#"
ITSRDF = "http://www.w3.org/2005/11/its/rdf#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD_NON_NEGATIVE = "http://www.w3.org/2001/XMLSchema#nonNegativeInteger"
DBPEDIA = "http://dbpedia.org/resource/"
PREFIXES = {"nif": NIF, "itsrdf": ITSRDF, "xsd": "http://www.w3.org/2001/XMLSchema#", "dbr": DBPEDIA}


class NifError(ValueError):
    """The document is not Turtle, or holds no context to annotate."""


def annotate(document: bytes, link: Callable[[str], LinkResult]) -> bytes:
    """The document with the annotations of every context added (Turtle)."""
    try:
        triples = list(rdf.parse(document, format=rdf.RdfFormat.TURTLE))
    except SyntaxError as exc:
        raise NifError(f"not a Turtle document: {exc}") from None
    contexts = {t.subject for t in triples
                if t.predicate.value == RDF_TYPE and getattr(t.object, "value", None) == NIF + "Context"}
    texts = {t.subject: t.object.value for t in triples
             if t.subject in contexts and t.predicate.value == NIF + "isString" and isinstance(t.object, rdf.Literal)}
    if not texts:
        raise NifError("no nif:Context with a nif:isString to annotate")
    added = []
    for context, text in sorted(texts.items(), key=lambda item: str(item[0])):
        result = link(text)
        best = result.interpretations[0].annotations if result.interpretations else ()
        base = context.value.split("#", 1)[0] if isinstance(context, rdf.NamedNode) else "urn:elquery:phrase"
        for annotation in best:
            start, end = result.char_span(annotation.mention)
            phrase = rdf.NamedNode(f"{base}#char={start},{end}")
            added += [
                rdf.Triple(phrase, rdf.NamedNode(RDF_TYPE), rdf.NamedNode(NIF + "Phrase")),
                rdf.Triple(phrase, rdf.NamedNode(NIF + "referenceContext"), context),
                rdf.Triple(phrase, rdf.NamedNode(NIF + "anchorOf"), rdf.Literal(text[start:end])),
                rdf.Triple(phrase, rdf.NamedNode(NIF + "beginIndex"), rdf.Literal(str(start), datatype=rdf.NamedNode(XSD_NON_NEGATIVE))),
                rdf.Triple(phrase, rdf.NamedNode(NIF + "endIndex"), rdf.Literal(str(end), datatype=rdf.NamedNode(XSD_NON_NEGATIVE))),
                rdf.Triple(phrase, rdf.NamedNode(ITSRDF + "taIdentRef"),
                           rdf.NamedNode(DBPEDIA + annotation.entity[len("<dbpedia:"):-1])),
            ]
    turtle = rdf.serialize(triples + added, format=rdf.RdfFormat.TURTLE, prefixes=PREFIXES)
    assert turtle is not None  # serialize returns the bytes when given no output to write to
    return turtle
