"""Entity linking in queries (methods.md §1, §3-5).

::

    from elquery.linking import Linker
    with Linker(index_dir, surface_forms_db, method="mlmcg", gif_threshold=20) as linker:
        linker.link("new york pizza manhattan")    # [Interpretation(annotations, score)], best first
        linker.rank("new york pizza manhattan")    # [MappedEntity(entity, score, mention)]
        linker.link_many([("q1", "obama's mother")], workers=2)   # LinkResult per query, in order
    Linker.demo().link("new york new jersey")      # the bundled demo knowledge base
    open_linker("tagme", {"tagme": tagme_dir})     # any method of the registry METHODS, e.g. TAGME
    Linker(index_dir, surface_forms_db, method="ltr", model="model.onnx")   # learning to rank

Modules: :mod:`elquery.linking.mentions` (mention detection), :mod:`elquery.linking.methods` (the
registry of methods, one module each: CMNS, MLM, MLMc, MLMcg, TAGME, LTR), :mod:`elquery.linking.gif`
(GIF, TopRanked), :mod:`elquery.linking.ranking` (semantic mapping), :mod:`elquery.linking.linker` (the
pipeline), :mod:`elquery.formats.link_output` (elq / trec / jsonl runs), :mod:`elquery.linking.cli` (``elquery link``).
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.linking.linker": ("Linker",),
    "elquery.linking.methods": ("METHODS", "open_linker"),
    "elquery.linking.types": ("Candidate", "Interpretation", "LinkResult", "Mention", "MappedEntity",
        "ScoredMention"),
})

__all__ = ["METHODS", "Candidate", "Interpretation", "LinkResult", "Linker", "Mention", "MappedEntity", "ScoredMention",
           "open_linker"]
