"""Every identifier of an entity (docs/identifiers.md): the read side of the identifiers table
``elquery build`` writes into the entity index (``INDEX/identifiers.db``).

An entity ``<dbpedia:Title>`` has

* its Wikipedia title and URL, derived from the DBpedia id (always there): the title is the IRI's
  title with percent escapes decoded and ``_`` read as a space; the URL is
  ``https://en.wikipedia.org/wiki/`` and the title with spaces as ``_``, percent-encoded as
  MediaWiki writes it;
* its Wikipedia page id (DBpedia's ``page_ids`` dataset), Freebase mid (``freebase_links``,
  written ``/m/0abc``) and Wikidata QID (DBpedia's Wikidata links, written ``Q42``), when the
  table holds them, else None.

:func:`parse_identifier` reads every spelling a user may name an entity in
(:data:`SPELLINGS`); :func:`resolve` turns it into the DBpedia id, the one form elquery links and
ranks with, and :class:`WrittenIds` does so for the ids of qrels, runs and ground truth, keeping
those that resolve to no entity as written. A missing mapping is None, never an error.

The bare-Q rule (:func:`resolve`): a bare ``Q42`` is the Wikidata item the table maps it to;
failing that, the DBpedia entity titled ``Q42`` if the table holds it; failing both, or with no
table, it resolves to nothing (kept as written, it is its DBpedia reading ``<dbpedia:Q42>``, which
is what :func:`~elquery.kb.entities.canonical_entity_id` gives it).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from elquery.base import ElqueryError
from elquery.kb.entities import DBPEDIA_RESOURCE, canonical_entity_id, dbpedia_title
from elquery.kb.sqlite_files import ReadOnlyDatabase

FORMAT = "elquery-identifiers/1"
FILE_NAME = "identifiers.db"
"""The table's file inside an entity index folder."""
WIKIPEDIA_URL = "https://en.wikipedia.org/wiki/"
SCHEMES = ("dbpedia", "wikipedia", "wikidata", "freebase", "pageid")
"""The schemes ``--entity-ids`` writes a run in."""
PAGE_ID, FREEBASE, WIKIDATA = "pageid", "freebase", "wikidata"
"""The schemes the table maps (its ``lookup`` rows)."""

_QID = re.compile(r"Q[1-9][0-9]*")
_MID = re.compile(r"/m/0[0-9a-z_]+")
_PAGE_ID = re.compile(r"[0-9]+")
_WIKIDATA_PREFIXES = ("wikidata:", "http://www.wikidata.org/entity/", "https://www.wikidata.org/entity/",
                      "http://www.wikidata.org/wiki/", "https://www.wikidata.org/wiki/",
                      "http://wikidata.dbpedia.org/resource/")
_FREEBASE_PREFIXES = ("freebase:", "http://rdf.freebase.com/ns/", "https://rdf.freebase.com/ns/")
_PAGE_ID_PREFIXES = ("curid:", "wikipedia-pageid:", "http://en.wikipedia.org/?curid=", "https://en.wikipedia.org/?curid=",
                     "https://en.wikipedia.org/w/index.php?curid=", "http://en.wikipedia.org/w/index.php?curid=")
_WIKIPEDIA_PREFIXES = ("wikipedia:", "https://en.wikipedia.org/wiki/", "http://en.wikipedia.org/wiki/",
                       "https://en.m.wikipedia.org/wiki/", "http://en.m.wikipedia.org/wiki/")
_MEDIAWIKI_SAFE = ";:@$!*(),/~"
"""Characters MediaWiki leaves unescaped in an article URL (besides letters, digits and ``-._``)."""

SPELLINGS = {
    "dbpedia": "<dbpedia:Title>, dbpedia:Title, http://dbpedia.org/resource/Title, or a bare title",
    "wikipedia": "wikipedia:Title, https://en.wikipedia.org/wiki/Title (also http://, en.m.)",
    "pageid": "curid:12345, wikipedia-pageid:12345, https://en.wikipedia.org/?curid=12345",
    "wikidata": "Q42, wikidata:Q42, http://www.wikidata.org/entity/Q42, https://www.wikidata.org/wiki/Q42, "
                "http://wikidata.dbpedia.org/resource/Q42",
    "freebase": "/m/0abc, m.0abc, freebase:/m/0abc, freebase:m.0abc, http://rdf.freebase.com/ns/m.0abc",
}
"""Every spelling of an entity elquery accepts, by scheme (docs/identifiers.md)."""


