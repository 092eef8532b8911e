"""The knowledge base as every query reads it: the read side of the artefacts ``elquery index``
and ``elquery build`` write.

* :mod:`~elquery.kb.entities`: entity ids ``<dbpedia:Title>`` and the forms a user may name an
  entity in (:func:`~elquery.kb.entities.canonical_entity_id`);
* :mod:`~elquery.kb.normalize`: the one normalization of surface forms, queries and TAGME phrases;
* :mod:`~elquery.kb.index_format` and :mod:`~elquery.kb.entity_index`: the entity index's format
  and its reader (:class:`~elquery.kb.entity_index.EntityIndex`);
* :mod:`elquery.kb.surface_forms`: the surface-form store's format and reader
  (:class:`~elquery.kb.surface_forms.store.SurfaceFormStore`);
* :mod:`elquery.kb.tagme`: the TAGME artefact's format and reader
  (:class:`~elquery.kb.tagme.artefact.TagmeArtefact`);
* :mod:`~elquery.kb.jvm`: starting Java with Lucene and elquery's own Java on the class path;
* :mod:`elquery.kb.demo`: the bundled demo knowledge base's files.

Layering: ``kb`` imports only the bottom modules (``elquery.base``, ...); the build pipelines
(``elquery.indexing``), retrieval and linking import it, never the other way round
(``tests/project/test_layering.py``).
"""
