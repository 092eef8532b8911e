"""The surface-form store (methods.md §3) as queries read it: :mod:`~elquery.kb.surface_forms.layout`
(format id, source names) and :mod:`~elquery.kb.surface_forms.store` (``SurfaceFormStore``).
Built by :mod:`elquery.indexing.surface_forms`."""
