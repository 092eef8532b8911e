"""The file formats of elquery, on the ground floor: every layer (indexing, retrieval, linking,
evaluation, the service, experiments) reads and writes its files through these modules, which
import nothing but the standard library, :mod:`elquery.base` and :mod:`elquery.files`.

One module per format, its reader and its writer together (docs/formats.md):

* :mod:`~elquery.formats.lines`: the one line reader (BOM, line ends, blank lines, the line limit,
  ``-``) and the fields several formats share (query ids, numbers);
* :mod:`~elquery.formats.queries`: query files (TSV, JSON), the blank-query rule;
* :mod:`~elquery.formats.trec_run`: TREC runs; :mod:`~elquery.formats.trec_qrels`: TREC qrels
  (graded);
* :mod:`~elquery.formats.elq`: ELQ runs and qrels (interpretations);
* :mod:`~elquery.formats.jsonl`: JSON Lines;
* :mod:`~elquery.formats.link_output`: the ``elq``, ``trec`` and ``jsonl`` outputs of ``elquery link``;
* :mod:`~elquery.formats.links`: links files (the linked entities the ELR models read);
* :mod:`~elquery.formats.run_metadata`: ``RUN.meta.json`` beside a run.
"""
