"""Build ``indexing/java/elquery-lucene.jar`` from ``indexing/java/src`` reproducibly.

The sources are compiled with ``javac --release 11`` against the Lucene classes of Anserini's fat
jar (the one pyserini ships), and packed in a fixed order with fixed timestamps, so the same
sources and compiler give the same bytes. The jar records the SHA-256 of its sources and the javac
version in ``META-INF/elquery-build.txt``; ``tests/indexing/test_java_helper.py`` fails when the
shipped jar was not rebuilt after a source change.

Usage: ``python indexing/java/build.py [--javac PATH] [--out JAR]``
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
JAR = HERE / "elquery-lucene.jar"
BUILD_INFO = "META-INF/elquery-build.txt"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def source_files() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def source_digest() -> str:
    """SHA-256 over the sources' relative paths and contents."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(path.relative_to(SOURCES).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def javac_version(javac: str) -> str:
    result = subprocess.run([javac, "-version"], capture_output=True, text=True, check=True)
    return (result.stdout or result.stderr).strip()


def build_info(javac: str) -> str:
    return f"sources-sha256: {source_digest()}\njavac: {javac_version(javac)}\nrelease: 11\n"


def build(out: Path = JAR, javac: str = "javac") -> Path:
    """Compile and pack the helper into ``out``; returns ``out``."""
    sys.path.insert(0, str(HERE.parent.parent))
    from elquery.indexing.jvm import anserini_jar

    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(
            [javac, "--release", "11", "-encoding", "UTF-8", "-nowarn", "-cp", str(anserini_jar()),
             "-d", classes, *map(str, source_files())],
            check=True,
        )
        entries = {"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\r\n\r\n", BUILD_INFO: build_info(javac).encode()}
        for path in sorted(Path(classes).rglob("*.class")):
            entries[path.relative_to(classes).as_posix()] = path.read_bytes()
        partial = out.with_suffix(".jar.partial")
        with zipfile.ZipFile(partial, "w") as jar:
            for name, data in entries.items():
                info = zipfile.ZipInfo(name, _EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                jar.writestr(info, data)
        partial.replace(out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--javac", default="javac", help="the Java compiler (JDK 11 or later)")
    parser.add_argument("--out", type=Path, default=JAR, help="jar to write (default: %(default)s)")
    args = parser.parse_args()
    print(build(args.out, args.javac))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
