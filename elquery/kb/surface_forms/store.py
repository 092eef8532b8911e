"""The surface-form store: an SQLite file mapping normalized surface forms to entities (methods.md §3).

Schema (format ``elquery-surface-forms/1``):

- ``forms(id PRIMARY KEY, form UNIQUE, facc_total, anchor_total, candidates)``: one row per
  normalized surface form (earlier stores keyed the table by ``form`` and indexed ``id``: the
  queries below read both layouts), with its total count per counted source, and its
  candidates ready for a lookup that reads this one row: ``candidates`` is the ``marshal``
  (version 4) encoding of the flat tuple ``(total, entity, count, sources, entity, count,
  sources, ...)`` in candidate order (commonness descending, then entity id), ``sources`` a
  bitmask (1 kb, 2 facc, 4 anchors).
- ``pairs(form_id, entity_id, facc, anchors, kb)``: one row per (form, entity) with the counts per
  source (FACC, Wikipedia anchors) and whether the form is a KB alias of the entity (0/1).
- ``entities(id, name)``: entity ids ``<dbpedia:Title>``.
- ``meta(key, value)``: format, build options and the build report (JSON), and the provenance
  record (``provenance``, :mod:`elquery.indexing.provenance`).

Commonness (methods.md §3, Eq. 9) is n(m, e) / sum over e' of n(m, e'), computed once, when the
store is written (``commonness_counts`` of :mod:`elquery.indexing.surface_forms.store_writer`): a
form's counts are its FACC counts (web annotations) when it has any, else its anchor counts; a
pair without such a count (a KB-only alias) has count 0 and commonness 0.

The store is opened read-only and immutable, so any number of processes can read it at once. It
is written by assembling shards (one per partition of the forms, each a store without indexes;
:mod:`elquery.indexing.surface_forms.store_writer`).
"""

from __future__ import annotations

import json
import marshal
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError
from elquery.kb.entities import canonical_entity_id
from elquery.kb.normalize import normalize
from elquery.kb.sqlite_files import ReadOnlyDatabase
from elquery.kb.surface_forms.layout import FORMAT, SOURCE_ORDER

_LOOKUP = "SELECT candidates FROM forms WHERE form = ?"
_LOOKUP_MANY = "SELECT form, candidates FROM forms WHERE form IN ({})"
_ALIASES = """
SELECT f.form, f.candidates
FROM entities AS e JOIN pairs AS p ON p.entity_id = e.id JOIN forms AS f ON f.id = p.form_id
WHERE e.name = ?
"""
_LONGEST_FORM = "SELECT coalesce(max(length(form) - length(replace(form, ' ', '')) + 1), 0) FROM forms"
LONGEST_FORM_KEY = "longest_form_tokens"
_SOURCES = tuple(tuple(name for bit, name in enumerate(SOURCE_ORDER) if mask >> bit & 1) for mask in range(8))
_MAX_VARIABLES = 30_000


@dataclass(frozen=True, slots=True)
class FormEntity:
    """An entity a surface form may name: its count n(m, e), commonness(m, e) (methods.md §3,
    Eq. 9) and the sources (``kb``, ``facc``, ``anchors``) that proposed the pair."""

    entity: str
    count: int
    commonness: float
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Alias:
    """A normalized surface form of an entity, with the pair's count, commonness and sources."""

    form: str
    count: int
    commonness: float
    sources: tuple[str, ...]


def _commonness(count: int, total: int) -> float:
    return count / total if count else 0.0


def _decode(blob: bytes) -> list[FormEntity]:
    total, *flat = marshal.loads(blob)
    values = iter(flat)
    return [
        FormEntity(entity, count, _commonness(count, total), _SOURCES[mask]) for entity, count, mask in zip(values, values, values)
    ]


def _find(blob: bytes, entity: str) -> tuple[int, float, tuple[str, ...]] | None:
    """(count, commonness, sources) of ``entity`` among a form's candidates."""
    values = marshal.loads(blob)
    try:
        at = values.index(entity, 1)  # names are the only strings in the tuple
    except ValueError:
        return None
    return values[at + 1], _commonness(values[at + 1], values[0]), _SOURCES[values[at + 2]]


def longest_form_tokens(db: sqlite3.Connection) -> int:
    """The number of tokens of the store's longest form (forms are space-joined tokens)."""
    return int(db.execute(_LONGEST_FORM).fetchone()[0])


