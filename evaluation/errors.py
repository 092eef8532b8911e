"""Errors raised for bad evaluation input (files that cannot be read as runs or qrels)."""

from __future__ import annotations

import os

from elquery.base import ElqueryError


class EvaluationInputError(ElqueryError):
    """Bad input file; the message is one line, ``path:line: reason`` (``path: reason`` when
    the problem concerns the file as a whole rather than one line)."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, reason: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.reason = " ".join(reason.split())
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {self.reason}")
