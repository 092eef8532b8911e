"""Raw FACC1 annotations -> counts (docs/surface-forms.md): a hand-checked sample, an independent
count of generated annotations with malformed lines under a memory budget that forces spilling,
every published container format, the command line, and the surface-form build from raw files."""

from __future__ import annotations

import bz2
import gzip
import io
import random
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.kb.normalize import normalize
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms import facc_annotations
from elquery.indexing.surface_forms.facc_annotations import Rejected, annotation_pair, count_annotations
from elquery.kb.surface_forms.store import SurfaceFormStore
from conftest import counted_line_by_line, read_pair_counts  # tests/conftest.py, on the path as pytest loads it
from conftest import write_compressed as _compressed

DOC = "clueweb09-en0000-00-00001\tUTF-8\t"

# Hand-written lines in FACC1's layout (document, encoding, mention, begin, end, posterior,
# context-only probability, mid); the expected counts below were worked out by hand.
SAMPLE = "".join(DOC + line + "\n" for line in [
    "Food and Drug Administration\t21312\t21340\t0.9998256\t0.00057182228\t/m/032mx",
    "FDA\t21303\t21306\t0.9998256\t0.00057182228\t/m/032mx",
    "fda\t100\t103\t0.62\t0.0001\t/m/032mx",            # same form as "FDA"; posterior below 0.7
    "F.D.A.\t200\t206\t0.91\t0.0001\t/m/032mx",          # "f d a": punctuation separates tokens
    "Cafe\u0301\t5\t10\t0.99\t0.2\t/m/0cafe",            # decomposed accent: NFKC makes "café"
    "CAFÉ\t30\t34\t0.7\t0.2\t/m/0cafe",                  # casefolded to "café"; posterior exactly 0.7
    "Café\t40\t44\t0.8\t0.2\t/m/0other",                 # same form, another entity
    "!!!\t50\t53\t0.9\t0.1\t/m/0cafe",                   # normalizes to nothing
    "",                                                   # malformed: three columns only
    "FDA\t21303\t21306\t0.99\t/m/032mx",                  # malformed: 7 columns
    "FDA\tx\t21306\t0.99\t0.1\t/m/032mx",                 # malformed: begin offset not a number
    "FDA\t1\t4\t1.5\t0.1\t/m/032mx",                      # malformed: posterior above 1
    "FDA\t1\t4\tnan?\t0.1\t/m/032mx",                     # malformed: posterior not a number
    "FDA\t1\t4\t0.9\t0.1\tm.032mx",                       # malformed: not a FACC1 mid
])
EXPECTED_ALL = {("f d a", "/m/032mx"): 1, ("fda", "/m/032mx"): 2, ("food and drug administration", "/m/032mx"): 1,
                ("café", "/m/0cafe"): 2, ("café", "/m/0other"): 1}
EXPECTED_POSTERIOR_07 = {("f d a", "/m/032mx"): 1, ("fda", "/m/032mx"): 1, ("food and drug administration", "/m/032mx"): 1,
                         ("café", "/m/0cafe"): 2, ("café", "/m/0other"): 1}


def test_hand_checked_sample(tmp_path: Path) -> None:
    source = _compressed(tmp_path / "00.anns.tsv", SAMPLE.encode("utf-8"))
    report = count_annotations([source], tmp_path / "counts.tsv", workers=1)
    assert read_pair_counts(tmp_path / "counts.tsv") == EXPECTED_ALL
    (counts,) = report.files
    assert (counts.lines, counts.counted, counts.empty_form, counts.malformed) == (14, 7, 1, 6)
    assert [e.split(":")[0] for e in counts.examples] == ["line 9", "line 10", "line 11", "line 12", "line 13"]
    assert report.pairs == 5
    count_annotations([source], tmp_path / "strict.tsv", min_posterior=0.7, workers=1)
    assert read_pair_counts(tmp_path / "strict.tsv") == EXPECTED_POSTERIOR_07
    lines = (tmp_path / "counts.tsv").read_text(encoding="utf-8").splitlines()
    assert lines == sorted(lines)


