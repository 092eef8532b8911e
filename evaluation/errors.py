"""Errors raised for bad evaluation input (files that cannot be read as runs or qrels): the
formats' one error type, :class:`elquery.formats.lines.FormatError` (one line, ``path:line:
reason``, or ``path: reason`` when the problem concerns the file as a whole rather than one
line), under the name the evaluation layer gives it."""

from __future__ import annotations

from elquery.formats.lines import FormatError as EvaluationInputError

__all__ = ["EvaluationInputError"]
