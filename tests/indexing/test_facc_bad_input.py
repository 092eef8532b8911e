"""Bad bytes in FACC1 inputs (issue 31, item 2): a bad line is counted, reported with its number
and skipped; an over-long line is a counted malformed line; an unreadable or truncated file is one
line naming it, and the job then writes nothing (docs/commands/index-facc-counts.md). Every input
is real bytes in a temporary file: appended non-UTF-8 lines, random binary files and archive
members, a 10 MB and a 30 MB line, truncated .bz2/.gz/.tgz/.tar, lines of the wrong column count.
The FACC count-file reader of `index surface-forms` is held to the same rules."""

from __future__ import annotations

import bz2
import gzip
import io
import random
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elquery.base import ElqueryError
from elquery.indexing.surface_forms import facc_annotations
from elquery.indexing.surface_forms.facc import FaccReport, read_facc, read_facc_blocks
from elquery.indexing.surface_forms.facc_annotations import (
    MAX_LINE_BYTES,
    Rejected,
    annotation_pair,
    count_annotations,
)
from conftest import counted_line_by_line, read_pair_counts  # tests/conftest.py, on the path as pytest loads it

DOC = b"clueweb09-en0000-00-00001\tUTF-8\t"
FDA = DOC + b"Food and Drug Administration\t21312\t21340\t0.9998256\t0.00057182228\t/m/032mx\n"
COUNTS_LINE = ("facc annotations: {files} file(s), {lines} lines, {counted} counted, 0 below --min-posterior, "
               "0 with an empty form, {malformed} malformed; {runs} sorted run(s) merged into {pairs} (form, mid) pairs")


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "elquery", "index", "facc-counts", *map(str, args), "--workers", "1"],
                          capture_output=True, text=True)


