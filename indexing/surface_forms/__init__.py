"""Surface-form dictionary and commonness table (methods.md §3).

Build with ``build_store(out, BuildOptions(...))`` (or ``elquery index surface-forms``); read with
``SurfaceFormStore(path)``: ``lookup(text)``, ``lookup_spans(tokens)``, ``commonness(m, e)``,
``aliases(entity)``.
"""

from elquery.indexing.surface_forms.build import BuildOptions, BuildReport, build_store
from elquery.indexing.normalize import query_tokens
from elquery.indexing.surface_forms.store import Alias, FormEntity, SurfaceFormStore

__all__ = ["Alias", "BuildOptions", "BuildReport", "FormEntity", "SurfaceFormStore", "build_store", "query_tokens"]
