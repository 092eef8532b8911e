"""The SQLite anchor dictionary of the TAGME artefact (methods.md §6): reading it (it is written by
:mod:`elquery.indexing.tagme.dictionary_writer`).

Tables: ``forms(form, link, df)`` with link(m) and df(m); ``candidates(form, node, link)`` with
link(e, m); ``entities(node, entity)`` naming every graph node that is not a redirect page;
``page_ids(node, page_id)``: the Wikipedia page id of an entity (DBpedia's page_ids dataset), the
``id`` of TAGME's answers.

Link probability lp(m) = link(m) / df(m) (docs/methods.md §6), with df(m) the number of documents
containing the phrase, and lp(m) = 0 when no document contains it. The documents here are
DBpedia's long abstracts, an approximation of the full Wikipedia text TAGME counts over: an
abstract is a small part of its article, so df(m) is smaller than it would be and can be smaller
than link(m) (which counts links over all of Wikipedia), giving lp(m) > 1. Nothing is capped: the
build report counts the forms with df(m) < link(m), for which the collection is too small for lp
to be meaningful (see ``forms_with_df_below_link`` of the writer).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError
from elquery.kb.sqlite_files import ReadOnlyDatabase


@dataclass(frozen=True)
class FormStats:
    """A dictionary form with link(m) and df(m) (in long abstracts)."""

    form: str
    link: int
    df: int

    @property
    def link_probability(self) -> float:
        """lp(m) = link(m) / df(m), 0 when df(m) = 0 (see the module docstring)."""
        return self.link / self.df if self.df else 0.0


@dataclass(frozen=True)
class Sense:
    """An entity a form links to: link(e, m) and commonness(m, e) = link(e, m) / link(m)."""

    entity: str
    node: int
    link: int
    commonness: float


class AnchorDictionary:
    """Read-only access to ``dictionary.db``; safe to share between threads (one SQLite
    connection per thread)."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise ElqueryError(f"{path}: no such file; build the TAGME artefact with `elquery index tagme`")
        self._db = ReadOnlyDatabase(path)
        self._has_page_ids = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'page_ids'").fetchone() is not None

    def form(self, form: str) -> FormStats | None:
        """The statistics of a normalized form, or None if it is not in the dictionary."""
        row = self._db.execute("SELECT link, df FROM forms WHERE form = ?", (form,)).fetchone()
        return None if row is None else FormStats(form, row[0], row[1])

    def senses(self, stats: FormStats, min_commonness: float = 0.0) -> list[Sense]:
        """The entities of a form with commonness >= ``min_commonness``, by commonness
        descending, then entity id."""
        rows = self._db.execute(
            "SELECT e.entity, c.node, c.link FROM candidates c JOIN entities e ON e.node = c.node WHERE c.form = ?",
            (stats.form,),
        ).fetchall()
        senses = [Sense(entity, node, link, link / stats.link) for entity, node, link in rows]
        return sorted((s for s in senses if s.commonness >= min_commonness), key=lambda s: (-s.commonness, s.entity))

    def node(self, entity: str) -> int | None:
        """The graph node of an entity id ``<dbpedia:Title>``, or None."""
        row = self._db.execute("SELECT node FROM entities WHERE entity = ?", (entity,)).fetchone()
        return None if row is None else int(row[0])

    def page_id(self, node: int) -> int | None:
        """The Wikipedia page id of an entity's node, or None (unknown, or an artefact built
        before page ids were kept)."""
        if not self._has_page_ids:
            return None
        row = self._db.execute("SELECT page_id FROM page_ids WHERE node = ?", (node,)).fetchone()
        return None if row is None else int(row[0])

    def close(self) -> None:
        self._db.close()
