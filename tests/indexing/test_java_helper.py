"""The shipped jars are the builds of the sources in the repository (indexing/java/build.py): one
per source tree, ``indexing/java`` and ``retrieval/java``, and together they are the JVM's class
path and every Java source of the repository."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
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


def test_the_retrieval_jar_is_compiled_against_the_index_jar() -> None:
    """It records the index sources it was compiled against (rebuilt when they change), and its
    entity lookups call the index helper's (no copy of it); the index jar names no retrieval class
    (the layering: retrieval may use indexing, not the reverse)."""
    index, retrieval = TREES["elquery-index.jar"], TREES["elquery-retrieval.jar"]
    assert retrieval.needs == (index,) and index.needs == ()
    assert recorded(retrieval.jar)["against-sources-sha256"] == index.source_digest(), (
        "indexing/java/src changed: rebuild the jars with `python indexing/java/build.py`")
    with zipfile.ZipFile(retrieval.jar) as jar:
        scores = jar.read("org/elquery/retrieval/EntityScores.class")
    assert b"org/elquery/index/IndexAccess" in scores and b"firstDocs" in scores
    with zipfile.ZipFile(index.jar) as jar:
        assert not any(b"org/elquery/retrieval" in jar.read(name) for name in jar.namelist())


def test_a_failed_build_keeps_every_old_jar(tmp_path: Path) -> None:
    """The index tree compiles, the retrieval tree does not: neither jar is replaced, and no file
    is left beside them."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac on PATH")
    copies = {}
    for name, tree in TREES.items():
        folder = tmp_path / tree.sources.parent.parent.name / "java"
        shutil.copytree(tree.sources, folder / "src")
        (folder / name).write_bytes(b"the old jar")
        copies[name] = BUILD.JavaTree(folder / name, tuple(copies[need.jar.name] for need in tree.needs))
    broken = copies["elquery-retrieval.jar"].source_files()[0]
    broken.write_text(broken.read_text(encoding="utf-8") + "\nclass Broken {", encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError):
        BUILD.build_all(list(copies.values()), javac)
    for name, tree in copies.items():
        assert tree.jar.read_bytes() == b"the old jar"
        assert sorted(p.name for p in tree.jar.parent.iterdir()) == sorted(["src", name])
