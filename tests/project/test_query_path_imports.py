"""The query path reads the knowledge base through elquery.kb, apart from the build pipelines
(issue 28.2): importing what links and ranks queries (the searcher, the linker, the method
registry, batch linking and ranking, the service's app) loads neither the dump parser
(``indexing/ntriples.py``) nor the modules that write an index. Before, ``Searcher`` imported the
tie order's function from ``indexing/index_files.py``, the index writer, and with it the Lucene
document writer and the N-Triples parser; and batch ranking, the learning-to-rank model and the
service took the artefact checks and the provenance reader from ``indexing/artefacts.py``,
``indexing/build_outputs.py`` and ``indexing/provenance.py`` (now ``elquery.kb.artefacts`` and
``elquery.kb.provenance``)."""

from __future__ import annotations

import json
import subprocess
import sys

QUERY_PATH = ("elquery.retrieval.searcher", "elquery.linking.linker", "elquery.linking.methods",
              "elquery.retrieval.batch", "elquery.linking.batch", "elquery.serve.app")
BUILD = ("elquery.indexing.ntriples", "elquery.indexing.index_files", "elquery.indexing.lucene_writer",
         "elquery.indexing.entity_documents", "elquery.indexing.build_index", "elquery.indexing.artefacts",
         "elquery.indexing.build_outputs", "elquery.indexing.provenance")


def test_the_query_path_loads_no_build_module() -> None:
    probe = (f"import importlib, json, sys\nfor name in {QUERY_PATH!r}: importlib.import_module(name)\n"
             "print(json.dumps(sorted(sys.modules)))")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    loaded = set(json.loads(completed.stdout))
    assert set(QUERY_PATH) <= loaded  # the probe imported them
    assert sorted(loaded & set(BUILD)) == []


def test_the_tie_order_has_one_definition() -> None:
    """The index writer writes the tie order the searcher computes for an older index: one function."""
    from elquery.indexing import index_files
    from elquery.kb import entity_index

    assert index_files.id_rank is entity_index.id_rank
    assert entity_index.id_rank(["b", "a", "c", "B"]).tolist() == [2, 1, 3, 0]  # by code point: B < a < b < c