def test_every_published_container_gives_the_same_counts(tmp_path: Path) -> None:
    data = SAMPLE.encode("utf-8")
    plain = _compressed(tmp_path / "a.tsv", data)
    gz = _compressed(tmp_path / "b.tsv.gz", data)
    bz = _compressed(tmp_path / "c.tsv.bz2", data)
    archive = tmp_path / "ClueWeb09_English_1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:  # the distribution form: an archive of .tsv members
        for name, member in (("en0000/00.anns.tsv", data), ("en0000/01.anns.tsv.gz", gzip.compress(data)),
                             ("en0000/README", b"not annotations")):
            info = tarfile.TarInfo(name)
            info.size = len(member)
            tar.addfile(info, io.BytesIO(member))
    report = count_annotations([plain, gz, bz, archive], tmp_path / "counts.tsv", workers=2)
    assert read_pair_counts(tmp_path / "counts.tsv") == {key: 5 * n for key, n in EXPECTED_ALL.items()}
    assert [f.malformed for f in report.files] == [6, 6, 6, 12]


def _generated(rng: random.Random, lines: int) -> tuple[str, Counter, int]:
    """Random annotations (Zipfian-ish mentions in random case, a few hundred mids, malformed
    lines mixed in) and their counts computed here, line by line, with min_posterior 0.5."""
    words = ["new", "york", "Yankees", "obama", "Straße", "ÉCOLE", "zürich", "tokyo", "o'hare", "x"]
    out, expected, malformed = [], Counter(), 0
    for number in range(lines):
        mention = " ".join(rng.choice(words) for _ in range(rng.choice((1, 1, 2, 3))))
        mention = mention.upper() if rng.random() < 0.2 else mention
        mid = f"/m/0{rng.randrange(400):x}"
        posterior = rng.random()
        kind = rng.random()
        if kind < 0.03:
            out.append(f"{DOC}{mention}\t{number}\t{number + 4}\t{posterior:.4f}\t{mid}")  # 7 columns
            malformed += 1
        elif kind < 0.05:
            out.append(f"{DOC}{mention}\t{number}\tend\t{posterior:.4f}\t0.1\t{mid}")  # bad offset
            malformed += 1
        else:
            out.append(f"{DOC}{mention}\t{number}\t{number + 4}\t{posterior:.6f}\t0.1\t{mid}")
            if posterior >= 0.5:
                expected[(normalize(mention), mid)] += 1
    return "".join(line + "\n" for line in out), expected, malformed


def test_counts_equal_an_independent_count_when_spilling(tmp_path: Path) -> None:
    rng = random.Random(7)
    expected, malformed, files = Counter(), 0, []
    for number in range(3):
        text, counts, bad = _generated(rng, 150_000)
        expected += counts
        malformed += bad
        files.append(_compressed(tmp_path / f"{number:02d}.anns.tsv.gz", text.encode("utf-8")))
    # 1 MB holds about 3,500 distinct raw pairs and each ~10 MB file is read in 4 MB blocks of
    # ~20,000 distinct pairs: every block spills a sorted run, and a pair's counts span runs
    report = count_annotations(files, tmp_path / "counts.tsv", min_posterior=0.5, memory_mb=1, workers=2)
    assert read_pair_counts(tmp_path / "counts.tsv") == dict(expected)
    assert report.total("malformed") == malformed
    assert report.total("lines") == 450_000
    assert all(f.runs >= 3 for f in report.files)
    runs = list(tmp_path.glob(".facc-counts-*"))
    assert runs == []  # the run files are removed


