"""Query tokenization folds a text whole when that gives what folding one cluster at a time
gives (:func:`elquery.kb.normalize.tokenize`): the same tokens and offsets for every code point
and for random mixes of Latin, Greek, Cyrillic, CJK, Hangul (syllables and jamo), combining
marks, ligatures, full-width and half-width forms and characters casefolding changes in length."""

from __future__ import annotations

import random

from elquery.kb.normalize import _folds_in_place, _tokenize_clusters, normalize, tokenize

POOL = ([chr(c) for c in range(0x20, 0x250)] + [chr(c) for c in range(0x300, 0x370)]
        + [chr(c) for c in range(0x370, 0x500)]
        + list("ßİﬁ½№ＮＹＣｶﾀ東京タワー한국어\u1100\u1161\u11a8\u0cd5\u0c95\u093f\u0915\u200d\u00a0\u2126\u212b -_'"))


def test_every_code_point_alone() -> None:
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        assert tokenize(char) == _tokenize_clusters(char), hex(code)


def test_random_mixes() -> None:
    rng = random.Random(30)
    whole = 0
    for _ in range(30_000):
        text = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 14)))
        whole += _folds_in_place(text)
        assert tokenize(text) == _tokenize_clusters(text), repr(text)
        assert [t.text for t in tokenize(text)] == normalize(text).split()
    assert 0.2 < whole / 30_000 < 0.8  # both ways taken


def test_which_texts_fold_whole() -> None:
    for text in ("москва санкт-петербург", "l'été à paris", "東京 タワー", "한국어 과학"):
        assert _folds_in_place(text)
    for text in ("Cafe\u0301", "Straße", "ﬁsh", "ＮＹＣ", "İstanbul", "\u1100\u1161"):  # mark, ß, NFKC, İ, jamo
        assert not _folds_in_place(text)
    assert [(t.text, t.start, t.end) for t in tokenize("L'Été à Paris")] == [
        ("l", 0, 1), ("été", 2, 5), ("à", 6, 7), ("paris", 8, 13)]
