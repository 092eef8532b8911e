"""The TAGME artefact (methods.md §6) as queries read it: :mod:`~elquery.kb.tagme.layout` (file
names, metadata), :mod:`~elquery.kb.tagme.store` (the anchor dictionary),
:mod:`~elquery.kb.tagme.graph` (the in-link graph) and :mod:`~elquery.kb.tagme.artefact`
(``TagmeArtefact``: all three opened). Built by :mod:`elquery.indexing.tagme`."""
