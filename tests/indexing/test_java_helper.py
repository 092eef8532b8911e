"""The shipped jars are the builds of the sources in the repository (indexing/java/build.py): one
per source tree, ``indexing/java`` and ``retrieval/java``, and together they are the JVM's class
path and every Java source of the repository."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from elquery.kb.jvm import helper_jars

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "indexing" / "java" / "build.py"


def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("java_helper_build", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


BUILD = build_script()
TREES = {tree.jar.name: tree for tree in BUILD.TREES}


def recorded(jar: Path) -> dict[str, str]:
    with zipfile.ZipFile(jar) as opened:
        lines = opened.read(BUILD.BUILD_INFO).decode().splitlines()
    return dict(line.split(": ", 1) for line in lines)


def test_the_trees_are_the_class_path_and_all_the_java_sources() -> None:
    assert sorted(TREES) == ["elquery-index.jar", "elquery-retrieval.jar"]
    assert [tree.jar for tree in BUILD.TREES] == helper_jars()
    assert {tree.sources.relative_to(REPO).as_posix() for tree in BUILD.TREES} == {"indexing/java/src",
                                                                                   "retrieval/java/src"}
    everywhere = sorted(p for part in ("indexing", "retrieval", "linking", "evaluation", "elquery")
                        for p in (REPO / part).rglob("*.java"))
    assert everywhere == sorted(p for tree in BUILD.TREES for p in tree.source_files())


@pytest.mark.parametrize("name", TREES)
def test_jar_records_the_current_sources(name: str) -> None:
    tree = TREES[name]
    assert recorded(tree.jar)["sources-sha256"] == tree.source_digest(), (
        f"{tree.sources.relative_to(REPO)} changed: rebuild the jars with `python indexing/java/build.py`"
    )


@pytest.mark.parametrize("name", TREES)
def test_jar_rebuilds_byte_for_byte(name: str, tmp_path: Path) -> None:
    tree = TREES[name]
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac on PATH")
    if BUILD.javac_version(javac) != recorded(tree.jar)["javac"]:
        pytest.skip(f"the jar was built with {recorded(tree.jar)['javac']}, not {BUILD.javac_version(javac)}")
    assert BUILD.build(tree, tmp_path / name, javac).read_bytes() == tree.jar.read_bytes()


def test_a_changed_source_is_seen(tmp_path: Path) -> None:
    """The digest covers every source's path and bytes: a copy with one byte more differs."""
    tree = TREES["elquery-retrieval.jar"]
    copy = tmp_path / "java"
    shutil.copytree(tree.sources, copy / "src")
    copied = BUILD.JavaTree(copy / tree.jar.name)
    assert copied.source_digest() == tree.source_digest()
    first = copied.source_files()[0]
    first.write_bytes(first.read_bytes() + b"\n")
    assert copied.source_digest() != tree.source_digest()
