"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.jvm`; import from
there."""

from __future__ import annotations

from elquery.kb.jvm import (
    DEFAULT_HEAP,
    MIN_HEAP_MB,
    anserini_jar,
    heap_megabytes,
    helper_jars,
    java_class,
    jnius,
    jvm_options,
)

__all__ = [
    "DEFAULT_HEAP",
    "MIN_HEAP_MB",
    "anserini_jar",
    "heap_megabytes",
    "helper_jars",
    "java_class",
    "jnius",
    "jvm_options",
]
