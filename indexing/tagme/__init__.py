"""The TAGME artefact (methods.md §6), built from DBpedia dumps users can download.

* ``dictionary.db`` (SQLite): the anchor dictionary, i.e. per normalized surface form m its link
  count link(m) and document frequency df(m), and per (m, entity) the link count link(e, m);
* ``inlinks.indptr.npy`` / ``inlinks.indices.npy``: the in-link graph of page_links in CSR form,
  for Milne-Witten relatedness;
* ``meta.json``: format, build parameters and counts.

Build with :func:`elquery.indexing.tagme.build.build_tagme` (``elquery index tagme``); read with
:class:`elquery.kb.tagme.artefact.TagmeArtefact`.
"""
