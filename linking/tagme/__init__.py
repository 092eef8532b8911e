"""TAGME baseline (methods.md §6) over the artefact of ``elquery index tagme``."""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.linking.tagme.annotator": ("TagmeLinker",),
    "elquery.linking.tagme.params": ("TagmeParams",),
})

__all__ = ["TagmeLinker", "TagmeParams"]
