"""TAGME baseline (methods.md §6) over the artefact of ``elquery index tagme``."""

from elquery.linking.tagme.annotator import TagmeLinker
from elquery.linking.tagme.params import TagmeParams

__all__ = ["TagmeLinker", "TagmeParams"]
