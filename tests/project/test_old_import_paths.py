"""The modules ``elquery.kb`` took over from ``elquery.indexing`` stay importable under their old
names for one release: each old path gives every public name it had, as the very object of its
new home (so ``isinstance`` and identity hold across both paths)."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

# old module -> (its public names before the move, the modules they live in now)
MOVED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "elquery.indexing.normalize": (("fold", "normalize", "Token", "tokenize", "query_tokens"),
                                   ("elquery.kb.normalize",)),
    "elquery.indexing.index_format": (
        ("FORMAT_VERSION", "FIELDS", "LTR_FIELDS", "TEXT_FIELDS", "STORED_FIELDS", "ENTITY_COUNTS", "ID_FIELD",
         "RELATIONS_FIELD", "TYPED_RELATIONS_FIELD", "METADATA_FILE", "IDS_FILE", "ANALYZER_NAME", "length_field",
         "length_file", "count_field", "count_file", "analyzer"),
        ("elquery.kb.index_format",)),
    "elquery.indexing.entity_index": (("EntityIndex", "RelationStatistics"), ("elquery.kb.entity_index",)),
    "elquery.indexing.jvm": (("DEFAULT_HEAP", "MIN_HEAP_MB", "anserini_jar", "heap_megabytes", "jvm_options", "jnius",
                              "java_class"), ("elquery.kb.jvm",)),
    "elquery.indexing.surface_forms.store": (
        ("SCHEMA", "INDEXES", "LONGEST_FORM_KEY", "FormEntity", "Alias", "commonness_counts", "longest_form_tokens",
         "query_spans", "SurfaceFormStore", "create", "write_shard", "append_shard", "finish", "FORMAT", "KB", "FACC",
         "ANCHORS"),
        ("elquery.kb.surface_forms.store", "elquery.kb.surface_forms.layout",
         "elquery.indexing.surface_forms.store_writer")),
    "elquery.indexing.surface_forms.layout": (("FORMAT", "KB", "FACC", "ANCHORS", "SOURCE_ORDER"),
                                              ("elquery.kb.surface_forms.layout",)),
    "elquery.indexing.tagme.store": (("DictionaryWriter", "FormStats", "Sense", "AnchorDictionary"),
                                     ("elquery.kb.tagme.store", "elquery.indexing.tagme.dictionary_writer")),
    "elquery.indexing.tagme.layout": (("FORMAT", "DICTIONARY_FILE", "INDPTR_FILE", "INDICES_FILE", "META_FILE",
                                       "write_meta", "read_meta"), ("elquery.kb.tagme.layout",)),
    "elquery.indexing.tagme.artefact": (("TagmeArtefact",), ("elquery.kb.tagme.artefact",)),
    "elquery.indexing.tagme.graph": (("InlinkGraph",), ("elquery.kb.tagme.graph",)),
    "elquery.indexing.ntriples": (("DBPEDIA_RESOURCE", "entity_id", "canonical_entity_id"), ("elquery.kb.entities",)),
    "elquery.indexing.surface_forms": (("SurfaceFormStore", "FormEntity", "Alias", "query_tokens"),
                                       ("elquery.kb.surface_forms.store", "elquery.kb.normalize")),
    "elquery.indexing.demo": (("DEMO_DIR", "DUMP_NAMES", "FACC_NAMES", "TAGME_NAMES", "dumps", "facc_files",
                               "tagme_dumps", "cache_dir"), ("elquery.kb.demo",)),
    # issue 28.2: the read side of the artefact checks and of the provenance records
    "elquery.indexing.artefacts": (("INDEX", "SURFACE_FORMS", "TAGME", "KIND_OF", "ArtefactPaths", "BUILT_BY",
                                    "check_artefact", "is_artefacts_dir", "KINDS"), ("elquery.kb.artefacts",)),
    "elquery.indexing.build_outputs": (("KINDS",), ("elquery.kb.artefacts",)),
    "elquery.indexing.provenance": (("FORMAT", "PROVENANCE_FILE", "META_KEY", "ID_LENGTH", "InputFile", "Provenance",
                                     "elquery_version", "read_provenance", "run_metadata"), ("elquery.kb.provenance",)),
}
BUILD_CODE = ("graph", "ntriples", "demo", "surface_forms", "artefacts", "build_outputs", "provenance")
"""The last part of the old modules that still hold build code besides what they re-export."""


def _home(name: str, modules: list[ModuleType]) -> object:
    found = [getattr(m, name) for m in modules if name in vars(m)]
    assert found, f"{name} is in none of {[m.__name__ for m in modules]}"
    return found[0]


@pytest.mark.parametrize("old", MOVED)
def test_the_old_path_gives_the_new_objects(old: str) -> None:
    names, homes = MOVED[old]
    module = importlib.import_module(old)
    modules = [importlib.import_module(home) for home in homes]
    missing = [name for name in names if not hasattr(module, name)]
    assert missing == [], f"{old} lost {missing}"
    assert all(getattr(module, name) is _home(name, modules) for name in names)


@pytest.mark.parametrize("old", [m for m in MOVED if m.rsplit(".", 1)[-1] not in BUILD_CODE])
def test_a_re_export_module_says_it_is_kept_for_compatibility(old: str) -> None:
    """The modules that only re-export (the others still hold build code) say so, and where to go."""
    doc = importlib.import_module(old).__doc__ or ""
    assert doc.startswith("Kept for compatibility (one release)")
    assert all(home in doc for home in MOVED[old][1])
