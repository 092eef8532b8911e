"""The surface-form store's format id and the names of its sources (the schema is described in
:mod:`elquery.kb.surface_forms.store`), importable without numpy or pyarrow: mention
detection and the command line read them."""

FORMAT = "elquery-surface-forms/2"
FORMAT_PREFIX = "elquery-surface-forms/"
"""What every format of the store starts with: a store of an earlier one is to be rebuilt."""
KB, FACC, ANCHORS = "kb", "facc", "anchors"
SOURCE_ORDER = (KB, FACC, ANCHORS)