@dataclass(frozen=True)
class Identifiers:
    """Every identifier of one entity; a mapping the table lacks is None."""

    dbpedia: str
    wikipedia_title: str
    wikipedia_url: str
    wikipedia_page_id: int | None = None
    freebase: str | None = None
    wikidata: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The ``ids`` object of the outputs (docs/formats.md): these fields (in their order) and
        ``dbpedia_uri``. Written out, not :func:`dataclasses.asdict`, which deep-copies each value
        and took a fifth of a served ``/link`` request's CPU (about 50 entities an answer)."""
        return {"dbpedia": self.dbpedia, "wikipedia_title": self.wikipedia_title, "wikipedia_url": self.wikipedia_url,
                "wikipedia_page_id": self.wikipedia_page_id, "freebase": self.freebase, "wikidata": self.wikidata,
                "dbpedia_uri": DBPEDIA_RESOURCE + self.dbpedia[len("<dbpedia:"):-1]}

    def scheme(self, name: str) -> str | None:
        """The id in scheme ``name`` (one of :data:`SCHEMES`) as a run writes it: the DBpedia id,
        the Wikipedia title with ``_`` for spaces, the QID, the mid or the page id; None if missing."""
        if name == "dbpedia":
            return self.dbpedia
        if name == "wikipedia":
            return self.wikipedia_title.replace(" ", "_")
        if name == PAGE_ID:
            return None if self.wikipedia_page_id is None else str(self.wikipedia_page_id)
        if name == FREEBASE:
            return self.freebase
        if name == WIKIDATA:
            return self.wikidata
        raise ElqueryError(f"no identifier scheme {name!r} (choose from {', '.join(SCHEMES)})")


def wikipedia_title(entity: str) -> str:
    """``<dbpedia:Albert_Einstein>`` -> ``Albert Einstein``: the IRI's title with its percent
    escapes decoded and ``_`` read as a space."""
    title = entity[len("<dbpedia:"):-1] if entity.startswith("<dbpedia:") else entity
    return unquote(title).replace("_", " ")


def wikipedia_url(entity: str) -> str:
    """The English Wikipedia article URL of ``entity``: :data:`WIKIPEDIA_URL` and the title with
    ``_`` for spaces, percent-encoded (UTF-8) where MediaWiki does."""
    return _url_of_title(wikipedia_title(entity))


def _url_of_title(title: str) -> str:
    return WIKIPEDIA_URL + quote(title.replace(" ", "_"), safe=_MEDIAWIKI_SAFE)


def dbpedia_of_title(title: str) -> str | None:
    """A Wikipedia title (spaces or ``_``, percent escapes allowed) -> its DBpedia id, the
    characters DBpedia escapes percent-encoded; None for an empty title."""
    title = unquote(title).strip().replace(" ", "_")
    if not title:
        return None
    return canonical_entity_id(DBPEDIA_RESOURCE + dbpedia_title(title))


def identifiers_without_table(entity: str) -> Identifiers:
    """What the DBpedia id alone gives: the Wikipedia title and URL."""
    return Identifiers(entity, wikipedia_title(entity), wikipedia_url(entity))


@dataclass(frozen=True)
class Named:
    """An entity as a user named it: in ``scheme`` (one of :data:`SCHEMES`), ``value`` normalized
    (the DBpedia id, a QID ``Q42``, a mid ``/m/0abc``, a page id's digits)."""

    scheme: str
    value: str


