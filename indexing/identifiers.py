"""The identifiers table (docs/identifiers.md): every entity's Wikipedia page id, Freebase mid and
Wikidata QID, read from the DBpedia dumps by ``elquery build`` (stage ``identifiers``) into the
entity index, ``INDEX/identifiers.db``; read by :mod:`elquery.kb.identifiers`.

Inputs, chosen by file name among the dumps:

* ``page_ids_*``: ``<resource> dbo:wikiPageID "12345"^^xsd:integer``;
* ``freebase_links_*``: ``<resource> owl:sameAs <http://rdf.freebase.com/ns/m.0abc>``;
* Wikidata links, any file whose name starts with ``interlanguage_links_`` or holds ``wikidata`` or
  ``sameas-all-wikis``:
  ``<resource> owl:sameAs <http://wikidata.dbpedia.org/resource/Q42>`` (DBpedia 2015-10's
  ``interlanguage_links_en``), ``<http://www.wikidata.org/entity/Q42>`` as the object, or either
  Wikidata IRI as the subject and the DBpedia resource as the object (the Wikidata release's
  ``wikidatawiki-*-sameas-all-wikis``, the Databus's ``sameas-all-wikis``). Only English DBpedia
  resources are kept.

Tables (SQLite): ``entities(entity, page_id, freebase, wikidata)``, the first value of each
scheme an entity has in file order (files sorted, lines in order), and ``lookup(scheme, value,
entity)``, every value to the first entity it names (a value naming a second entity is counted as
a conflict and kept for the first). No redirect is followed: a redirect page keeps its own ids.
Every line is judged by the one N-Triples rule of the builders (malformed lines counted, as
``index dbpedia`` counts them).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.indexing.build_outputs import check_output, replace, work_folder
from elquery.indexing.ntriples import ParseReport, dump_files
from elquery.indexing.provenance import BuildPlan, write_provenance
from elquery.indexing.surface_forms.sources import SAME_AS, scan
from elquery.kb.entities import entity_id
from elquery.kb.identifiers import FILE_NAME, FORMAT, FREEBASE, PAGE_ID, WIKIDATA

KIND = "identifiers"
WIKI_PAGE_ID = "http://dbpedia.org/ontology/wikiPageID"
FREEBASE_NS = "http://rdf.freebase.com/ns/"
WIKIDATA_IRIS = ("http://wikidata.dbpedia.org/resource/", "http://www.wikidata.org/entity/")
_QID = re.compile(r"Q[1-9][0-9]*")
_MID = re.compile(r"0[0-9a-z_]+")
_PAGE_ID = re.compile(r"[0-9]+")
_BATCH = 50_000
_COLUMNS = {PAGE_ID: "page_id", FREEBASE: "freebase", WIKIDATA: "wikidata"}


def identifier_files(dumps: Sequence[Path | str]) -> list[Path]:
    """The dump files among ``dumps`` (folders expanded) the identifiers come from, by name."""
    return [path for path in dump_files(dumps)
            if path.name.startswith(("page_ids_", "freebase_links_", "interlanguage_links_"))
            or "wikidata" in path.name or "sameas-all-wikis" in path.name]


def identifiers_plan(dumps: Sequence[Path | str]) -> BuildPlan:
    """What a build of the table reads; refuses dumps holding none of its inputs."""
    files = identifier_files(dumps)
    if not files:
        raise ElqueryError("no page_ids_, freebase_links_, interlanguage_links_ or Wikidata links (*wikidata*, "
                           "*sameas-all-wikis*) dump to take identifiers from")
    return BuildPlan(KIND, tuple(files), {"format": FORMAT})


def _wikidata(iri: str) -> str | None:
    for prefix in WIKIDATA_IRIS:
        if iri.startswith(prefix) and _QID.fullmatch(iri[len(prefix):]):
            return iri[len(prefix):]
    return None


def identifier_pairs(path: Path, report: ParseReport) -> Iterator[tuple[str, str, str]]:
    """(scheme, entity, value) of each identifier in ``path``: page ids as digits, mids
    ``/m/0abc``, QIDs ``Q42``; other triples are skipped."""
    predicates = frozenset({WIKI_PAGE_ID}) if path.name.startswith("page_ids_") else frozenset({SAME_AS, WIKI_PAGE_ID})
    for predicate, subject, obj, literal in scan(path, predicates, report):
        if predicate == WIKI_PAGE_ID:
            entity = entity_id(subject)
            if entity is not None and literal and _PAGE_ID.fullmatch(obj):
                yield PAGE_ID, entity, str(int(obj))
            continue
        if literal:
            continue
        entity = entity_id(subject)
        if entity is not None:
            if obj.startswith(FREEBASE_NS + "m.") and _MID.fullmatch(obj[len(FREEBASE_NS) + 2:]):
                yield FREEBASE, entity, "/m/" + obj[len(FREEBASE_NS) + 2:]
                continue
            qid = _wikidata(obj)
            if qid is not None:
                yield WIKIDATA, entity, qid
            continue
        qid, entity = _wikidata(subject), entity_id(obj)
        if qid is not None and entity is not None:
            yield WIKIDATA, entity, qid


@dataclass
class IdentifiersReport:
    """What a build of the table read and kept."""

    entities: int = 0
    values: dict[str, int] = field(default_factory=lambda: {PAGE_ID: 0, FREEBASE: 0, WIKIDATA: 0})
    conflicts: dict[str, int] = field(default_factory=lambda: {PAGE_ID: 0, FREEBASE: 0, WIKIDATA: 0})
    parse: ParseReport = field(default_factory=ParseReport)

    def to_json(self) -> dict[str, Any]:
        return {"entities": self.entities, "values": dict(self.values), "conflicts": dict(self.conflicts),
                "triples": self.parse.triples, "malformed": self.parse.malformed}

    def line(self) -> str:
        values = ", ".join(f"{count} {scheme}" for scheme, count in self.values.items())
        return (f"{self.entities} entities with identifiers ({values}); {self.parse.malformed} malformed lines"
                + "".join(f"; {e}" for f in self.parse.files.values() for e in f.errors[:1]))


_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE entities(entity TEXT PRIMARY KEY, page_id INTEGER, freebase TEXT, wikidata TEXT) WITHOUT ROWID;
CREATE TABLE lookup(scheme TEXT, value TEXT, entity TEXT, PRIMARY KEY(scheme, value)) WITHOUT ROWID;
"""


