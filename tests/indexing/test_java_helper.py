"""The shipped helper jar is the build of the sources in the repository (indexing/java/build.py)."""

from __future__ import annotations

import importlib.util
import shutil
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "indexing" / "java" / "build.py"


def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("java_helper_build", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded(build: ModuleType) -> dict[str, str]:
    with zipfile.ZipFile(build.JAR) as jar:
        lines = jar.read(build.BUILD_INFO).decode().splitlines()
    return dict(line.split(": ", 1) for line in lines)


def test_jar_records_the_current_sources() -> None:
    build = build_script()
    assert recorded(build)["sources-sha256"] == build.source_digest(), (
        "indexing/java/src changed: rebuild the jar with `python indexing/java/build.py`"
    )


def test_jar_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    build = build_script()
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac on PATH")
    if build.javac_version(javac) != recorded(build)["javac"]:
        pytest.skip(f"the jar was built with {recorded(build)['javac']}, not {build.javac_version(javac)}")
    assert build.build(tmp_path / "rebuilt.jar", javac).read_bytes() == build.JAR.read_bytes()