def parse_identifier(text: str) -> Named | None:
    """The scheme and normalized value of any spelling of :data:`SPELLINGS`; None for a text that
    is none of them. A bare ``Q42`` parses as a Wikidata id (:func:`resolve` falls back to the
    DBpedia title, the bare-Q rule) and a bare ``/m/0abc`` or ``m.0abc`` as a Freebase mid (write
    ``<dbpedia:Q42>`` for a DBpedia title of that shape)."""
    text = text.strip()
    if _QID.fullmatch(text):
        return Named(WIKIDATA, text)
    for prefix in _WIKIDATA_PREFIXES:
        if text.startswith(prefix):
            value = text[len(prefix):]
            return Named(WIKIDATA, value) if _QID.fullmatch(value) else None
    for prefix in _FREEBASE_PREFIXES:
        if text.startswith(prefix):
            mid = _mid(text[len(prefix):])
            return None if mid is None else Named(FREEBASE, mid)
    mid = _mid(text)
    if mid is not None:
        return Named(FREEBASE, mid)
    for prefix in _PAGE_ID_PREFIXES:
        if text.startswith(prefix):
            value = text[len(prefix):]
            return Named(PAGE_ID, str(int(value))) if _PAGE_ID.fullmatch(value) else None
    for prefix in _WIKIPEDIA_PREFIXES:
        if text.startswith(prefix):
            entity = dbpedia_of_title(text[len(prefix):].split("#", 1)[0])
            return None if entity is None else Named("wikipedia", entity)
    entity = canonical_entity_id(text)
    return None if entity is None else Named("dbpedia", entity)


def _mid(text: str) -> str | None:
    """``/m/0abc`` or ``m.0abc`` -> ``/m/0abc``; else None."""
    mid = "/m/" + text[2:] if text.startswith("m.") else text
    return mid if _MID.fullmatch(mid) else None


class IdentifierTable:
    """The identifiers table of an entity index (``INDEX/identifiers.db``, docs/identifiers.md),
    read-only and safe to share between threads."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise ElqueryError(f"{self.path}: no such identifiers table (built by `elquery build`)")
        self._db = ReadOnlyDatabase(self.path)
        try:
            found = self._db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError:
            found = None
        if found != (FORMAT,):
            self._db.close()
            raise ElqueryError(f"{self.path}: not an elquery identifiers table ({FORMAT})")

    def of(self, entity: str) -> Identifiers:
        """Every identifier of ``entity`` (a DBpedia id); those the table lacks are None."""
        return self.of_many([entity])[entity]

    def of_many(self, entities: Iterable[str]) -> dict[str, Identifiers]:
        """:meth:`of` for each of ``entities`` (one query per 500)."""
        wanted = list(dict.fromkeys(entities))
        rows: dict[str, tuple[Any, ...]] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(f"SELECT entity, page_id, freebase, wikidata FROM entities WHERE entity IN ({marks})",
                                        chunk):
                rows[row[0]] = row[1:]
        found = {}
        for entity in wanted:
            page_id, freebase, wikidata = rows.get(entity, (None, None, None))
            title = wikipedia_title(entity)  # once: the URL is made of it
            found[entity] = Identifiers(entity, title, _url_of_title(title), page_id, freebase, wikidata)
        return found

    def entity_of(self, scheme: str, value: str) -> str | None:
        """The DBpedia id with ``value`` in ``scheme`` (``pageid``, ``freebase``, ``wikidata``)."""
        row = self._db.execute("SELECT entity FROM lookup WHERE scheme = ? AND value = ?", (scheme, value)).fetchone()
        return None if row is None else row[0]

    def has_entity(self, entity: str) -> bool:
        return self._db.execute("SELECT 1 FROM entities WHERE entity = ?", (entity,)).fetchone() is not None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> IdentifierTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_bare_qid(text: str) -> bool:
    """``Q42`` written without a prefix: a Wikidata QID or a DBpedia title (the bare-Q rule, :func:`resolve`)."""
    return _QID.fullmatch(text.strip()) is not None


def resolve(text: str, table: IdentifierTable | None) -> str | None:
    """The DBpedia id of an entity named in any spelling (:data:`SPELLINGS`); None for a text that
    is no identifier, or a page id, QID or mid that ``table`` (None: no table) maps to no entity.

    The bare-Q rule: a bare ``Q42`` is the entity ``table`` maps the QID ``Q42`` to; failing that,
    the entity titled ``Q42`` (``<dbpedia:Q42>``) when ``table`` holds it; else None. (Titles of
    that shape are rare in DBpedia and QIDs common in other tools' files; ``<dbpedia:Q42>`` and
    ``wikidata:Q42`` name either one without doubt.)"""
    named = parse_identifier(text)
    if named is None:
        return None
    if named.scheme in ("dbpedia", "wikipedia"):
        return named.value
    if table is None:
        return None
    entity = table.entity_of(named.scheme, named.value)
    if entity is None and is_bare_qid(text):
        title = canonical_entity_id(text)
        return title if title is not None and table.has_entity(title) else None
    return entity


class WrittenIds:
    """The entity ids of a file as written (qrels, runs, LTR ground truth: any spelling of
    :data:`SPELLINGS`) -> DBpedia ids, through the identifiers ``table`` (None: none) by
    :func:`resolve`, so that files in different schemes compare. An id that resolves to no entity
    is kept as written (a bare ``Q42`` as its DBpedia reading ``<dbpedia:Q42>``, the bare-Q rule)
    and counted; :meth:`note` says how many. Each distinct id is looked up once: in ``cache``
    (text -> DBpedia id or None), which the readers of several files may share."""

    def __init__(self, table: IdentifierTable | None, cache: dict[str, str | None] | None = None) -> None:
        self.table = table
        self._resolved = {} if cache is None else cache
        self._seen: dict[str, str] = {}
        """This file's distinct ids -> the id each is compared as."""
        self.unresolved: list[str] = []
        """The distinct ids kept as written, in the order met."""

    def __call__(self, text: str) -> str:
        found = self._seen.get(text)
        if found is None:
            if text in self._resolved:
                entity = self._resolved[text]
            else:
                entity = self._resolved[text] = resolve(text, self.table)
            if entity is None:
                self.unresolved.append(text)
                entity = (canonical_entity_id(text) if is_bare_qid(text) else None) or text
            found = self._seen[text] = entity
        return found

    def note(self, name: str) -> str | None:
        """``NAME: N of M entity ids name no entity ... and are compared as written (e.g. ID)``,
        one line (ID the least of them, whatever order the file was read in); None when every id
        resolved."""
        if not self.unresolved:
            return None
        where = ("in the index's identifiers table" if self.table is not None
                 else "(no identifiers table: `elquery build` makes one)")
        return (f"{name}: {len(self.unresolved)} of {len(self._seen)} entity ids name no entity {where} and are "
                f"compared as written (e.g. {min(self.unresolved)[:80]!r})")