def _flush(db: sqlite3.Connection, scheme: str, rows: list[tuple[str, str, str]], report: IdentifiersReport) -> None:
    column = _COLUMNS[scheme]
    value = "CAST(? AS INTEGER)" if scheme == PAGE_ID else "?"
    db.executemany(f"INSERT INTO entities(entity, {column}) VALUES (?, {value}) ON CONFLICT(entity) "
                   f"DO UPDATE SET {column} = coalesce({column}, excluded.{column})", [(e, v) for _, e, v in rows])
    inserted = db.executemany("INSERT OR IGNORE INTO lookup(scheme, value, entity) VALUES (?, ?, ?)",
                              [(s, v, e) for s, e, v in rows]).rowcount
    report.values[scheme] += len(rows)
    report.conflicts[scheme] += len(rows) - inserted


def write_table(db_path: Path, files: Sequence[Path]) -> IdentifiersReport:
    """Write the identifiers of ``files`` into a new SQLite file ``db_path``."""
    report = IdentifiersReport()
    db = sqlite3.connect(db_path)
    try:
        db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -200000;" + _SCHEMA)
        for path in files:
            pending: dict[str, list[tuple[str, str, str]]] = {scheme: [] for scheme in _COLUMNS}
            for row in identifier_pairs(path, report.parse):
                batch = pending[row[0]]
                batch.append(row)
                if len(batch) >= _BATCH:
                    _flush(db, row[0], batch, report)
                    batch.clear()
            for scheme, batch in pending.items():
                if batch:
                    _flush(db, scheme, batch, report)
        report.entities = db.execute("SELECT count(*) FROM entities").fetchone()[0]
        db.execute("INSERT INTO meta(key, value) VALUES ('format', ?)", (FORMAT,))
        db.commit()
    finally:
        db.close()
    return report


def build_identifiers(dumps: Sequence[Path | str], index: Path | str, overwrite: bool = True) -> IdentifiersReport:
    """Build the identifiers table of the entity index folder ``index`` from ``dumps``: written
    beside, with its provenance record, and moved into place whole (``INDEX/identifiers.db``)."""
    index = Path(index)
    if not index.is_dir():
        raise ElqueryError(f"{index}: no entity index to write identifiers into (build it first)")
    out = index / FILE_NAME
    check_output(out, "identifiers table", overwrite)
    plan = identifiers_plan(dumps)
    with work_folder(out) as work:
        db_path = work / FILE_NAME
        report = write_table(db_path, plan.inputs)
        write_provenance(db_path, plan.record(report.to_json()))
        replace(db_path, out)
    return report