def _tar(path: Path, members: list[tuple[str, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _varied_lines(count: int, seed: int = 7) -> bytes:
    """Well-formed annotations whose compressed form is large enough to cut in the middle."""
    rng = random.Random(seed)
    return b"".join(DOC + f"mention {rng.randrange(10**9)}\t{rng.randrange(9999)}\t{rng.randrange(9999)}\t"
                    f"0.{rng.randrange(999)}\t0.1\t/m/0{rng.randrange(10**6)}\n".encode() for _ in range(count))


def test_an_appended_line_that_is_not_utf8_is_counted_reported_and_skipped(tmp_path: Path) -> None:
    source = tmp_path / "00.anns.tsv"
    source.write_bytes(FDA * 5 + b"bad\xff\xfe line\n" + FDA * 2)
    done = _run(source, "--out", tmp_path / "counts.tsv")
    assert done.returncode == 0, done.stderr
    assert read_pair_counts(tmp_path / "counts.tsv") == {("food and drug administration", "/m/032mx"): 7}
    assert done.stderr.splitlines() == [
        f"{source}: 1 malformed line(s); line 6: 1 column(s), not 8: 'bad\ufffd\ufffd line'",
        COUNTS_LINE.format(files=1, lines=8, counted=7, malformed=1, runs=1, pairs=1),
        f"wrote {tmp_path / 'counts.tsv'}",
    ]


def test_wrong_column_counts_are_counted_exactly_with_their_line_numbers(tmp_path: Path) -> None:
    lines = [
        FDA,
        DOC + b"FDA\t1\t4\t0.9\t/m/032mx\n",               # 2: seven columns
        FDA,
        DOC + b"FDA\t1\t4\t0.9\t0.1\t/m/032mx\textra\n",   # 4: nine columns
        b"\n",                                              # 5: empty
        b"one column\n",                                    # 6
        FDA.replace(b"\n", b"\r\n"),                        # 7: CR LF ends a line: well-formed
        DOC + b"Food\rand Drug\t1\t4\t0.9\t0.1\t/m/032mx\n",  # 8: a carriage return inside the line
        DOC * 5 + b"x\n",                                   # 9: eleven columns
        b"\t" * 7 + b"\n",                                  # 10: eight empty columns
        FDA[:-1],                                           # 11: the last line, without a line end
    ]
    source = tmp_path / "cols.tsv"
    source.write_bytes(b"".join(lines))
    done = _run(source, "--out", tmp_path / "counts.tsv")
    assert done.returncode == 0, done.stderr
    assert read_pair_counts(tmp_path / "counts.tsv") == {("food and drug administration", "/m/032mx"): 4}
    malformed_line, summary, wrote = done.stderr.splitlines()
    shown = [repr(lines[number - 1].rstrip(b"\n").decode()) for number in (2, 4, 8)]
    assert malformed_line == (
        f"{source}: 7 malformed line(s); line 2: 7 column(s), not 8: {shown[0]}; line 4: 9 column(s), not 8: {shown[1]}; "
        f"line 5: 1 column(s), not 8: ''; line 6: 1 column(s), not 8: 'one column'; "
        f"line 8: a carriage return inside the line: {shown[2]}")
    assert summary == COUNTS_LINE.format(files=1, lines=11, counted=4, malformed=7, runs=1, pairs=1)
    # the one-line rules agree, line by line
    assert [annotation_pair(line) for line in lines] == [
        ("food and drug administration", "/m/032mx"), Rejected.MALFORMED, ("food and drug administration", "/m/032mx"),
        Rejected.MALFORMED, Rejected.MALFORMED, Rejected.MALFORMED, ("food and drug administration", "/m/032mx"),
        Rejected.MALFORMED, Rejected.MALFORMED, Rejected.MALFORMED, ("food and drug administration", "/m/032mx")]


def test_bad_lines_in_every_block_keep_their_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks (limit and block size patched), bad lines of every kind spread over them:
    each counted once, with its own line number, whichever block it falls in."""
    monkeypatch.setattr(facc_annotations, "MAX_LINE_BYTES", 300)
    monkeypatch.setattr(facc_annotations, "BLOCK_BYTES", 1000)
    bad = [b"bad\xff\xfe line\n", b"\n", DOC + b"FDA\t1\t4\t0.9\t/m/032mx\n", DOC + b"x" * 400 + b"\t1\t4\t0.9\t0.1\t/m/0x\n",
           b"\xc3\t" * 9 + b"\n", DOC + b"a\rb\t1\t4\t0.9\t0.1\t/m/0x\n", DOC + b"FDA\t1\t4\t7\t0.1\t/m/032mx\n"]
    rng = random.Random(2)
    lines, expected_bad = [], []
    for number in range(1, 601):
        if rng.random() < 0.15:
            lines.append(rng.choice(bad))
            expected_bad.append(number)
        else:
            lines.append(FDA)
    source = tmp_path / "spread.tsv"
    source.write_bytes(b"".join(lines))
    report = count_annotations([source], tmp_path / "counts.tsv", workers=1)
    (counts,) = report.files
    assert (counts.lines, counts.malformed, counts.counted) == (600, len(expected_bad), 600 - len(expected_bad))
    assert [int(e.split(":")[0].split()[-1]) for e in counts.examples] == expected_bad[:5]
    assert read_pair_counts(tmp_path / "counts.tsv") == {("food and drug administration", "/m/032mx"): 600 - len(expected_bad)}


def _binary(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _lines_of(data: bytes) -> int:
    return data.count(b"\n") + (not data.endswith(b"\n"))


def test_a_binary_file_is_all_malformed_lines(tmp_path: Path) -> None:
    data = _binary(300_000, 1)
    assert all(annotation_pair(line) is Rejected.MALFORMED for line in data.split(b"\n"))  # nothing counts
    source = tmp_path / "binary.tsv"
    source.write_bytes(data)
    done = _run(source, "--out", tmp_path / "counts.tsv")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "counts.tsv").read_bytes() == b""
    lines = _lines_of(data)
    assert done.stderr.splitlines()[0].startswith(f"{source}: {lines} malformed line(s); line 1: ")
    assert done.stderr.splitlines()[1] == COUNTS_LINE.format(files=1, lines=lines, counted=0, malformed=lines, runs=0, pairs=0)


def test_a_binary_archive_member_is_malformed_lines_named_by_member(tmp_path: Path) -> None:
    data = _binary(100_000, 2)
    archive = _tar(tmp_path / "ClueWeb12_00.tgz", [("0000tw/0000tw-00.anns.tsv", FDA * 3),
                                                   ("0000tw/0000tw-01.anns.tsv", data),
                                                   ("0000tw/0000tw-02.anns.tsv", FDA * 2)])
    report = count_annotations([archive], tmp_path / "counts.tsv", workers=1)
    (counts,) = report.files
    lines = _lines_of(data)
    assert (counts.lines, counts.counted, counts.malformed) == (5 + lines, 5, lines)
    assert counts.examples[0].startswith("0000tw/0000tw-01.anns.tsv line 1: ")
    assert read_pair_counts(tmp_path / "counts.tsv") == {("food and drug administration", "/m/032mx"): 5}


@pytest.mark.parametrize("megabytes", [10, 30])
def test_a_line_of_many_megabytes_is_one_malformed_line(tmp_path: Path, megabytes: int) -> None:
    huge = DOC + b"x" * (megabytes << 20) + b"\t1\t5\t0.9\t0.1\t/m/0x\n"
    source = tmp_path / "long.tsv.gz"
    source.write_bytes(gzip.compress(FDA * 3 + huge + FDA * 2 + huge[:-1], compresslevel=1))  # the last without \n
    done = _run(source, "--out", tmp_path / "counts.tsv")
    assert done.returncode == 0, done.stderr
    assert read_pair_counts(tmp_path / "counts.tsv") == {("food and drug administration", "/m/032mx"): 5}
    assert done.stderr.splitlines()[:2] == [
        f"{source}: 2 malformed line(s); line 4: longer than {MAX_LINE_BYTES} bytes; line 7: longer than {MAX_LINE_BYTES} bytes",
        COUNTS_LINE.format(files=1, lines=7, counted=5, malformed=2, runs=1, pairs=1)]


def test_the_line_limit_is_exact(tmp_path: Path) -> None:
    """A line of MAX_LINE_BYTES bytes before its line end is read; one byte more is malformed."""
    def line(length: int) -> bytes:
        head, tail = DOC, b"\t1\t5\t0.9\t0.1\t/m/0x\n"
        return head + b"y" * (length - len(head) - len(tail) + 1) + tail
    assert len(line(MAX_LINE_BYTES)) == MAX_LINE_BYTES + 1
    source = tmp_path / "limit.tsv"
    source.write_bytes(FDA + line(MAX_LINE_BYTES) + line(MAX_LINE_BYTES + 1) + FDA)
    report = count_annotations([source], tmp_path / "counts.tsv", workers=1)
    (counts,) = report.files
    assert (counts.lines, counts.counted, counts.malformed) == (4, 3, 1)
    assert counts.examples == [f"line 3: longer than {MAX_LINE_BYTES} bytes"]
    assert annotation_pair(line(MAX_LINE_BYTES)) == ("y" * (MAX_LINE_BYTES - len(DOC) - 18), "/m/0x")
    assert annotation_pair(line(MAX_LINE_BYTES + 1)) is Rejected.MALFORMED


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _one_line_failure(done: subprocess.CompletedProcess[str], out: Path, message: str) -> None:
    assert done.returncode == 2
    assert done.stderr == f"elquery: error: {message}\n"
    assert not out.exists()
    assert not list(out.parent.glob(".facc-counts-*"))


@pytest.mark.parametrize("name, compress, reason", [
    ("cut.tsv.bz2", bz2.compress, "Compressed file ended before the end-of-stream marker was reached"),
    ("cut.tsv.gz", gzip.compress, "Compressed file ended before the end-of-stream marker was reached"),
])
def test_a_truncated_compressed_file_is_one_line_and_nothing_is_written(tmp_path: Path, name: str, compress,
                                                                        reason: str) -> None:
    source = tmp_path / name
    source.write_bytes(_cut(compress(_varied_lines(20_000))))
    good = tmp_path / "good.tsv"
    good.write_bytes(FDA)
    out = tmp_path / "counts.tsv"
    _one_line_failure(_run(good, source, "--out", out), out, f"{source}: truncated or corrupt file ({reason})")


@pytest.mark.parametrize("name, mode", [("ClueWeb12_00.tgz", "w:gz"), ("ClueWeb12_00.tar", "w"),
                                        ("ClueWeb12_00.tar.bz2", "w:bz2")])
def test_a_truncated_archive_is_one_line_and_nothing_is_written(tmp_path: Path, name: str, mode: str) -> None:
    whole = _tar(tmp_path / ("whole-" + name), [("0000tw/0000tw-00.anns.tsv", _varied_lines(20_000, 1)),
                                               ("0000tw/0000tw-01.anns.tsv", _varied_lines(20_000, 2))], mode)
    source = tmp_path / name
    data = whole.read_bytes()
    source.write_bytes(data[: len(data) * 3 // 4])  # inside the second member
    out = tmp_path / "counts.tsv"
    _one_line_failure(_run(source, "--out", out), out,
                      f"{source}: member 0000tw/0000tw-01.anns.tsv: truncated or corrupt file (unexpected end of data)")


def test_a_member_that_is_not_gzip_names_the_archive_and_the_member(tmp_path: Path) -> None:
    data = _binary(10_000, 3)
    archive = _tar(tmp_path / "ClueWeb12_01.tgz", [("0000tw/0000tw-00.anns.tsv", FDA), ("0000tw/0000tw-01.anns.gz", data)])
    out = tmp_path / "counts.tsv"
    _one_line_failure(_run(archive, "--out", out), out,
                      f"{archive}: member 0000tw/0000tw-01.anns.gz: truncated or corrupt file "
                      f"(Not a gzipped file ({data[:2]!r}))")


def test_a_file_that_is_not_gzip_is_named(tmp_path: Path) -> None:
    data = _binary(10_000, 4)
    source = tmp_path / "00.anns.tsv.gz"
    source.write_bytes(data)
    out = tmp_path / "counts.tsv"
    _one_line_failure(_run(source, "--out", out), out,
                      f"{source}: truncated or corrupt file (Not a gzipped file ({data[:2]!r}))")


# The FACC count-file reader of `index surface-forms`: the same rules for its three-column rows.

def _read(path: Path, mids: dict[str, int]) -> tuple[list[tuple[str, int, int]], FaccReport]:
    results = []
    for reader in (read_facc, read_facc_blocks):
        report = FaccReport()
        rows = []
        for chunk in reader(path, mids, report):
            rows += [(form, int(entity), int(count)) for form, entity, count in zip(chunk.forms, chunk.entities, chunk.counts)
                     if entity >= 0]
        results.append((rows, report))
    assert results[0][0] == results[1][0] and results[0][1] == results[1][1]  # both readers, the same
    return results[0]


def test_a_count_file_row_that_is_not_utf8_is_malformed(tmp_path: Path) -> None:
    source = tmp_path / "counts.tsv"
    source.write_bytes(b"Tokyo\t/m/07dfk\t3\ncaf\xe9\t/m/07dfk\t2\nTokyo\t/m/07dfk\t4\n")
    rows, report = _read(source, {"/m/07dfk": 0})
    assert rows == [("Tokyo", 0, 3), ("Tokyo", 0, 4)]
    assert (report.rows, report.malformed_rows, report.errors) == (3, 1, [f"{source}:2: not valid UTF-8"])


def test_a_truncated_count_file_is_one_error_naming_it(tmp_path: Path) -> None:
    source = tmp_path / "counts.tsv.bz2"
    source.write_bytes(_cut(bz2.compress(b"".join(f"form {i}\t/m/0{i}\t{i + 1}\n".encode() for i in range(200_000)))))
    with pytest.raises(ElqueryError) as error:
        _read(source, {})
    assert str(error.value) == (f"{source}: truncated or corrupt file "
                                "(Compressed file ended before the end-of-stream marker was reached)")


# Arbitrary bytes (hypothesis): the column-wise counting equals the one-line rule, line for line.

_PIECES = [b"clueweb09-en0000-00-00001", b"UTF-8", b"Caf\xc3\xa9", b"caf\xe9", b"FDA", b"!!!", b"12", b"x1", b"0.5",
           b"0.95", b"1.5", b".7", b"1e-1", b"/m/032mx", b"/m/0X", b"\t", b"\t", b"\t", b"\t", b"\n", b"\r", b"\r\n",
           b"\xff\xfe", b"\x00", b" ", b"y" * 40]


def _annotation_line(fields: list[bytes]) -> bytes:
    return b"\t".join(fields) + b"\n"


_GOOD_LINE = st.builds(lambda mention, begin, posterior, mid: _annotation_line(
    [b"doc", b"UTF-8", mention, begin, begin, posterior, b"0.1", mid]),
    st.sampled_from([b"FDA", b"fda", b"Caf\xc3\xa9", b"caf\xe9", b"!!!", b"F\rDA"]), st.sampled_from([b"1", b"22", b"x"]),
    st.sampled_from([b"0.5", b"0.95", b"1.5", b".7", b"1e-1", b"nan"]), st.sampled_from([b"/m/032mx", b"/m/0X", b"/m/0c"]))
_DATA = st.lists(st.one_of(_GOOD_LINE, st.lists(st.sampled_from(_PIECES), max_size=12).map(b"".join), st.binary(max_size=60)),
                 max_size=40).map(b"".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_DATA, min_posterior=st.sampled_from([0.0, 0.6]))
def test_counting_any_bytes_equals_the_one_line_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes,
                                                     min_posterior: float) -> None:
    monkeypatch.setattr(facc_annotations, "MAX_LINE_BYTES", 96)  # over-long lines and many blocks, in small data
    monkeypatch.setattr(facc_annotations, "BLOCK_BYTES", 200)
    source = tmp_path / "fuzz.tsv"
    source.write_bytes(data)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    pairs, rejected = counted_line_by_line(lines, min_posterior)
    report = count_annotations([source], tmp_path / "counts.tsv", min_posterior=min_posterior, workers=1)
    (counts,) = report.files
    assert (counts.lines, counts.counted, counts.malformed, counts.below_posterior, counts.empty_form) == (
        len(lines), sum(pairs.values()), rejected["malformed"], rejected["below_posterior"], rejected["empty_form"])
    assert read_pair_counts(tmp_path / "counts.tsv") == dict(pairs)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.one_of(st.sampled_from([b"Tokyo\t/m/07dfk\t3\n", b"caf\xe9\t/m/07dfk\t2\n", b"x\tm.07dfk\t0\n",
                                                 b"\t", b"\n", b"\r", b"\xff", b"/m/0", b"12", b"\xef\xbb\xbf"]),
                               st.binary(max_size=20)), max_size=30).map(b"".join))
def test_the_count_file_readers_take_any_bytes_alike(tmp_path: Path, data: bytes) -> None:
    source = tmp_path / "fuzz-counts.tsv"
    source.write_bytes(data)
    rows, report = _read(source, {"/m/07dfk": 0})  # both readers, the same rows and report; nothing raised
    assert report.rows == report.mapped_rows + report.unmapped_rows + report.malformed_rows
    assert all(form.encode("utf-8") for form, _, _ in rows)  # every form can be stored


def test_the_spark_engine_counts_bad_lines_and_refuses_a_damaged_file_alike(spark, tmp_path: Path) -> None:
    from conftest import SPARK_MASTER
    from elquery.indexing.surface_forms.facc_spark import count_annotations_spark

    bad = tmp_path / "bad.tsv"
    bad.write_bytes(FDA * 2 + b"bad\xff\xfe line\n" + DOC + b"x" * (MAX_LINE_BYTES + 5) + b"\n" + FDA)
    member = _tar(tmp_path / "ClueWeb12_02.tgz", [("0000tw/0000tw-00.anns.tsv", _binary(20_000, 5) + b"\n" + FDA)])
    local = count_annotations([bad, member], tmp_path / "local.tsv", workers=1)
    distributed = count_annotations_spark([bad, member], tmp_path / "spark.tsv", master=SPARK_MASTER)
    assert distributed.files == local.files
    assert (tmp_path / "spark.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()
    assert local.files[0].examples == ["line 3: 1 column(s), not 8: 'bad\ufffd\ufffd line'",
                                       f"line 4: longer than {MAX_LINE_BYTES} bytes"]
    truncated = tmp_path / "cut.tsv.gz"
    truncated.write_bytes(_cut(gzip.compress(_varied_lines(20_000))))
    with pytest.raises(ElqueryError) as error:
        count_annotations_spark([bad, truncated], tmp_path / "failed.tsv", master=SPARK_MASTER)
    assert str(error.value) == (f"{truncated}: truncated or corrupt file "
                                "(Compressed file ended before the end-of-stream marker was reached)")
    assert not (tmp_path / "failed.tsv").exists()


def test_index_surface_forms_skips_a_bad_count_row_and_refuses_a_truncated_count_file(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "freebase_links_en.ttl").write_bytes(
        b"<http://dbpedia.org/resource/Tokyo> <http://www.w3.org/2002/07/owl#sameAs> <http://rdf.freebase.com/ns/m.07dfk> .\n")
    counts = tmp_path / "counts.tsv"
    counts.write_bytes(b"Tokyo\t/m/07dfk\t3\ncaf\xe9\t/m/07dfk\t2\nTokyo\t/m/07dfk\t4\n")
    run = [sys.executable, "-m", "elquery", "index", "surface-forms", "--dumps", str(dumps), "--no-kb-aliases",
           "--workers", "1", "--out"]
    done = subprocess.run(run + [str(tmp_path / "sf.db"), "--facc", str(counts)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{counts}:2: not valid UTF-8" in done.stderr.splitlines()
    assert "facc: 1 files, 3 rows, 2 mapped, 1 malformed (skipped)" in done.stderr
    truncated = tmp_path / "cut.tsv.bz2"
    truncated.write_bytes(_cut(bz2.compress(b"".join(f"form {i}\t/m/0{i}\t{i + 1}\n".encode() for i in range(200_000)))))
    failed = subprocess.run(run + [str(tmp_path / "failed.db"), "--facc", str(counts), str(truncated)],
                            capture_output=True, text=True)
    assert failed.returncode == 2
    assert failed.stderr == (f"elquery: error: {truncated}: truncated or corrupt file "
                             "(Compressed file ended before the end-of-stream marker was reached)\n")
    assert not (tmp_path / "failed.db").exists()
