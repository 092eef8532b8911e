"""The parameters of the TAGME annotator (methods.md §6)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from elquery.base import ElqueryError


@dataclass(frozen=True)
class TagmeParams:
    """The parameters of methods.md §6 with their published values (ρ_NA = 0.1 for queries)."""

    max_tokens: int = 6
    min_lp: float = 0.001
    min_commonness: float = 0.001
    tau: float = 0.02
    epsilon: float = 0.3
    rho_na: float = 0.1

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ElqueryError(f"TAGME max_tokens must be at least 1, not {self.max_tokens}")
        if not 0 < self.epsilon <= 1:
            raise ElqueryError(f"TAGME epsilon must be in (0, 1], not {self.epsilon}")
        for name in ("min_commonness", "tau"):
            if not 0 <= getattr(self, name) <= 1:
                raise ElqueryError(f"TAGME {name} must be in [0, 1], not {getattr(self, name)}")
        # lp = link / df exceeds 1 where df is counted over a smaller text than the links (§6),
        # and ρ with it: their thresholds are any finite value >= 0
        for name in ("min_lp", "rho_na"):
            if not 0 <= getattr(self, name) < math.inf:
                raise ElqueryError(f"TAGME {name} must be a finite number >= 0, not {getattr(self, name)}")
