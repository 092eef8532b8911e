"""The surface-form store: an SQLite file mapping normalized surface forms to entities (methods.md §3).

Schema (format ``elquery-surface-forms/2``):

- ``forms(id PRIMARY KEY, form UNIQUE, candidates)``: one row per normalized surface form, with
  its candidates ready for a lookup that reads this one row: ``candidates`` holds, in candidate
  order (commonness descending, then entity id), each candidate's entity number, sources (KB
  alias, FACC, anchors), FACC count and anchor count (binary, :mod:`~elquery.kb.surface_forms.candidates`).
- ``entities(id PRIMARY KEY, name UNIQUE)``: entity ids ``<dbpedia:Title>`` by number.
- ``entity_forms(id PRIMARY KEY, forms)``: the form ids of each entity (uint32, ascending), for
  :meth:`SurfaceFormStore.aliases`.
- ``meta(key, value)``: format, build options and the build report (JSON), and the provenance
  record (``provenance``, :mod:`elquery.kb.provenance`).

Commonness (methods.md §3, Eq. 9) is n(m, e) / sum over e' of n(m, e'): a form's counts are its
FACC counts (web annotations) when it has any, else its anchor counts; a pair without such a count
(a KB-only alias) has count 0 and commonness 0. The order of the candidates is computed when the
store is written (``commonness_counts`` of :mod:`elquery.indexing.surface_forms.store_writer`).

Entity numbers are turned into ids through a list indexed by number, filled with the ids a
lookup needs and lacks (one query for all of them), and emptied after :data:`NAMES_KEPT` ids (a
bounded memory, however many lookups).

The store is opened read-only and immutable, so any number of processes can read it at once. It
is written by assembling shards (one per partition of the forms, each a store without indexes;
:mod:`elquery.indexing.surface_forms.store_writer`). A store of an earlier format is refused in
one line that says to rebuild it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.kb.entities import canonical_entity_id
from elquery.kb.normalize import normalize
from elquery.kb.sqlite_files import ReadOnlyDatabase
from elquery.kb.surface_forms.candidates import SOURCE_BITS, Kept, counted, decode, form_ids, kept
from elquery.kb.surface_forms.layout import FORMAT, FORMAT_PREFIX, SOURCE_ORDER

_LOOKUP = "SELECT candidates FROM forms WHERE form = ?"
_LOOKUP_MANY = "SELECT form, candidates FROM forms WHERE form IN ({})"
_FORMS_BY_ID = "SELECT form, candidates FROM forms WHERE id IN ({})"
_ENTITY = "SELECT id FROM entities WHERE name = ?"
_ENTITY_FORMS = "SELECT forms FROM entity_forms WHERE id = ?"
_NAMES = "SELECT id, name FROM entities WHERE id IN ({})"
_LONGEST_FORM = "SELECT coalesce(max(length(form) - length(replace(form, ' ', '')) + 1), 0) FROM forms"
LONGEST_FORM_KEY = "longest_form_tokens"
_SOURCES = tuple(tuple(name for bit, name in enumerate(SOURCE_ORDER) if mask >> bit & 1) for mask in range(8))
_MAX_VARIABLES = 30_000
NAMES_KEPT = 1 << 20
"""At most this many entity ids read before the cache starts again (about 100 MB)."""


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


@dataclass(frozen=True, slots=True)
class SpanMatches:
    """What :meth:`SurfaceFormStore.match_spans` found in a query: per span [start, end) with
    candidates, those (in candidate order), and per such span how many candidates its form has
    before the commonness threshold."""

    candidates: dict[tuple[int, int], list[FormEntity]]
    totals: dict[tuple[int, int], int]


@dataclass(frozen=True, slots=True)
class Pair:
    """A (form, entity) pair of the store with its count per source and whether the form is a KB
    alias of the entity."""

    form: str
    entity: str
    facc: int
    anchors: int
    kb: bool


def _commonness(count: int, total: int) -> float:
    return count / total if count else 0.0


def _find(blob: bytes, entity: int) -> tuple[int, float, tuple[str, ...]] | None:
    """(count, commonness, sources) of entity number ``entity`` among a form's candidates."""
    words, counts = counted(blob)
    at = next((at for at, word in enumerate(words) if word >> SOURCE_BITS == entity), None)
    if at is None:
        return None
    return counts[at], _commonness(counts[at], sum(counts)), _SOURCES[words[at] & 7]