def table_path(index: Path | str) -> Path:
    """Where the identifiers table of the entity index ``index`` is."""
    return Path(index) / FILE_NAME


_opened: dict[tuple[Path, int, int], IdentifierTable] = {}
_opened_lock = threading.Lock()


def table_of_index(index: Path | str | None) -> IdentifierTable | None:
    """The identifiers table of the entity index ``index`` (opened once per process and version
    of the file: a rebuilt table is opened anew), or None when it has none (an index built by
    ``elquery index dbpedia`` alone) or no index is given."""
    if index is None:
        return None
    path = table_path(index).resolve()
    try:
        status = path.stat()
    except OSError:
        return None
    key = (path, status.st_ino, status.st_mtime_ns)
    with _opened_lock:
        table = _opened.get(key)
        if table is None:
            table = _opened[key] = IdentifierTable(path)
        return table


@dataclass(frozen=True)
class EntityIds:
    """Entities -> their :class:`Identifiers`, from the identifiers table of the entity index at
    ``index``: picklable (a path), opened once per process (worker processes, Spark executors)."""

    index: str

    def __call__(self, entities: Iterable[str]) -> dict[str, Identifiers]:
        table = table_of_index(self.index)
        if table is None:
            raise ElqueryError(f"{table_path(self.index)}: the identifiers table is gone")
        return table.of_many(entities)


def entity_ids_of(index: Path | str | None) -> EntityIds | None:
    """:class:`EntityIds` of the entity index ``index`` when it holds an identifiers table, else None."""
    return None if table_of_index(index) is None else EntityIds(str(index))
