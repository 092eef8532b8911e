"""The parameters of the TAGME annotator (methods.md §6), typed for the method registry
(:data:`PARAMETERS`, :mod:`elquery.linking.methods.tagme`) and checked by it."""

from __future__ import annotations

from dataclasses import dataclass

from elquery.registry import Parameter

PARAMETERS = (
    Parameter("max_tokens", int, 6, "the longest spot, in tokens", minimum=1),
    # lp = link / df exceeds 1 where df is counted over a smaller text than the links (§6), and ρ
    # with it: their thresholds are any finite value >= 0
    Parameter("min_lp", float, 0.001, "link probability threshold of a spot", minimum=0.0),
    Parameter("min_commonness", float, 0.001, "commonness threshold of a sense", minimum=0.0, maximum=1.0),
    Parameter("tau", float, 0.02, "commonness threshold of the senses disambiguation chooses from", minimum=0.0,
              maximum=1.0),
    Parameter("epsilon", float, 0.3, "the share of the senses by relatedness disambiguation chooses from",
              minimum=0.0, open_minimum=True, maximum=1.0),
    Parameter("rho_na", float, 0.1, "pruning threshold rho_NA of an annotation's rho", minimum=0.0),
)
"""TAGME's parameters with their published values (ρ_NA = 0.1 for queries)."""


@dataclass(frozen=True)
class TagmeParams:
    """The parameters of methods.md §6 (:data:`PARAMETERS`), each checked by the registry."""

    max_tokens: int = 6
    min_lp: float = 0.001
    min_commonness: float = 0.001
    tau: float = 0.02
    epsilon: float = 0.3
    rho_na: float = 0.1

    def __post_init__(self) -> None:
        for parameter in PARAMETERS:
            object.__setattr__(self, parameter.name, parameter.validate(getattr(self, parameter.name), "tagme"))