def longest_form_tokens(db: sqlite3.Connection) -> int:
    """The number of tokens of the store's longest form (forms are space-joined tokens)."""
    return int(db.execute(_LONGEST_FORM).fetchone()[0])


def query_spans(length: int, longest: int) -> list[tuple[int, int]]:
    """Every span ``[start, end)`` of a query of ``length`` tokens that is at most ``longest``
    tokens long: min(longest, length - start) per start, so O(length x longest) spans."""
    return [(start, end) for start in range(length) for end in range(start + 1, min(length, start + longest) + 1)]


class _EntityNames:
    """Entity ids by number, in a list as long as the largest number (8 bytes a number), filled
    with the ids a lookup lacks (one ``IN`` query for all of them) as lookups need them; after
    :data:`NAMES_KEPT` ids it is emptied and starts again (bounded memory whatever the lookups).

    Only the ids asked for are read: at 4.6M entities the candidates of a query's spans are
    scattered over the numbers, and reading them a range of 64 at a time (as before) read 19 ranges
    a query of which one id each was used, and cycled a 1M-id cache through 1,000 queries."""

    def __init__(self, db: ReadOnlyDatabase) -> None:
        self._db = db
        self._size = (db.execute("SELECT max(id) FROM entities").fetchone()[0] or 0) + 1
        self._names = [""] * self._size
        self._kept = 0

    def _load(self, numbers: Sequence[int]) -> None:
        names = self._names
        missing = {number for number in numbers if not names[number]}
        if self._kept + len(missing) > NAMES_KEPT:
            names[:] = [""] * self._size
            self._kept = 0
            missing = set(numbers)
        for entity, name in _rows(self._db, _NAMES, list(missing)):
            names[entity] = name
        self._kept += len(missing)

    def take(self, words: Sequence[int]) -> Sequence[str]:
        """The ids of the entities of candidate ``words`` (``entity << SOURCE_BITS | sources``)."""
        numbers = [word >> SOURCE_BITS for word in words]
        if len(numbers) < 2:
            return [self.name(number) for number in numbers]
        names = itemgetter(*numbers)(self._names)
        if "" in names:  # not read yet
            self._load(numbers)
            names = itemgetter(*numbers)(self._names)
        return names

    def name(self, number: int) -> str:
        name = self._names[number]
        if not name:
            self._load((number,))
            name = self._names[number]
        return name


def _form_entities(names: Sequence[str], found: Kept) -> list[FormEntity]:
    """The candidates ``found`` (:func:`kept`) of a form, their entities named ``names``; commonness
    n(m, e) / total (methods.md §3, Eq. 9), 0 for a KB-only alias."""
    total = found.total
    return [FormEntity(name, count, count / total if count else 0.0, _SOURCES[word & 7])
            for name, count, word in zip(names, found.counts, found.words)]


