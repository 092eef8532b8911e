"""Surface-form dictionary and commonness table (methods.md §3).

Build with ``build_store(out, BuildOptions(...))`` (or ``elquery index surface-forms``); read with
``SurfaceFormStore(path)``: ``lookup(text)``, ``lookup_spans(tokens)``, ``commonness(m, e)``,
``aliases(entity)``.
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.indexing.surface_forms.build": ("BuildOptions", "BuildReport", "build_store"),
    "elquery.kb.normalize": ("query_tokens",),
    "elquery.kb.surface_forms.store": ("Alias", "FormEntity", "SurfaceFormStore"),
})

__all__ = ["Alias", "BuildOptions", "BuildReport", "FormEntity", "SurfaceFormStore", "build_store", "query_tokens"]