def query_spans(length: int, longest: int) -> list[tuple[int, int]]:
    """Every span ``[start, end)`` of a query of ``length`` tokens that is at most ``longest``
    tokens long: min(longest, length - start) per start, so O(length x longest) spans."""
    return [(start, end) for start in range(length) for end in range(start + 1, min(length, start + longest) + 1)]


class SurfaceFormStore:
    """Read-only access to a surface-form store built by ``build_store``; safe to share between
    threads (one SQLite connection per thread)."""

    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        if not path.is_file():
            raise ElqueryError(f"{path}: no such surface-form store")
        self.path = path
        # Read with pread, not mmap: the pages read stay in the OS page cache, shared and not
        # counted in the process's RSS (mmap added ~1 GB of RSS over 4.6M-entity artefacts with
        # 30M FACC rows, at the same latency; benchmarks/bench_full_scale.py).
        self._db = ReadOnlyDatabase(path)
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ElqueryError(f"{path}: not a surface-form store ({exc})") from exc
        if meta.get("format") != FORMAT:
            self._db.close()
            raise ElqueryError(f"{path}: not a surface-form store (format {meta.get('format')!r}, expected {FORMAT!r})")
        # the provenance row (elquery.indexing.provenance) is read by read_provenance, not kept here
        self.meta: dict[str, object] = {key: json.loads(value) for key, value in meta.items()
                                        if key not in ("format", "provenance")}
        longest = self.meta.get(LONGEST_FORM_KEY)
        self.longest_form = int(longest) if isinstance(longest, int) else longest_form_tokens(self._db.connection())
        """Tokens in the longest form: no longer span of a query can match (bounds lookup_spans)."""

    def __enter__(self) -> SurfaceFormStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def lookup_form(self, form: str) -> list[FormEntity]:
        """Candidates of an already normalized form, by commonness (then entity id)."""
        row = self._db.execute(_LOOKUP, (form,)).fetchone()
        return [] if row is None else _decode(row[0])

    def lookup(self, text: str) -> list[FormEntity]:
        """Candidates of ``text`` after normalization (methods.md §3), by commonness."""
        return self.lookup_form(normalize(text))

    def lookup_spans(self, tokens: Sequence[str], max_length: int | None = None) -> dict[tuple[int, int], list[FormEntity]]:
        """Candidates of every contiguous span [start, end) of the normalized query ``tokens``
        (``query_tokens``; methods.md §3, query n-grams) up to the store's longest form (and at most
        ``max_length`` tokens long if given), in one query; spans without candidates are left out.
        Time and memory are O(len(tokens) x longest form), whatever the query's length."""
        spans: dict[str, list[tuple[int, int]]] = {}
        longest = self.longest_form if max_length is None else min(max_length, self.longest_form)
        for start, end in query_spans(len(tokens), longest):
            spans.setdefault(" ".join(tokens[start:end]), []).append((start, end))
        forms = list(spans)
        found: dict[tuple[int, int], list[FormEntity]] = {}
        for first in range(0, len(forms), _MAX_VARIABLES):
            batch = forms[first : first + _MAX_VARIABLES]
            for form, blob in self._db.execute(_LOOKUP_MANY.format(",".join("?" * len(batch))), batch):
                candidates = _decode(blob)
                for number, span in enumerate(spans[form]):
                    found[span] = list(candidates) if number else candidates
        return dict(sorted(found.items()))

    def commonness(self, mention: str, entity: str) -> float:
        """commonness(m, e) (methods.md §3, Eq. 9); 0.0 when the pair is unknown or KB-only."""
        entity = canonical_entity_id(entity) or entity
        row = self._db.execute(_LOOKUP, (normalize(mention),)).fetchone()
        found = None if row is None else _find(row[0], entity)
        return 0.0 if found is None else found[1]

    def aliases(self, entity: str) -> list[Alias]:
        """Every normalized surface form of ``entity`` (any form :func:`canonical_entity_id` takes;
        KB aliases and counted forms), by count."""
        entity = canonical_entity_id(entity) or entity
        aliases = []
        for form, blob in self._db.execute(_ALIASES, (entity,)):
            found = _find(blob, entity)
            assert found is not None  # _ALIASES selects the forms whose candidates hold entity
            aliases.append(Alias(form, *found))
        aliases.sort(key=lambda a: (-a.count, a.form))
        return aliases
