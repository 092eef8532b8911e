"""The FACC step's tasks: consecutive files grouped until a group holds at least
``TASK_INPUT_BYTES`` of input (compressed files counted at their estimated uncompressed size),
every file in one group, in order; no group for no file."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import elquery.indexing.surface_forms.build as build_module


def test_files_grouped_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_module, "TASK_INPUT_BYTES", 100)
    sizes = [30, 50, 40, 120, 10, 99, 1]
    files = []
    for n, size in enumerate(sizes):
        files.append(tmp_path / f"{n}.tsv")
        files[-1].write_bytes(b"x" * size)
    # 30+50+40 = 120 >= 100, then 120, then 10+99, then the last file alone
    assert build_module._file_groups(files) == [files[0:3], files[3:4], files[4:6], files[6:7]]
    assert build_module._file_groups([]) == []
    packed = tmp_path / "packed.tsv.gz"
    packed.write_bytes(gzip.compress(b"x" * 1000, mtime=0))
    assert packed.stat().st_size * build_module.COMPRESSION_RATIO >= 100 > packed.stat().st_size
    assert build_module._file_groups([packed, files[4]]) == [[packed], [files[4]]]
