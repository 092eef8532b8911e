"""The fast paths of raw FACC1 counting (issue 30) against the plain definitions they replace: the
vectorized normalization of ASCII mentions against :func:`normalize` itself, the k-way merge of
run files against a Counter of their rows, and a gzip-compressed tar archive that ends at a member
boundary without its gzip trailer (refused as a whole, where tarfile's own reading took the members
before the cut for the whole archive)."""

from __future__ import annotations

import io
import random
import tarfile
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elquery.base import ElqueryError
from elquery.kb.normalize import normalize
from elquery.indexing.surface_forms import facc_annotations
from elquery.indexing.surface_forms.facc_annotations import (
    _CHECKS,
    _decimals,
    _forms,
    _made_of,
    _merged,
    _normalized,
    _NOT_DIGIT_BYTES,
    _NOT_MID_BYTES,
    _sorted,
    _write_run,
    count_annotations,
    merge_groups,
)

DOC = "clueweb12-0000tw-00-00001\tUTF-8\t"


def _python_forms(mentions: list[bytes]) -> list[str | None]:
    """The definition: normalize() of the UTF-8 text, None where the bytes are not UTF-8."""
    forms: list[str | None] = []
    for mention in mentions:
        try:
            forms.append(normalize(mention.decode("utf-8")))
        except UnicodeDecodeError:
            forms.append(None)
    return forms


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: bytes(c & 0x7F for c in b)), max_size=30))
def test_ascii_mentions_normalize_as_normalize_does(mentions: list[bytes]) -> None:
    """Every ASCII byte (controls, punctuation, digits, both cases, DEL) in any order."""
    assert _forms(pa.array(mentions, pa.binary())).to_pylist() == _python_forms(mentions)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=10).map(lambda t: t.encode("utf-8")), st.binary(max_size=8)), max_size=30))
def test_mixed_mentions_normalize_as_normalize_does(mentions: list[bytes]) -> None:
    """Unicode text (NFKC, casefolding beyond ASCII) beside ASCII, and bytes that are not UTF-8 (null)."""
    assert _forms(pa.array(mentions, pa.binary())).to_pylist() == _python_forms(mentions)


def test_normalized_forms_of_real_shapes() -> None:
    mentions = [b"Food and Drug Administration", b"F.D.A.", b"  U.S.  ", b"AT&T", b"!!!", b"", b"Cafe\xcc\x81",
                b"CAF\xc3\x89", b"\xef\xbc\xae\xef\xbc\xb9\xef\xbc\xa3", b"caf\xe9", b"tab\there", b"O'Neil_s"]
    assert _forms(pa.array(mentions, pa.binary())).to_pylist() == [
        "food and drug administration", "f d a", "u s", "at t", "", "", "café", "café", "nyc", None, "tab here", "o neil s"]



# Texts whose normalization could leak across the newline that joins them (_normalized): combining
# marks first (NFKC composes only within a text), Hangul jamo split over two texts, casefolding
# that changes lengths (ß, ﬁ), final sigma, full-width letters, separators only, underscores,
# Unicode spaces, digits of other scripts, a newline inside a text, empty texts.
TRICKY = ["\u0301e", "Cafe\u0301", "\u1100", "\u1161\u11a8", "STRASSE ß", "\ufb01ne", "ΟΔΟΣ", "ὈΔΥΣΣΕΎΣ",
          "ＮＹＣ　２", "!!!", "", " ", "_a_b_", "\u00a0x\u2003y\u3000", "٣٤ ١٢", "a\nb", "\n", "İstanbul", "ǅemal",
          "x\u200by", "\u2163 \u2460", "日本 語", "\t\r"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TRICKY) | st.text(st.characters(exclude_categories=("Cs",)), max_size=6), max_size=40))
def test_texts_normalized_together_as_one_by_one(texts: list[str]) -> None:
    """All the non-ASCII mentions of a spill are normalized in one pass: exactly normalize() of each."""
    assert _normalized(texts) == [normalize(text) for text in texts]


def test_tricky_texts_normalized_together_as_one_by_one() -> None:
    texts = [text for text in TRICKY if "\n" not in text]
    assert _normalized(texts) == [normalize(text) for text in texts]
    assert _normalized(texts)[:3] == ["e", "café", "\u1100"]  # a mark first is no letter; NFKC within each text


FIELD_BYTES = b"0123456789./m_az\xff-e+ "
FIELD = st.binary(max_size=9).map(lambda b: bytes(FIELD_BYTES[c % len(FIELD_BYTES)] for c in b))


@settings(max_examples=300, deadline=None)
@given(st.lists(FIELD | st.sampled_from([b"0.5", b"/m/0x_9", b"123", b".", b"1..2", b"/m/", b"/m/A"]), max_size=30),
       st.integers(0, 3))
def test_column_checks_are_the_patterns(values: list[bytes], cut: int) -> None:
    """The numpy checks of offsets, mids and posteriors (bytes outside the allowed ones found at
    once, then their rows; dots per value) against the patterns of annotation_pair, also on an
    array that starts inside its buffers (a slice)."""
    column = pa.array([b"9.9..x"] * cut + values, pa.binary()).slice(cut)
    chunked = pa.chunked_array([column], pa.binary())
    digits, number, mid = _CHECKS[0][1], _CHECKS[2][1], _CHECKS[3][1]
    assert _made_of(chunked, _NOT_DIGIT_BYTES).tolist() == [bool(digits.fullmatch(v)) for v in values]
    assert (_made_of(chunked, _NOT_MID_BYTES, 3) & np.array([v.startswith(b"/m/") for v in values], bool)).tolist() == [
        bool(mid.fullmatch(v)) for v in values]
    exponent_free = [bool(number.fullmatch(v)) and b"e" not in v.lower() for v in values]
    assert _decimals(chunked).tolist() == exponent_free



