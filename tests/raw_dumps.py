"""An independent reading of DBpedia dump lines, for the tests that check what elquery made of
the dumps against it (tests/indexing/test_dbpedia_entity_index.py, test_ltr_fields.py,
tests/ltr/test_ltr_features_sample.py): one regular expression per statement line, the escapes and
the titles in IRIs decoded here, and Lucene's StandardAnalyzer with the 33 English stop words built
from Lucene's classes. None of elquery's reading, tokenizing or normalization code is used (only
its way of starting Java)."""

from __future__ import annotations

import bz2
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from elquery.kb.jvm import java_class

R = "http://dbpedia.org/resource/"

# Lucene's 33-word English stop list (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), written out here.
STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with"
).split()

# One statement per line: <s> <p> (<o> | "literal"(@lang | ^^<dt>)? | _:blank) .
_LINE = re.compile(r'^<([^>]*)> <([^>]*)> (?:<([^>]*)>|"((?:[^"\\]|\\.)*)"(?:@[A-Za-z0-9-]+|\^\^<[^>]*>)?|_:\S+) ?\.\s*$')
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_WIKI_NAMESPACES = {"Category", "File", "Image", "Template", "Portal", "Wikipedia", "Help", "Book", "Draft"}


def statements(path: Path) -> Iterator[tuple[str, str, str | None, str | None]]:
    """``(subject, predicate, IRI object, literal)`` of each statement of a dump file (``.bz2`` or
    plain): exactly one of the object and the literal (unescaped) is None; a statement whose object
    is a blank node is passed over, as are blank and ``#`` lines; any other line fails the test."""
    opener = bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip() or line.startswith("#"):
                continue
            match = _LINE.match(line)
            assert match is not None, f"{path.name}: unexpected line {line[:200]!r}"
            subject, predicate, iri, literal = match.groups()
            if iri is not None or literal is not None:
                yield subject, predicate, iri, None if literal is None else unescape(literal)


def unescape(text: str) -> str:
    """A literal's N-Triples escapes (``\\t``, ``\\"``, ``\\uXXXX``, ``\\UXXXXXXXX``...) decoded."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if code[0] in "uU" and len(code) > 1 else _ESCAPES[code]

    return re.sub(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", one, text)


def uri_title(iri: str) -> str:
    """methods.md §2: the title in the URI, percent-decoded, underscores as spaces, a namespace
    prefix such as ``Category:`` dropped (other colons kept); other IRIs: their local name."""
    local = iri[len(R):] if iri.startswith(R) else re.split(r"[/#]", iri.rstrip("/#"))[-1]
    text = unquote(local).replace("_", " ")
    prefix, colon, rest = text.partition(":")
    return rest if colon and prefix in _WIKI_NAMESPACES else text


class Analyzer:
    """StandardAnalyzer with the 33 English stop words, built here from Lucene's classes."""

    def __init__(self) -> None:
        words = java_class("java.util.ArrayList")()
        for word in STOPWORDS:
            words.add(word)
        stop = java_class("org.apache.lucene.analysis.CharArraySet")(words, False)
        self._analyzer = java_class("org.apache.lucene.analysis.standard.StandardAnalyzer")(stop)
        self._analyze = java_class("io.anserini.analysis.AnalyzerUtils").analyze

    def tokens(self, text: str) -> list[str]:
        return list(self._analyze(self._analyzer, text).toArray()) if text else []

    def counts(self, values: list[str]) -> Counter[str]:
        """Term counts of a field: every value analyzed on its own."""
        counts: Counter[str] = Counter()
        for value in values:
            counts.update(self.tokens(value))
        return counts
