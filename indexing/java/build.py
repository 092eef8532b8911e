"""Build elquery's jars reproducibly from the Java sources in the repository.

One jar per source tree, beside it, in the package of the layer whose Java it is (the JVM's class
path, :data:`elquery.kb.jvm.HELPER_JARS`, names them):

* ``indexing/java/elquery-index.jar`` from ``indexing/java/src`` (``org.elquery.index``: writing an
  index, and the index reads of every query);
* ``retrieval/java/elquery-retrieval.jar`` from ``retrieval/java/src`` (``org.elquery.retrieval``:
  the retrieval engine).

Each tree is compiled with ``javac --release 11`` against the Lucene classes of Anserini's fat
jar (the one pyserini ships), the retrieval tree also against the index jar (retrieval may use
indexing, as the Python layers do), and packed in a fixed order with fixed timestamps, so the same
sources and compiler give the same bytes. A jar records the SHA-256 of its sources (and of the
sources of the jars it was compiled against) and the javac version in
``META-INF/elquery-build.txt``; ``tests/indexing/test_java_helper.py`` fails when a shipped jar was
not rebuilt after a change of those sources.

The jars are replaced together, once every tree has compiled (each written beside its jar and
renamed into place): a failed or interrupted build leaves the old jars and no partial file.

Usage: ``python indexing/java/build.py [--javac PATH]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout: elquery.kb is in elquery/kb
from elquery.kb.jvm import anserini_jar, helper_jar_paths  # noqa: E402

BUILD_INFO = "META-INF/elquery-build.txt"
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class JavaTree:
    """A source tree (``src`` beside its jar) and the jar built from it."""

    jar: Path
    needs: tuple[JavaTree, ...] = ()
    """The trees whose jars its sources use (besides Anserini's), built before it."""

    @property
    def sources(self) -> Path:
        return self.jar.parent / "src"

    def source_files(self) -> list[Path]:
        return sorted(self.sources.rglob("*.java"))

    def source_digest(self) -> str:
        """SHA-256 over the sources' paths (relative to ``src``) and contents."""
        digest = hashlib.sha256()
        for path in self.source_files():
            digest.update(path.relative_to(self.sources).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()


_INDEX_JAR, _RETRIEVAL_JAR = helper_jar_paths()
_INDEX = JavaTree(_INDEX_JAR)
TREES = (_INDEX, JavaTree(_RETRIEVAL_JAR, needs=(_INDEX,)))


def javac_version(javac: str) -> str:
    result = subprocess.run([javac, "-version"], capture_output=True, text=True, check=True)
    return (result.stdout or result.stderr).strip()


def build_info(tree: JavaTree, javac: str) -> str:
    against = "".join(f"against-sources-sha256: {need.source_digest()}\n" for need in tree.needs)
    return f"sources-sha256: {tree.source_digest()}\n{against}javac: {javac_version(javac)}\nrelease: 11\n"


def build(tree: JavaTree, out: Path | None = None, javac: str = "javac", needs: Sequence[Path] | None = None) -> Path:
    """Compile and pack ``tree`` into ``out`` (default: its jar), against Anserini's jar and
    ``needs`` (default: the jars of ``tree.needs``); returns the jar's path. The jar is written
    beside ``out`` and renamed into place: none is left half-written."""
    out = tree.jar if out is None else out
    needs = [need.jar for need in tree.needs] if needs is None else needs
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(
            [javac, "--release", "11", "-encoding", "UTF-8", "-nowarn",
             "-cp", os.pathsep.join(map(str, [anserini_jar(), *needs])),
             "-d", classes, *map(str, tree.source_files())],
            check=True,
        )
        entries = {"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\r\n\r\n",
                   BUILD_INFO: build_info(tree, javac).encode()}
        for path in sorted(Path(classes).rglob("*.class")):
            entries[path.relative_to(classes).as_posix()] = path.read_bytes()
        partial = out.with_name(out.name + ".partial")
        try:
            with zipfile.ZipFile(partial, "w") as jar:
                for name, data in entries.items():
                    info = zipfile.ZipInfo(name, _EPOCH)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    jar.writestr(info, data)
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    return out


def build_all(trees: Sequence[JavaTree] = TREES, javac: str = "javac") -> list[Path]:
    """Build every tree, each against the fresh builds of the trees it needs, and replace the jars
    only once all have compiled (a compile error leaves every old jar); returns the jars' paths."""
    fresh: dict[Path, Path] = {}
    try:
        for tree in trees:
            fresh[tree.jar] = build(tree, tree.jar.with_name(tree.jar.name + ".new"), javac,
                                    [fresh.get(need.jar, need.jar) for need in tree.needs])
        for jar, built in fresh.items():
            built.replace(jar)
    finally:
        for built in fresh.values():
            built.unlink(missing_ok=True)
    return [tree.jar for tree in trees]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--javac", default="javac", help="the Java compiler (JDK 11 or later)")
    args = parser.parse_args()
    for jar in build_all(javac=args.javac):
        print(jar)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
