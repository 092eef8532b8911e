"""The JVM's start-up settings: a heap too small or malformed is one line (Java used to crash
with SIGSEGV or a traceback), and Java's crash reports never land in the user's folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elquery.kb.jvm import heap_megabytes, jvm_options


@pytest.mark.parametrize(("heap", "megabytes"), [("2g", 2048), ("512m", 512), ("65536k", 64), ("1T", 1048576)])
def test_heap_sizes(heap: str, megabytes: float) -> None:
    assert heap_megabytes(heap) == megabytes


@pytest.mark.parametrize(("heap", "message"), [
    ("1k", "ELQUERY_JVM_HEAP=1k: too small, Java needs at least 64m"),
    ("8m", "ELQUERY_JVM_HEAP=8m: too small, Java needs at least 64m"),
    ("4m", "ELQUERY_JVM_HEAP=4m: too small, Java needs at least 64m"),
    ("lots", "ELQUERY_JVM_HEAP='lots': expected a size such as 512m or 4g"),
])
def test_a_bad_heap_is_one_line_before_java_starts(heap: str, message: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    completed = subprocess.run([sys.executable, "-m", "elquery", "link", "new york pizza"], cwd=work,
                               env={**os.environ, "ELQUERY_JVM_HEAP": heap, "ELQUERY_CACHE": str(tmp_path / "cache")},
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2
    assert completed.stderr == f"elquery: error: {message}\n"
    assert list(work.iterdir()) == []  # no hs_err file


def test_crash_reports_go_to_the_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELQUERY_JVM_HEAP", "1g")
    [error_file] = [o for o in jvm_options() if o.startswith("-XX:ErrorFile=")]
    assert Path(error_file.split("=", 1)[1]).parent == Path(__import__("tempfile").gettempdir())
    assert jvm_options()[0] == "-Xmx1g"
