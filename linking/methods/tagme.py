"""TAGME (methods.md §6): the baseline that finds its own interpretation (parsing, voting,
disambiguation, pruning by rho_NA) over the artefact of ``elquery index tagme``, with
:class:`~elquery.linking.tagme.annotator.TagmeLinker`. Its parameters are
:data:`elquery.linking.tagme.params.PARAMETERS`; on the command line they are ``--tagme-param
NAME=VALUE``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from elquery.linking.methods.method import LinkingMethod, LinkOptions
from elquery.linking.tagme.params import PARAMETERS
from elquery.linking.types import Interpretation, ScoredMention


def interpretations(annotations: Sequence[ScoredMention], rho_na: float) -> list[Interpretation]:
    """TAGME's single interpretation of the annotations with rho >= ``rho_na`` (pruning is
    TAGME's last step, so this equals running it with that threshold)."""
    from elquery.linking.tagme.annotator import TagmeLinker

    return TagmeLinker.interpretations([a for a in annotations if a.score >= rho_na])


def tagme_linker(method: LinkingMethod, artefacts: Mapping[str, object], given: Mapping[str, Any],
                 options: LinkOptions) -> Any:
    """The factory: a :class:`~elquery.linking.tagme.annotator.TagmeLinker`."""
    from elquery.linking.tagme.annotator import TagmeLinker

    values = method.values(given, options.params, options.demo).as_dict()
    return TagmeLinker(artefacts["tagme"], options.max_query_tokens, options.whitelist, **values)  # type: ignore[arg-type]  # a folder path


TAGME = LinkingMethod(
    name="tagme", display="TAGME", summary="the TAGME baseline over a TAGME artefact (methods.md §6)",
    parameters=PARAMETERS, artefacts=("tagme",), finders=(), factory=tagme_linker, tuned=("rho_na",),
    score_threshold="rho_na", interpretations=interpretations, option="--tagme-param")
