"""The linking methods (methods.md §4-6, §9), one module each, and their registry :data:`METHODS`.

::

    from elquery.linking.methods import METHODS
    method = METHODS.get("mlmcg")                # one line naming the methods if there is none
    method.parameters                            # typed, with defaults (the demo's too), ranges, help
    with method.open({"index": index, "surface_forms": sf}, {"gif_threshold": 5}) as linker:
        linker.link("new york pizza manhattan")

Every door reads the entries: ``elquery link`` (its flags and help), the Python API
(:class:`~elquery.linking.linker.Linker`, :func:`open_linker`), params files, experiment configs,
the service and the documentation table (:func:`markdown_table`). Adding a method is one module
defining its :class:`LinkingMethod` and one registration below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.linking.methods import cmns, ltr, mlm, mlmcg, tagme
from elquery.linking.methods.method import (FINDERS, GIF, TOP_RANKED, CandidateRanking, LinkingMethod, LinkOptions,
                                            MethodValues, RankingInputs, demo_artefacts)
from elquery.registry import Registry

if TYPE_CHECKING:
    from elquery.linking.batch import OpenLinker
    from elquery.linking.params import LinkingParams

METHODS: Registry[LinkingMethod] = Registry("method")
for _method in (cmns.CMNS, mlm.MLM, mlm.MLMC, mlmcg.MLMCG, tagme.TAGME, ltr.LTR):
    METHODS.register(_method)

DEFAULT_METHOD = "mlmcg"


def open_linker(method: str = DEFAULT_METHOD, artefacts: Mapping[str, Path | str] | None = None, *,
                top_ranked: bool = False, whitelist: Iterable[str] | None = None,
                max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS, params: LinkingParams | Path | str | None = None,
                **parameters: Any) -> OpenLinker:
    """The linker of any method over ``artefacts`` (kind -> path: ``index``, ``surface_forms``,
    ``tagme``), or over the bundled demo knowledge base without them (with its defaults), with the
    method's ``parameters`` (the others from ``params``, a params file, else the defaults)."""
    from elquery.linking.params import load_params

    entry = METHODS.get(method)
    demo = artefacts is None
    found: Mapping[str, object] = demo_artefacts(entry.artefacts) if artefacts is None else artefacts
    options = LinkOptions(top_ranked, None if whitelist is None else frozenset(whitelist), max_query_tokens,
                          load_params(params) if isinstance(params, str | Path) else params, demo)
    return entry.open(found, parameters, options)


def markdown_table() -> str:
    """The table of methods of docs/methods.md: name, parameters (ranges, defaults), artefacts,
    interpretation finders."""
    lines = ["| method | parameters | artefacts | interpretation finding |", "|---|---|---|---|"]
    for method in METHODS:
        parameters = "<br>".join(f"`{p.name}`: {p.help} ({p.describe()})" for p in method.parameters)
        finders = ", ".join(method.label(f) for f in method.finders) or f"its own ({method.display})"
        artefacts = ", ".join(f"`{kind}`" for kind in method.artefacts)
        lines.append(f"| `{method.name}` ({method.display}): {method.summary} | {parameters} | {artefacts} | {finders} |")
    return "\n".join(lines) + "\n"


__all__ = ["DEFAULT_METHOD", "FINDERS", "GIF", "METHODS", "TOP_RANKED", "CandidateRanking", "LinkOptions",
           "LinkingMethod", "MethodValues", "RankingInputs", "markdown_table", "open_linker"]
