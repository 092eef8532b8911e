"""Surface-form dictionary and commonness table (methods.md §3).

Build with ``build_store(out, BuildOptions(...))`` (or ``elquery index surface-forms``); read with
:class:`elquery.kb.surface_forms.store.SurfaceFormStore` (``lookup(text)``, ``lookup_spans(tokens)``,
``commonness(m, e)``, ``aliases(entity)``). The reader's names (``SurfaceFormStore``, ``FormEntity``,
``Alias``, ``query_tokens``) are kept here for compatibility (one release).
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.indexing.surface_forms.build": ("BuildOptions", "BuildReport", "build_store"),
    "elquery.kb.normalize": ("query_tokens",),
    "elquery.kb.surface_forms.store": ("Alias", "FormEntity", "SurfaceFormStore"),
})

__all__ = ["Alias", "BuildOptions", "BuildReport", "FormEntity", "SurfaceFormStore", "build_store", "query_tokens"]
