"""Document frequencies df(m) of dictionary forms over DBpedia long abstracts (methods.md §6).

TAGME's link probability divides link(m) by the number of Wikipedia articles whose text
contains m. DBpedia carries no full article text; its long abstracts (``dbo:abstract``, the text
before an article's first section) stand in for it. Each abstract is normalized like every surface
form (methods.md §3) and each of its token n-grams (up to ``max_tokens`` tokens) that is a
dictionary form counts once for that abstract. N-grams are grown token by token only while they
are a prefix of some form, so most stop after one token.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tqdm import tqdm

from elquery.kb.normalize import normalize
from elquery.indexing.ntriples import ObjectKind, ParseReport, read_triples

ABSTRACT = "http://dbpedia.org/ontology/abstract"


def phrase_prefixes(forms: Iterable[str]) -> dict[str, bool]:
    """Every token prefix of every form, mapped to whether it is itself a form."""
    prefixes: dict[str, bool] = {}
    for form in forms:
        tokens = form.split(" ")
        for end in range(1, len(tokens)):
            prefixes.setdefault(" ".join(tokens[:end]), False)
        prefixes[form] = True
    return prefixes


def forms_in(tokens: list[str], prefixes: dict[str, bool], max_tokens: int) -> set[str]:
    """The distinct dictionary forms occurring as token n-grams of ``tokens``."""
    found: set[str] = set()
    for start in range(len(tokens)):
        phrase = tokens[start]
        for end in range(start + 1, min(start + max_tokens, len(tokens)) + 1):
            if end > start + 1:
                phrase = f"{phrase} {tokens[end - 1]}"
            is_form = prefixes.get(phrase)
            if is_form is None:
                break
            if is_form:
                found.add(phrase)
    return found


def document_frequencies(
    abstracts: Path, prefixes: dict[str, bool], max_tokens: int, report: ParseReport
) -> tuple[Counter[str], int]:
    """(df per form, number of abstracts read) over the ``dbo:abstract`` literals of a dump."""
    df: Counter[str] = Counter()
    documents = 0
    for triple in tqdm(read_triples(abstracts, report), desc="abstracts", unit=" triples", disable=None):
        if triple.predicate == ABSTRACT and triple.kind is ObjectKind.LITERAL:
            documents += 1
            df.update(forms_in(normalize(triple.object).split(), prefixes, max_tokens))
    return df, documents