def _rows(db: ReadOnlyDatabase, query: str, keys: Sequence[object]) -> Iterator[tuple[Any, Any]]:
    """The rows of ``query`` (its ``IN ({})`` list filled) for ``keys``, in batches of at most
    SQLite's number of variables."""
    for first in range(0, len(keys), _MAX_VARIABLES):
        batch = list(keys[first : first + _MAX_VARIABLES])
        yield from db.execute(query.format(",".join("?" * len(batch))), batch)


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
        found = meta.get("format")
        if found != FORMAT:
            self._db.close()
            if isinstance(found, str) and found.startswith(FORMAT_PREFIX):
                raise ElqueryError(f"{path}: surface-form store format {found} is not {FORMAT}; rebuild it "
                                   "(elquery index surface-forms, or elquery build)")
            raise ElqueryError(f"{path}: not a surface-form store (format {found!r}, expected {FORMAT!r})")
        # the provenance row (elquery.kb.provenance) is read by read_provenance, not kept here
        self.meta: dict[str, object] = {key: json.loads(value) for key, value in meta.items()
                                        if key not in ("format", "provenance")}
        longest = self.meta.get(LONGEST_FORM_KEY)
        self.longest_form = int(longest) if isinstance(longest, int) else longest_form_tokens(self._db.connection())
        """Tokens in the longest form: no longer span of a query can match (bounds lookup_spans)."""
        self._names = _EntityNames(self._db)

    def __enter__(self) -> SurfaceFormStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _form_entities(self, blob: bytes, min_commonness: float = 0.0) -> list[FormEntity]:
        found = kept(blob, min_commonness)
        return _form_entities(self._names.take(found.words), found)

    def lookup_form(self, form: str) -> list[FormEntity]:
        """Candidates of an already normalized form, by commonness (then entity id)."""
        row = self._db.execute(_LOOKUP, (form,)).fetchone()
        return [] if row is None else self._form_entities(row[0])

    def lookup(self, text: str) -> list[FormEntity]:
        """Candidates of ``text`` after normalization (methods.md §3), by commonness."""
        return self.lookup_form(normalize(text))

    def lookup_spans(self, tokens: Sequence[str], max_length: int | None = None,
                     min_commonness: float = 0.0) -> dict[tuple[int, int], list[FormEntity]]:
        """Candidates of every contiguous span [start, end) of the normalized query ``tokens``
        (``query_tokens``; methods.md §3, query n-grams) up to the store's longest form (and at most
        ``max_length`` tokens long if given), in one query; spans without candidates are left out.
        With ``min_commonness``, only the candidates mention detection keeps at that threshold
        (Eq. 8-10: commonness at least ``min_commonness``, or a KB alias), without making the
        others (a form of thousands of entities costs its few kept ones).
        Time and memory are O(len(tokens) x longest form), whatever the query's length."""
        return self.match_spans(tokens, max_length, min_commonness).candidates

    def match_spans(self, tokens: Sequence[str], max_length: int | None = None,
                    min_commonness: float = 0.0) -> SpanMatches:
        """:meth:`lookup_spans`'s candidates, and per span with candidates the number its form has
        in all (before ``min_commonness``), counted from the same read of the form's record."""
        spans: dict[str, list[tuple[int, int]]] = {}
        longest = self.longest_form if max_length is None else min(max_length, self.longest_form)
        for start, end in query_spans(len(tokens), longest):
            spans.setdefault(" ".join(tokens[start:end]), []).append((start, end))
        made: list[tuple[list[tuple[int, int]], Kept]] = []
        for form, blob in _rows(self._db, _LOOKUP_MANY, list(spans)):
            form_kept = kept(blob, min_commonness)
            if form_kept.words:
                made.append((spans[form], form_kept))
        names = self._names.take([word for _, form_kept in made for word in form_kept.words])  # one read of the missing
        found: dict[tuple[int, int], list[FormEntity]] = {}
        totals: dict[tuple[int, int], int] = {}
        at = 0
        for form_spans, form_kept in made:
            candidates = _form_entities(names[at:at + len(form_kept.words)], form_kept)
            at += len(form_kept.words)
            for number, span in enumerate(form_spans):
                found[span] = list(candidates) if number else candidates
                totals[span] = form_kept.size
        return SpanMatches(dict(sorted(found.items())), totals)

    def _entity_number(self, entity: str) -> int | None:
        row = self._db.execute(_ENTITY, (canonical_entity_id(entity) or entity,)).fetchone()
        return None if row is None else row[0]

    def commonness(self, mention: str, entity: str) -> float:
        """commonness(m, e) (methods.md §3, Eq. 9); 0.0 when the pair is unknown or KB-only."""
        number = self._entity_number(entity)
        if number is None:
            return 0.0
        row = self._db.execute(_LOOKUP, (normalize(mention),)).fetchone()
        found = None if row is None else _find(row[0], number)
        return 0.0 if found is None else found[1]

    def aliases(self, entity: str) -> list[Alias]:
        """Every normalized surface form of ``entity`` (any form :func:`canonical_entity_id` takes;
        KB aliases and counted forms), by count."""
        number = self._entity_number(entity)
        if number is None:
            return []
        row = self._db.execute(_ENTITY_FORMS, (number,)).fetchone()
        if row is None:
            return []
        ids = form_ids(row[0])
        aliases = []
        for form, blob in _rows(self._db, _FORMS_BY_ID, ids):
            found = _find(blob, number)
            assert found is not None  # entity_forms lists the forms whose candidates hold the entity
            aliases.append(Alias(form, *found))
        aliases.sort(key=lambda a: (-a.count, a.form))
        return aliases

    def pairs(self) -> Iterator[Pair]:
        """Every (form, entity) pair with its counts per source, by form id then candidate order
        (a scan of the whole store)."""
        for form, blob in self._db.execute("SELECT form, candidates FROM forms ORDER BY id"):
            candidates = decode(blob)
            words = [entity << SOURCE_BITS for entity in candidates.entities]
            for name, facc, anchors, sources in zip(self._names.take(words), candidates.facc, candidates.anchors,
                                                    candidates.sources):
                yield Pair(form, name, facc, anchors, bool(sources & 1))
