"""Entity linking in queries (methods.md §1, §3-5).

::

    from linking import Linker
    with Linker(index_dir, surface_forms_db, method="mlmcg", gif_threshold=20) as linker:
        linker.link("new york pizza manhattan")    # [Interpretation(annotations, score)], best first
        linker.rank("new york pizza manhattan")    # [RankedEntity(entity, score, mention)]
        linker.link_many([("q1", "obama's mother")], workers=2)   # LinkResult per query, in order
    Linker.demo().link("new york new jersey")      # the bundled demo knowledge base

Modules: :mod:`linking.mentions` (mention detection), :mod:`linking.methods` (CMNS, MLM, MLMc,
MLMcg), :mod:`linking.gif` (GIF, TopRanked), :mod:`linking.linker` (the pipeline),
:mod:`linking.output` (elq / trec / jsonl runs), :mod:`linking.cli` (``elquery link``).
"""

from linking.linker import Linker
from linking.types import Candidate, Interpretation, LinkResult, Mention, RankedEntity, ScoredMention

__all__ = ["Candidate", "Interpretation", "LinkResult", "Linker", "Mention", "RankedEntity", "ScoredMention"]
