"""FACC1 counting on Spark (``--engine spark``) against the local engine: the same counts file,
byte for byte, and the same per-file report, on the hand-checked sample, every container format
and generated annotations with malformed lines; the command line both ways."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import tarfile
from pathlib import Path

from elquery.indexing.surface_forms.facc_annotations import count_annotations
from elquery.indexing.surface_forms.facc_spark import count_annotations_spark
from conftest import SPARK_MASTER as MASTER  # tests/conftest.py, on the path as pytest loads it
from conftest import read_pair_counts  # tests/conftest.py, on the path as pytest loads it
from test_facc_annotations import EXPECTED_ALL, SAMPLE, _compressed, _generated

REPORTED = ("path", "lines", "counted", "below_posterior", "empty_form", "malformed")


def _report(report) -> list[tuple]:
    return [tuple(getattr(f, name) for name in REPORTED) for f in report.files]


def test_hand_checked_sample_and_every_container(spark, tmp_path: Path) -> None:
    data = SAMPLE.encode("utf-8")
    plain = _compressed(tmp_path / "a.tsv", data)
    bz = _compressed(tmp_path / "c.tsv.bz2", data)
    archive = tmp_path / "ClueWeb09_English_1.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, member in (("en0000/00.anns.tsv", data), ("en0000/README", b"not annotations")):
            info = tarfile.TarInfo(name)
            info.size = len(member)
            tar.addfile(info, io.BytesIO(member))
    report = count_annotations_spark([plain, bz, archive], tmp_path / "spark.tsv", master=MASTER)
    assert read_pair_counts(tmp_path / "spark.tsv") == {key: 3 * n for key, n in EXPECTED_ALL.items()}
    assert [(f.lines, f.counted, f.empty_form, f.malformed) for f in report.files] == [(14, 7, 1, 6)] * 3
    assert [e.split(":")[0] for e in report.files[0].examples] == ["line 9", "line 10", "line 11", "line 12", "line 13"]
    local = count_annotations([plain, bz, archive], tmp_path / "local.tsv", workers=1)
    assert (tmp_path / "spark.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()
    assert _report(report) == _report(local) and report.pairs == local.pairs == 5


def test_generated_annotations_equal_the_local_engine(spark, tmp_path: Path) -> None:
    rng = random.Random(11)
    files, expected_malformed = [], 0
    for number in range(3):
        text, _, bad = _generated(rng, 40_000)
        expected_malformed += bad
        text += "\n" + "clueweb\tUTF-8\tbad\xff\t1\t2\t0.9\t0.1\t/m/0x\n"  # an empty line, a mention not UTF-8
        data = text.encode("utf-8").replace(b"bad\xc3\xbf", b"bad\xff")
        files.append(_compressed(tmp_path / f"{number:02d}.anns.tsv.gz", data))
    spark_report = count_annotations_spark(files, tmp_path / "spark.tsv", min_posterior=0.5, master=MASTER)
    local_report = count_annotations(files, tmp_path / "local.tsv", min_posterior=0.5, memory_mb=1, workers=2)
    assert (tmp_path / "spark.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()
    assert _report(spark_report) == _report(local_report)
    assert sum(f.malformed for f in spark_report.files) == expected_malformed + 2 * 3


def test_command_line_engine_spark(spark, tmp_path: Path) -> None:
    source = _compressed(tmp_path / "00.anns.tsv", SAMPLE.encode("utf-8"))
    run = [sys.executable, "-m", "elquery", "index", "facc-counts", str(source)]
    done = subprocess.run([*run, "--out", str(tmp_path / "s.tsv"), "--engine", "spark", "--master", MASTER],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "6 malformed" in done.stderr
    subprocess.run([*run, "--out", str(tmp_path / "l.tsv")], check=True, capture_output=True, timeout=600)
    assert (tmp_path / "s.tsv").read_bytes() == (tmp_path / "l.tsv").read_bytes()
    wrong = subprocess.run([*run, "--out", str(tmp_path / "x.tsv"), "--master", MASTER], capture_output=True, text=True)
    assert wrong.returncode != 0 and wrong.stderr.strip().splitlines()[-1].endswith("--master goes with --engine spark")
    assert not (tmp_path / "x.tsv").exists()
