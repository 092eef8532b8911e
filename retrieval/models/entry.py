"""A named retrieval model of the registry (:data:`elquery.retrieval.models.MODELS`): its
parameters as ``elquery rank --param`` spells them, the inputs it needs, and how it is built.

:meth:`RetrievalModel.build` is the one door from names and values (the command line's texts, a
config's numbers, a request's parameters) to a model object: every value is checked there, by
:func:`elquery.registry.validate_parameters`, so each door accepts and refuses the same values
with the same message. The rule that links (the queries' linked entities) go with the ELR models,
and only with them, is :meth:`RetrievalModel.check_links`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from elquery.base import ElqueryError
from elquery.kb.index_format import FIELDS
from elquery.registry import Parameter, validate_parameters

if TYPE_CHECKING:
    from elquery.retrieval.models import Model

MIXTURE_FIELDS = FIELDS
"""The fields the mixtures of MLM, PRMS, BM25F and FSDM weigh, each with its own parameters
(``weight.names``, ``mu.content``, ...); the models of one field (``field``) take any text field."""

Values = Mapping[str, Any]
"""Every parameter of a model by name: the value given, else its default (``None``: not given,
where the default depends on other parameters)."""


@dataclass(frozen=True)
class RetrievalModel:
    """One named model: ``name`` as ``--model`` spells it, ``display`` as tables print it, a one-line
    ``summary``, its ``parameters``, ``factory`` building the model object from all their values,
    and whether it reads the queries' linked entities (``needs_links``) and an index built with
    relations (``needs_relations``)."""

    name: str
    display: str
    summary: str
    parameters: tuple[Parameter, ...]
    factory: Callable[[Values], Model]
    needs_links: bool = False
    needs_relations: bool = False

    def build(self, params: Mapping[str, Any]) -> Model:
        """The model with ``params`` (texts or values; the others default), each checked; a bad one
        (unknown, of the wrong type, out of range, or at odds with another) is one line naming the
        model."""
        given = validate_parameters(self, params)
        values = {p.name: given.get(p.name, p.default) for p in self.parameters}
        try:
            return self.factory(values)
        except ElqueryError as exc:
            raise ElqueryError(f"{self.name}: {exc}") from None

    def check_links(self, given: bool) -> None:
        """The models of ``needs_links`` need the queries' links; the others refuse them."""
        if self.needs_links and not given:
            raise ElqueryError(f"{self.name} needs links (the queries' linked entities)")
        if given and not self.needs_links:
            raise links_refused(self.name)


def links_refused(name: str) -> ElqueryError:
    """The error of links given to the model called ``name``, which takes none."""
    from elquery.retrieval.models import MODELS

    takers = ", ".join(m.name for m in MODELS if m.needs_links)
    return ElqueryError(f"links go with the ELR models ({takers}), not {name}")


def per_field(pattern: str, defaults: Mapping[str, float] | None, help: str, **bounds: Any) -> tuple[Parameter, ...]:
    """One number parameter per mixture field: ``pattern`` with the field for ``{}``
    (``weight.{}``), the field's default from ``defaults`` (None: not given)."""
    return tuple(Parameter(pattern.format(f), float, None if defaults is None else defaults[f], help, **bounds)
                 for f in MIXTURE_FIELDS)


def given_or(value: Any, default: Any) -> Any:
    """``value`` where it was given, else ``default``."""
    return default if value is None else value


def parse_params(items: list[str]) -> dict[str, str]:
    """``name=value`` strings (``--param``, a request's ``params``) into a dict (a later value wins)."""
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ElqueryError(f"--param {item!r}: expected name=value")
        params[name.strip()] = value.strip()
    return params
