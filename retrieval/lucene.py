"""The bridge to the Java helper ``org.elquery.retrieval.EntityScores`` (``retrieval/java``).

Reading postings through pyjnius costs about 0.5 us per posting and a Python -> Java call per
step, so scoring runs in Java, one call per query: the request goes over as text, the answer comes
back as one little-endian byte array. The helper jar is loaded with its own class loader (child of
the one holding Lucene), so it works whenever and however :func:`elquery.indexing.jvm.jnius` started the
JVM; its static methods are called through method handles.
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elquery.base import ElqueryError
from elquery.indexing.jvm import java_class

JAR = Path(__file__).resolve().parent / "java" / "elquery-retrieval.jar"
ENTRY_CLASS = "org.elquery.retrieval.EntityScores"


@functools.cache
def _handles() -> dict[str, Any]:
    if not JAR.is_file():
        raise ElqueryError(f"{JAR}: the retrieval helper jar is missing; run `python retrieval/java/build.py`")
    url = java_class("java.io.File")(str(JAR)).toURI().toURL()
    helper = java_class("java.net.URLClassLoader").newInstance([url]).loadClass(ENTRY_CLASS)
    method_type = java_class("java.lang.invoke.MethodType").methodType
    java_lang_class = java_class("java.lang.Class")
    leaf, string = java_lang_class.forName("org.apache.lucene.index.LeafReader"), java_lang_class.forName("java.lang.String")
    returns_bytes = method_type(java_lang_class.forName("[B"), leaf, string)
    lookup = java_class("java.lang.invoke.MethodHandles").publicLookup()
    handles = {name: lookup.findStatic(helper, name, returns_bytes) for name in ("score", "top", "bm25")}
    handles["install"] = lookup.findStatic(helper, "install", method_type(java_class("java.lang.Void").TYPE, leaf, string))
    return handles


def _call(name: str, leaf: Any, request: str) -> bytes:
    arguments = java_class("java.util.ArrayList")()
    arguments.add(leaf)
    arguments.add(request)
    result = _handles()[name].invokeWithArguments(arguments)
    return result.tostring() if result is not None else b""  # tostring() copies at once; bytes() goes byte by byte


def encode_docids(docids: np.ndarray) -> str:
    """Docids for a request line: base64 of little-endian int32."""
    return base64.b64encode(np.ascontiguousarray(docids, dtype="<i4").tobytes()).decode("ascii")


def install(leaf: Any, docids_by_entity_id: np.ndarray) -> None:
    """Give the helper the index's docids in entity-id order (its tie order)."""
    _call("install", leaf, encode_docids(docids_by_entity_id))


@dataclass(frozen=True)
class Scores:
    """Log scores of the requested docids, in request order."""

    known_terms: int
    scores: np.ndarray


@dataclass(frozen=True)
class TopDocs:
    """A ranking: docids and scores, best first (ties by entity id)."""

    known_terms: int
    docids: np.ndarray
    scores: np.ndarray


def score(leaf: Any, request: str) -> Scores:
    raw = _call("score", leaf, request)
    known, n = np.frombuffer(raw, dtype="<i4", count=2)
    return Scores(int(known), np.frombuffer(raw, dtype="<f8", count=n, offset=8))


def top(leaf: Any, request: str, *, bm25: bool = False) -> TopDocs:
    raw = _call("bm25" if bm25 else "top", leaf, request)
    known, n = np.frombuffer(raw, dtype="<i4", count=2)
    scores = np.frombuffer(raw, dtype="<f8", count=n, offset=8)
    return TopDocs(int(known), np.frombuffer(raw, dtype="<i4", count=n, offset=8 + 8 * int(n)), scores)
