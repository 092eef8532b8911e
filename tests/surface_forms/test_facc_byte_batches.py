"""The FACC readers' batches of bytes (``byte_batches``), decoded (``_decoded_blocks``), are the
file's text as text mode reads it (UTF-8 with bytes that are not as lone surrogates; LF, CR and
CR LF line ends, a CR LF split between two reads included; a byte order mark at the start dropped,
one later kept; a last line without its line end given one), every over-long line standing as
``LONG_LINE``, whatever the size of a read, plain and compressed."""

from __future__ import annotations

import bz2
import gzip
import io
import random
from pathlib import Path

import pytest

from elquery.indexing.surface_forms import facc
from elquery.indexing.surface_forms.facc import LONG_LINE, _decoded_blocks, byte_batches

LONG = 40  # bytes: a line of more is over-long (facc._LONG_LINE_BYTES, patched)


def _expected(raw: bytes) -> str:
    text = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", errors="surrogateescape", newline=None).read()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return "".join(LONG_LINE if len(line.encode("utf-8", "surrogateescape")) > LONG else line + "\n" for line in lines)


def _raw(rng: random.Random) -> bytes:
    pieces = [b"\xef\xbb\xbf"] if rng.random() < 0.3 else []
    for _ in range(rng.randrange(40)):
        size = rng.choice([0, 1, 5, 20, 30, 100, 300])
        line = bytes(rng.choice(b"ab\t\xc3\xa9\xff\xef\xbb\xbf ") for _ in range(size))
        line = line.replace(b"\xc3\xa9", b"\xc3\xa9")[:size]
        pieces.append(line + rng.choice([b"\n", b"\r\n", b"\r", b"\n"]))
    if pieces and rng.random() < 0.3:
        pieces[-1] = pieces[-1].rstrip(b"\r\n")
    return b"".join(pieces)


@pytest.mark.parametrize("opener", [Path.write_bytes, "gz", "bz2"])
def test_batches_are_the_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opener: object) -> None:
    monkeypatch.setattr(facc, "_LONG_LINE_BYTES", LONG)
    rng = random.Random(5)
    for trial in range(300):
        monkeypatch.setattr(facc, "BLOCK_CHARS", rng.choice([1, 2, 3, 8]))
        monkeypatch.setattr(facc, "BATCH_BLOCKS", rng.choice([1, 2]))  # reads of 1 to 16 bytes: a long line spans several
        raw = _raw(rng)
        if opener == "gz":
            path = tmp_path / f"t{trial}.tsv.gz"
            path.write_bytes(gzip.compress(raw))
        elif opener == "bz2":
            path = tmp_path / f"t{trial}.tsv.bz2"
            path.write_bytes(bz2.compress(raw))
        else:
            path = tmp_path / f"t{trial}.tsv"
            path.write_bytes(raw)
        batches = list(byte_batches(path))
        assert all(batch.endswith((b"\n", b"\r")) for batch in batches)
        assert "".join(block for batch in batches for block in _decoded_blocks(batch)) == _expected(raw), raw
