"""Mention detection (methods.md §3): spans, M_kb ∪ M_w with c ('>='), whitelist."""

from __future__ import annotations

from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.indexing.surface_forms.store import FormEntity
from elquery.indexing.normalize import normalize, query_tokens, tokenize
from elquery.linking.mentions import detect, read_whitelist
from elquery.linking.types import Mention


def test_query_tokens_use_the_shared_normalization() -> None:
    assert query_tokens("Obama's  Mother") == ["obama", "s", "mother"]
    assert query_tokens("café, New-York") == ["café", "new", "york"]
    assert query_tokens(" ?! ") == []


TOKENS = ["new", "york", "pizza"]


def form(entity: str, commonness: float, in_kb: bool) -> FormEntity:
    return FormEntity(entity, int(commonness * 100), commonness, ("kb", "facc") if in_kb else ("facc",))


MATCHES = {
    (0, 2): [form("NYC", 0.7, False), form("NYS", 0.1, True), form("Knicks", 0.09, False)],
    (0, 3): [form("Pizza", 0.0, True)],
    (1, 2): [form("York", 0.05, True), form("Yorkie", 0.1, False)],
}


def test_candidates_are_kb_matches_or_common_enough() -> None:
    found = detect(TOKENS, MATCHES, 0.1)
    assert [(c.mention, c.entity, c.commonness, c.in_kb) for c in found] == [
        (Mention("new york", 0, 2), "NYC", 0.7, False),
        (Mention("new york", 0, 2), "NYS", 0.1, True),
        (Mention("new york pizza", 0, 3), "Pizza", 0.0, True),
        (Mention("york", 1, 2), "York", 0.05, True),   # KB match kept below c
        (Mention("york", 1, 2), "Yorkie", 0.1, False),  # commonness == c is kept ('>=')
    ]


def test_threshold_zero_keeps_everything_and_high_threshold_only_kb() -> None:
    assert len(detect(TOKENS, MATCHES, 0.0)) == 6
    assert [c.entity for c in detect(TOKENS, MATCHES, 0.9)] == ["NYS", "Pizza", "York"]


def test_whitelist_drops_other_entities() -> None:
    found = detect(TOKENS, MATCHES, 0.0, whitelist=frozenset({"NYC", "York"}))
    assert [c.entity for c in found] == ["NYC", "York"]


def test_read_whitelist(tmp_path: Path) -> None:
    path = tmp_path / "whitelist.txt"
    path.write_text("# ERD snapshot\n<dbpedia:New_York_City>\n\nhttp://dbpedia.org/resource/Manhattan\n"
                    "<http://dbpedia.org/resource/Total_Recall_(1990_film)>\n", encoding="utf-8")
    assert read_whitelist(path) == {
        "<dbpedia:New_York_City>", "<dbpedia:Manhattan>", "<dbpedia:Total_Recall_(1990_film)>"}
    # every form an entity may be named in: <dbpedia:X>, X (spaces as underscores), URIs
    path.write_text("\ufeff<dbpedia:A>\nNew York\n<http://example.org/B>\n", encoding="utf-8")
    with pytest.raises(ElqueryError, match=r"whitelist.txt:3: not an entity id"):
        read_whitelist(path)
    path.write_text("\ufeff<dbpedia:A>\nNew York\n", encoding="utf-8")
    assert read_whitelist(path) == {"<dbpedia:A>", "<dbpedia:New_York>"}
    path.write_text("# nothing but a comment\n\n", encoding="utf-8")
    with pytest.raises(ElqueryError, match="names no entity"):
        read_whitelist(path)
    with pytest.raises(ElqueryError, match="missing.txt: no such whitelist file"):
        read_whitelist(tmp_path / "missing.txt")


@pytest.mark.parametrize(("text", "expected"), [
    ("Cafe\u0301 Ｍｕｓｉｃ", "café music"),       # NFD accent and full-width letters: NFKC first
    ("Café Music", "café music"),
    ("ﬁsh №5 ½", "fish no5 1 2"),               # ligature, numero sign, vulgar fraction (NFKC)
    ("STRASSE Straße", "strasse strasse"),       # casefold after NFKC
    ("東京 タワー", "東京 タワー"),
    ("ｶﾀｶﾅ", "カタカナ"),                          # half-width katakana
])
def test_normalization_applies_nfkc_before_casefolding(text: str, expected: str) -> None:
    assert normalize(text) == expected
    assert [t.text for t in tokenize(text)] == expected.split()


@pytest.mark.parametrize("query", [
    "New-York pizza, Manhattan!", "new york new york", "Cafe\u0301 de Flore", "ＮＹＣ  subway",
    "東京 タワー (Tokyo)", "Москва — Санкт-Петербург", "ﬁsh & chips", "  leading and trailing  ",
    "l'été à Paris", "½ marathon",
])
def test_token_offsets_point_into_the_original_text(query: str) -> None:
    """Independent check: each token's character span, normalized on its own, is the token."""
    tokens = tokenize(query)
    assert [t.text for t in tokens] == query_tokens(query)
    for token in tokens:
        assert 0 <= token.start < token.end <= len(query)
        assert token.text in normalize(query[token.start:token.end]).split()
    assert [t.start for t in tokens] == sorted(t.start for t in tokens)