def test_cli_counts_and_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "facc" / "en0000").mkdir(parents=True)  # directories are searched recursively
    source = _compressed(tmp_path / "facc" / "en0000" / "00.anns.tsv", SAMPLE.encode("utf-8"))
    run = [sys.executable, "-m", "elquery", "index", "facc-counts"]
    done = subprocess.run(run + [str(tmp_path / "facc"), "--out", str(tmp_path / "counts.tsv")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert read_pair_counts(tmp_path / "counts.tsv") == EXPECTED_ALL
    assert f"{source}: 6 malformed line(s)" in done.stderr
    for args, words in (([str(tmp_path / "missing")], "no such file or directory"),
                        ([str(source), "--min-posterior", "2"], "--min-posterior must be between 0 and 1")):
        failed = subprocess.run(run + args + ["--out", str(tmp_path / "bad.tsv")], capture_output=True, text=True)
        assert failed.returncode != 0
        assert words in failed.stderr and "Traceback" not in failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "bad.tsv").exists()


def test_a_bad_archive_is_one_line_and_leaves_no_output(tmp_path: Path) -> None:
    broken = tmp_path / "ClueWeb12_00.tar.gz"
    broken.write_bytes(gzip.compress(b"this is not a tar archive" * 100))
    with pytest.raises(ElqueryError, match="not a readable tar archive"):
        count_annotations([broken], tmp_path / "counts.tsv", workers=1)
    assert not (tmp_path / "counts.tsv").exists()


def _store_pairs(db: Path) -> dict[tuple[str, str], int]:
    with SurfaceFormStore(db) as store:
        return {(p.form, p.entity): p.facc for p in store.pairs() if p.facc > 0}


def test_surface_forms_from_raw_annotations_equal_those_from_their_counts(dbpedia_sample: Path, tmp_path: Path) -> None:
    """Raw annotations over the sample's real Freebase links: building with --facc-annotations
    gives the store that the counts of `facc-counts` give through --facc."""
    links = []
    with bz2.open(dbpedia_sample / "freebase_links_en.ttl.bz2", "rt", encoding="utf-8") as dump:
        for line in dump:
            subject, _, obj = line.split(" ", 3)[:3]
            if obj.startswith("<http://rdf.freebase.com/ns/m."):
                title = subject[len("<http://dbpedia.org/resource/"):-1]
                links.append((title.replace("_", " "), "/m/" + obj[len("<http://rdf.freebase.com/ns/m."):-1]))
    assert len(links) > 50
    rng = random.Random(3)
    text = "".join(f"{DOC}{rng.choice((title, title.upper()))}\t1\t9\t{rng.random():.3f}\t0.1\t{mid}\n"
                   for title, mid in links for _ in range(rng.randrange(1, 4)))
    raw = _compressed(tmp_path / "00.anns.tsv.gz", text.encode("utf-8"))
    count_annotations([raw], tmp_path / "counts.tsv", min_posterior=0.2, workers=1)
    common = {"dumps": (dbpedia_sample,), "kb_aliases": False, "workers": 1, "progress": False}
    from_raw = build_store(tmp_path / "raw.db", BuildOptions(facc_annotations=(raw,), min_posterior=0.2, **common))
    build_store(tmp_path / "counted.db", BuildOptions(facc=(tmp_path / "counts.tsv",), **common))
    pairs = _store_pairs(tmp_path / "raw.db")
    assert pairs and pairs == _store_pairs(tmp_path / "counted.db")
    assert from_raw.facc_annotations is not None and from_raw.facc_annotations.total("malformed") == 0


def test_a_mention_that_is_not_utf8_makes_its_lines_malformed(tmp_path: Path) -> None:
    lines = (DOC.encode() + b"caf\xe9\t1\t5\t0.9\t0.1\t/m/0cafe\n") * 3 + (DOC + "café\t1\t5\t0.9\t0.1\t/m/0cafe\n").encode()
    source = _compressed(tmp_path / "latin1.tsv", lines)
    report = count_annotations([source], tmp_path / "counts.tsv", workers=1)
    assert read_pair_counts(tmp_path / "counts.tsv") == {("café", "/m/0cafe"): 1}
    (counts,) = report.files
    assert (counts.malformed, counts.counted) == (3, 1)
    assert counts.examples == ["3 line(s) with mention b'caf\\xe9' and mid b'/m/0cafe'"]


def test_bytes_that_are_not_utf8_in_a_checked_field_make_the_line_malformed(tmp_path: Path) -> None:
    good = (DOC + "FDA\t1\t4\t0.9\t0.1\t/m/032mx\n").encode()
    lines = good + DOC.encode() + b"FDA\t1\t4\t0.9\t0.1\t/m/0\xff\n" + DOC.encode() + b"FDA\t1\t4\t0.\xe9\t0.1\t/m/032mx\n" + good
    source = _compressed(tmp_path / "bytes.tsv", lines)
    report = count_annotations([source], tmp_path / "counts.tsv", workers=1)
    assert read_pair_counts(tmp_path / "counts.tsv") == {("fda", "/m/032mx"): 2}
    (counts,) = report.files
    assert (counts.lines, counts.counted, counts.malformed) == (4, 2, 2)
    assert [e.split(":")[0] for e in counts.examples] == ["line 2", "line 3"]


def test_empty_files_and_members_hold_no_lines(tmp_path: Path) -> None:
    empty = _compressed(tmp_path / "empty.tsv", b"")
    empty_gz = _compressed(tmp_path / "empty.tsv.gz", b"")
    archive = tmp_path / "ClueWeb12_00.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, member in (("0000tw/0000tw-00.anns.tsv", b""), ("0000tw/0000tw-01.anns.tsv", SAMPLE.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(member)
            tar.addfile(info, io.BytesIO(member))
    report = count_annotations([empty, empty_gz, archive], tmp_path / "counts.tsv", workers=1)
    assert read_pair_counts(tmp_path / "counts.tsv") == EXPECTED_ALL
    assert [f.lines for f in report.files] == [0, 0, 14]


def test_many_runs_are_merged_in_rounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More run files than the merge fan-in (here 2): intermediate merges, same counts."""
    monkeypatch.setattr(facc_annotations, "MERGE_FAN_IN", 2)
    rng = random.Random(11)
    expected, files = Counter(), []
    for number in range(5):
        text, counts, _ = _generated(rng, 20_000)
        expected += counts
        files.append(_compressed(tmp_path / f"{number:02d}.anns.tsv.bz2", text.encode("utf-8")))
    count_annotations(files, tmp_path / "counts.tsv", min_posterior=0.5, memory_mb=1, workers=2)
    assert read_pair_counts(tmp_path / "counts.tsv") == dict(expected)
    assert list(tmp_path.glob(".facc-counts-*")) == []


def test_the_one_line_function_gives_the_same_counts_and_tallies(tmp_path: Path) -> None:
    """annotation_pair (for engines that distribute lines, e.g. Spark) over every line of the
    hand-checked sample and of generated annotations equals what count_annotations writes and reports."""
    text, _, _ = _generated(random.Random(5), 20_000)
    extra = (DOC.encode() + b"caf\xe9\t1\t5\t0.9\t0.1\t/m/0cafe\n" + DOC.encode() + b"caf\xe9\t1\t5\t0.1\t0.1\t/m/0cafe\n"
             + DOC.encode() + b"FDA\t1\t4\t0.9\t0.1\t/m/0\xff\n\n" + (DOC + "x\t1\t4\t0.9\t0.1\t/m/0x\r\n").encode())
    data = SAMPLE.encode() + text.encode() + extra
    source = _compressed(tmp_path / "mixed.tsv.bz2", data)
    for min_posterior in (0.0, 0.5):
        pairs, rejected = counted_line_by_line(data.splitlines(), min_posterior)
        report = count_annotations([source], tmp_path / "counts.tsv", min_posterior=min_posterior, workers=1)
        assert read_pair_counts(tmp_path / "counts.tsv") == dict(pairs)
        (counts,) = report.files
        assert {name: getattr(counts, name) for name in rejected} == dict(rejected)
        assert counts.counted == sum(pairs.values())
    assert annotation_pair(DOC + "Food and Drug Administration\t21312\t21340\t0.9998256\t0.00057182228\t/m/032mx\n") \
        == ("food and drug administration", "/m/032mx")
    assert annotation_pair(DOC + "FDA\t1\t4\t0.62\t0.1\t/m/032mx", 0.7) is Rejected.BELOW_POSTERIOR
    assert annotation_pair(DOC + "!!!\t1\t4\t0.9\t0.1\t/m/032mx") is Rejected.EMPTY_FORM
    assert annotation_pair(DOC + "FDA\t1\t4\t1.5\t0.1\t/m/032mx") is Rejected.MALFORMED