def test_a_mid_prefix_cleared_never_hides_a_bad_byte() -> None:
    """The first bytes of each value are set aside before the bad bytes are looked for: past the
    data's end (an empty last value) nothing of the value before is set aside."""
    assert _made_of(pa.chunked_array([pa.array([b"/m/0-", b""], pa.binary())]), _NOT_MID_BYTES, 3).tolist() == [False, False]
    values = [b"/m", b"/m/0a", b"/", b"/m/-", b"/m/x", b"m"]
    assert _made_of(pa.chunked_array([pa.array(values, pa.binary())]), _NOT_MID_BYTES, 3).tolist() == [
        False, True, False, False, True, False]



@pytest.mark.parametrize("runs, fan_in", [(76, 64), (64, 64), (65, 64), (1, 64), (130, 64), (5, 2), (1000, 7)])
def test_merge_rounds_split_the_runs_evenly(runs: int, fan_in: int) -> None:
    """Each run once, in order; as few groups as hold at most fan_in each; sizes within one."""
    groups = merge_groups(runs, fan_in)
    assert [index for group in groups for index in range(runs)[group]] == list(range(runs))
    sizes = [len(range(runs)[group]) for group in groups]
    assert len(groups) == -(-runs // fan_in) and max(sizes) <= fan_in and max(sizes) - min(sizes) <= 1
    if (runs, fan_in) == (76, 64):
        assert sizes == [38, 38]


def _run(tmp_path: Path, rows: list[tuple[str, str, int]], batch_rows: int) -> Path:
    table = pa.table({"form": [r[0] for r in rows], "mid": [r[1] for r in rows], "count": [r[2] for r in rows]},
                     schema=facc_annotations.RUN_SCHEMA)
    return _write_run([_sorted(table)], tmp_path, "run-", batch_rows)


@pytest.mark.parametrize("memory_mb, batch_rows", [(1, 3), (1, 1000), (64, 7)])
def test_the_merge_of_runs_sums_every_pair_in_line_order(tmp_path: Path, memory_mb: int, batch_rows: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs overlapping in their pairs (forms that are prefixes of others, non-ASCII forms, a run
    with no rows), merged holding a few rows of each (many steps) or all: each pair once, its
    counts summed, in the order of the lines ``form<TAB>mid<TAB>count`` as Python sorts them."""
    monkeypatch.setattr(facc_annotations, "MERGE_ROW_BYTES", 2**20 // 50)  # 1 MB: 50 rows held in all
    rng = random.Random(3)
    forms = ["ab", "ab c", "abc", "a", "b", "é", "ée", "z", "zz 9", "日本", "1", "10", "1 0"]
    mids = ["/m/0a", "/m/0a_", "/m/0b", "/m/01"]
    expected: Counter[tuple[str, str]] = Counter()
    runs = []
    for number in range(7):
        pairs = rng.sample([(f, m) for f in forms for m in mids], rng.randint(0, 40)) if number else []
        rows = [(form, mid, rng.randint(1, 9)) for form, mid in pairs]
        expected.update({(form, mid): count for form, mid, count in rows})
        runs.append(_run(tmp_path, rows, batch_rows))
    lines = [f"{form}\t{mid}\t{count}" for table in _merged(runs, memory_mb)
             for form, mid, count in zip(*(column.to_pylist() for column in table.columns))]
    assert lines == sorted(f"{form}\t{mid}\t{count}" for (form, mid), count in expected.items())


def _tar(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_tgz_cut_at_a_member_boundary_is_refused_as_a_whole(tmp_path: Path) -> None:
    """The archive's first member whole, compressed, then nothing: no gzip trailer, no second member."""
    first = (DOC + "FDA\t1\t4\t0.9\t0.1\t/m/032mx\n").encode() * 40_000  # 2.4 MB: read well before the cut
    whole = _tar([("0000tw/0000tw-00.anns.tsv", first), ("0000tw/0000tw-01.anns.tsv", first)])
    cut = 512 + len(first) + (-len(first)) % 512  # the first member's header and padded data
    compressor = zlib.compressobj(wbits=31)
    source = tmp_path / "ClueWeb12_00.tgz"
    source.write_bytes(compressor.compress(whole[:cut]) + compressor.flush(zlib.Z_SYNC_FLUSH))
    out = tmp_path / "counts.tsv"
    with pytest.raises(ElqueryError, match=r"truncated or corrupt file \(unexpected end of data\)"):
        count_annotations([source], out, workers=1)
    assert not out.exists()
    good = tmp_path / "ClueWeb12_01.tgz"  # the same archive whole: both members counted
    compressor = zlib.compressobj(wbits=31)
    good.write_bytes(compressor.compress(whole) + compressor.flush())
    report = count_annotations([good], out, workers=1)
    assert out.read_text() == "fda\t/m/032mx\t80000\n" and report.total("lines") == 80_000
