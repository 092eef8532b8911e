"""Command-line options of ``elquery link --method tagme`` (methods.md §6): ``--tagme DIR`` and
``--tagme-param NAME=VALUE`` (repeatable; names are the :class:`TagmeParams` fields)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import TYPE_CHECKING

from elquery.base import ElqueryError
from elquery.linking.tagme.params import TagmeParams

if TYPE_CHECKING:
    from elquery.linking.tagme.annotator import TagmeLinker

# options of `elquery link` that belong to the other methods
_NOT_FOR_TAGME = ("index", "surface_forms", "whitelist", "gif_threshold", "top_ranked", "commonness_threshold")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the TAGME options to the ``link`` command's parser."""
    defaults = TagmeParams()
    names = ", ".join(f"{f.name}={getattr(defaults, f.name)}" for f in fields(TagmeParams))
    parser.add_argument("--tagme", metavar="DIR", help="TAGME artefact built by `elquery index tagme` "
                        "(--method tagme without it: the demo knowledge base's, built on first use)")
    parser.add_argument("--tagme-param", action="append", default=[], metavar="NAME=VALUE",
                        help=f"a TAGME parameter, repeatable (defaults: {names})")


def parse_params(pairs: list[str]) -> dict[str, int | float]:
    """``["rho_na=0.2", ...]`` -> keyword arguments of :class:`TagmeParams`."""
    types = {f.name: str(f.type) for f in fields(TagmeParams)}
    params: dict[str, int | float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in types:
            raise ElqueryError(f"--tagme-param {pair!r}: expected NAME=VALUE with NAME one of {', '.join(types)}")
        try:
            params[name] = int(value) if types[name] == "int" else float(value)
        except ValueError:
            raise ElqueryError(f"--tagme-param {pair!r}: {value!r} is not a number") from None
    return params


def linker(args: argparse.Namespace) -> TagmeLinker:
    """The linker the options describe (without ``--tagme``: over the demo knowledge base); a
    one-line error with an option of the other methods."""
    from elquery.linking.tagme.annotator import TagmeLinker

    given = [f"--{name.replace('_', '-')}" for name in _NOT_FOR_TAGME if getattr(args, name, None)]
    if given:
        raise ElqueryError(f"not options of --method tagme: {', '.join(given)} (TAGME takes --tagme-param NAME=VALUE)")
    params = parse_params(args.tagme_param)
    if not args.tagme:
        return TagmeLinker.demo(args.max_query_tokens, **params)
    return TagmeLinker(args.tagme, args.max_query_tokens, **params)
