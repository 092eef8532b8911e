"""TAGME baseline (methods.md §6) over the artefact of ``elquery index tagme``."""

from linking.tagme.annotator import TagmeLinker
from linking.tagme.params import TagmeParams

__all__ = ["TagmeLinker", "TagmeParams"]
