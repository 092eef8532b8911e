"""The identifiers table (docs/identifiers.md) built from the real DBpedia 2015-10 sample: every
page id and Freebase mid equals what the dump lines say (read here with pyoxigraph, not with
elquery's reader), Wikidata QIDs from real-format N-Triples files of both shapes DBpedia publishes,
every spelling of an entity resolved, and a missing mapping a null, never an error."""

from __future__ import annotations

import bz2
import shutil
import sqlite3
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, RdfFormat, parse

from elquery.base import ElqueryError
from elquery.indexing.identifiers import build_identifiers, identifiers_plan
from elquery.indexing.provenance import read_provenance
from elquery.kb.identifiers import (
    IdentifierTable,
    Named,
    dbpedia_of_title,
    parse_identifier,
    resolve,
    wikipedia_title,
    wikipedia_url,
)

RESOURCE = "http://dbpedia.org/resource/"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
WIKIDATA_LINKS = (  # the shape of DBpedia 2015-10's interlanguage_links_en: English resource -> wikidata.dbpedia.org
    "<http://dbpedia.org/resource/British_Airways> <http://www.w3.org/2002/07/owl#sameAs> "
    "<http://wikidata.dbpedia.org/resource/Q8691> .\n"
    "<http://dbpedia.org/resource/British_Airways> <http://www.w3.org/2002/07/owl#sameAs> "
    "<http://de.dbpedia.org/resource/British_Airways> .\n"
    "<http://de.dbpedia.org/resource/KLM> <http://www.w3.org/2002/07/owl#sameAs> "
    "<http://wikidata.dbpedia.org/resource/Q181912> .\n"
    "<http://dbpedia.org/resource/Normandy> <http://www.w3.org/2002/07/owl#sameAs> <http://www.wikidata.org/entity/Q15878> .\n"
    "<http://dbpedia.org/resource/Normandy> <http://www.w3.org/2002/07/owl#sameAs> <http://www.wikidata.org/entity/QX> .\n"
    "this line is no triple\n"
)
SAMEAS_ALL_WIKIS = (  # the Wikidata release's sameas-all-wikis: the Wikidata item -> every wiki's resource
    "<http://wikidata.dbpedia.org/resource/Q181912> <http://www.w3.org/2002/07/owl#sameAs> "
    "<http://dbpedia.org/resource/KLM> .\n"
    "<http://wikidata.dbpedia.org/resource/Q181912> <http://www.w3.org/2002/07/owl#sameAs> "
    "<http://nl.dbpedia.org/resource/KLM> .\n"
)


def _dump_values(path: Path, predicate: str) -> dict[str, str]:
    """Subject title -> object of each ``predicate`` triple, read with pyoxigraph."""
    found: dict[str, str] = {}
    with bz2.open(path, "rb") as handle:
        for quad in parse(handle.read(), format=RdfFormat.N_TRIPLES):
            if quad.predicate == NamedNode(predicate) and isinstance(quad.subject, NamedNode):
                obj = quad.object
                found.setdefault(quad.subject.value[len(RESOURCE):], obj.value if isinstance(obj, (Literal, NamedNode)) else "")
    return found


@pytest.fixture(scope="module")
def built(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index folder holding the identifiers table of the sample and the two Wikidata files."""
    root = tmp_path_factory.mktemp("identifiers")
    data = root / "dumps"
    data.mkdir()
    for name in ("page_ids_en.ttl.bz2", "freebase_links_en.ttl.bz2", "labels_en.ttl.bz2"):
        shutil.copy(dbpedia_sample / name, data / name)
    (data / "interlanguage_links_en.ttl").write_text(WIKIDATA_LINKS, encoding="utf-8")
    (data / "wikidatawiki-20150330-sameas-all-wikis.ttl").write_text(SAMEAS_ALL_WIKIS, encoding="utf-8")
    (root / "index").mkdir()
    report = build_identifiers([data], root / "index")
    assert report.parse.malformed == 1 and report.values["wikidata"] == 3
    return root / "index"


@pytest.fixture(scope="module")
def table(built: Path) -> IdentifierTable:
    return IdentifierTable(built / "identifiers.db")


def test_page_ids_and_mids_are_those_of_the_dump(table: IdentifierTable, dbpedia_sample: Path) -> None:
    page_ids = _dump_values(dbpedia_sample / "page_ids_en.ttl.bz2", "http://dbpedia.org/ontology/wikiPageID")
    mids = _dump_values(dbpedia_sample / "freebase_links_en.ttl.bz2", SAME_AS)
    assert len(page_ids) == 98 and len(mids) == 95
    for title, page_id in page_ids.items():
        entity = f"<dbpedia:{title}>"
        ids = table.of(entity)
        assert ids.wikipedia_page_id == int(page_id)
        assert resolve(f"curid:{page_id}", table) == entity == resolve(f"wikipedia-pageid:{page_id}", table)
        mid = mids.get(title)
        if mid is None:  # no Freebase link in the dump: null, never an error
            assert ids.freebase is None
            continue
        assert mid.startswith("http://rdf.freebase.com/ns/m.")
        assert ids.freebase == "/m/" + mid[len("http://rdf.freebase.com/ns/m."):]
        for spelling in (ids.freebase, "m." + ids.freebase[3:], "freebase:" + ids.freebase, mid):
            assert resolve(spelling, table) == entity
    assert table.of("<dbpedia:Architecture_of_Croatia>").freebase is None


def test_wikidata_qids_from_both_shapes_of_links(table: IdentifierTable) -> None:
    assert table.of("<dbpedia:British_Airways>").wikidata == "Q8691"  # interlanguage_links_en
    assert table.of("<dbpedia:Normandy>").wikidata == "Q15878"  # www.wikidata.org/entity object; QX skipped
    assert table.of("<dbpedia:KLM>").wikidata == "Q181912"  # sameas-all-wikis, subject the Wikidata item
    assert table.of("<dbpedia:Ruin_value>").wikidata is None
    for spelling in ("Q8691", "wikidata:Q8691", "http://www.wikidata.org/entity/Q8691",
                     "https://www.wikidata.org/wiki/Q8691", "http://wikidata.dbpedia.org/resource/Q8691"):
        assert resolve(spelling, table) == "<dbpedia:British_Airways>"
    assert resolve("Q1", table) is None and resolve("Q1", None) is None


def test_an_entity_no_table_knows_gets_the_ids_of_its_title(table: IdentifierTable) -> None:
    ids = table.of("<dbpedia:No_such_entity>")
    assert (ids.wikipedia_title, ids.wikipedia_url) == ("No such entity", "https://en.wikipedia.org/wiki/No_such_entity")
    assert (ids.wikipedia_page_id, ids.freebase, ids.wikidata) == (None, None, None)
    assert ids.as_dict()["dbpedia_uri"] == "http://dbpedia.org/resource/No_such_entity"


def test_the_table_has_its_provenance_and_refuses_other_files(built: Path, tmp_path: Path) -> None:
    record = read_provenance(built / "identifiers.db")
    assert record is not None and record.kind == "identifiers"
    assert {f.name for f in record.inputs} == {"page_ids_en.ttl.bz2", "freebase_links_en.ttl.bz2",
                                                "interlanguage_links_en.ttl", "wikidatawiki-20150330-sameas-all-wikis.ttl"}
    assert record.report["entities"] == 98
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE meta(key TEXT, value TEXT)").connection.commit()
    with pytest.raises(ElqueryError, match="not an elquery identifiers table"):
        IdentifierTable(other)
    with pytest.raises(ElqueryError, match="no page_ids_, freebase_links_"):
        identifiers_plan([_only_labels(tmp_path)])


def _only_labels(tmp_path: Path) -> Path:
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "labels_en.ttl").write_text('<http://dbpedia.org/resource/A> '
                                          '<http://www.w3.org/2000/01/rdf-schema#label> "A"@en .\n', encoding="utf-8")
    return folder


@pytest.mark.parametrize(("text", "named"), [
    ("<dbpedia:Rome>", Named("dbpedia", "<dbpedia:Rome>")),
    ("http://dbpedia.org/resource/Rome", Named("dbpedia", "<dbpedia:Rome>")),
    ("New York City", Named("dbpedia", "<dbpedia:New_York_City>")),
    ("<dbpedia:Q42>", Named("dbpedia", "<dbpedia:Q42>")),
    ("wikipedia:New York City", Named("wikipedia", "<dbpedia:New_York_City>")),
    ("https://en.wikipedia.org/wiki/Z%C3%BCrich", Named("wikipedia", "<dbpedia:Zürich>")),
    ("https://en.m.wikipedia.org/wiki/Rome#History", Named("wikipedia", "<dbpedia:Rome>")),
    ('wikipedia:"Weird Al" Yankovic', Named("wikipedia", "<dbpedia:%22Weird_Al%22_Yankovic>")),
    ("Q42", Named("wikidata", "Q42")),
    (" wikidata:Q42 ", Named("wikidata", "Q42")),
    ("/m/0198z", Named("freebase", "/m/0198z")),
    ("m.0198z", Named("freebase", "/m/0198z")),
    ("freebase:m.0198z", Named("freebase", "/m/0198z")),
    ("curid:3970", Named("pageid", "3970")),
    ("wikipedia-pageid:003970", Named("pageid", "3970")),
    ("https://en.wikipedia.org/?curid=3970", Named("pageid", "3970")),
    ("wikidata:Rome", None), ("Q0", Named("dbpedia", "<dbpedia:Q0>")), ("freebase:Rome", None),
    ("curid:12a", None), ("wikipedia:", None), ("http://example.org/Rome", None), ("", None),
])
def test_every_spelling(text: str, named: Named | None) -> None:
    assert parse_identifier(text) == named


@pytest.mark.parametrize(("entity", "title", "url"), [
    ("<dbpedia:Albert_Einstein>", "Albert Einstein", "https://en.wikipedia.org/wiki/Albert_Einstein"),
    ("<dbpedia:Zürich>", "Zürich", "https://en.wikipedia.org/wiki/Z%C3%BCrich"),
    ("<dbpedia:%22Weird_Al%22_Yankovic>", '"Weird Al" Yankovic', "https://en.wikipedia.org/wiki/%22Weird_Al%22_Yankovic"),
    ("<dbpedia:Basilica_of_San_Lorenzo,_Milan>", "Basilica of San Lorenzo, Milan",
     "https://en.wikipedia.org/wiki/Basilica_of_San_Lorenzo,_Milan"),
    ("<dbpedia:AC/DC>", "AC/DC", "https://en.wikipedia.org/wiki/AC/DC"),
    ("<dbpedia:What_Is_the_What%3F>", "What Is the What?", "https://en.wikipedia.org/wiki/What_Is_the_What%3F"),
])
def test_wikipedia_title_and_url_round_trip(entity: str, title: str, url: str) -> None:
    assert (wikipedia_title(entity), wikipedia_url(entity)) == (title, url)
    assert dbpedia_of_title(url[len("https://en.wikipedia.org/wiki/"):]) == entity
    assert dbpedia_of_title(title) == entity
    assert parse_identifier(url) == Named("wikipedia", entity)


def test_a_truncated_dump_is_one_error_and_leaves_nothing(dbpedia_sample: Path, tmp_path: Path) -> None:
    data, index = tmp_path / "dumps", tmp_path / "index"
    data.mkdir()
    index.mkdir()
    whole = (dbpedia_sample / "page_ids_en.ttl.bz2").read_bytes()
    (data / "page_ids_en.ttl.bz2").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ElqueryError, match="page_ids_en.ttl.bz2: truncated or corrupt file"):
        build_identifiers([data], index)
    assert list(index.iterdir()) == []


def test_the_ids_object_has_every_field_in_order_and_the_dbpedia_uri(table: IdentifierTable) -> None:
    """The ``ids`` object of the outputs, written out field by field (not dataclasses.asdict):
    the dataclass's fields in their order, then ``dbpedia_uri``; the same values."""
    from dataclasses import fields

    from elquery.kb.identifiers import Identifiers

    ids = table.of("<dbpedia:British_Airways>")
    written = ids.as_dict()
    assert list(written) == [f.name for f in fields(Identifiers)] + ["dbpedia_uri"]
    assert all(written[f.name] == getattr(ids, f.name) for f in fields(Identifiers))
    assert written["wikidata"] == "Q8691" and written["dbpedia_uri"] == "http://dbpedia.org/resource/British_Airways"


def test_the_service_keeps_identifiers_as_the_table_gives_them(table: IdentifierTable) -> None:
    """A worker's kept identifiers (elquery.serve.artefacts.KeptIds) answer as the table does, for
    entities read before, new ones, repeated ones and ones dropped past its size."""
    from elquery.serve.artefacts import KeptIds

    kept = KeptIds(table, size=3)
    batches = [["<dbpedia:British_Airways>", "<dbpedia:KLM>", "<dbpedia:KLM>"],
               ["<dbpedia:KLM>", "<dbpedia:Normandy>", "<dbpedia:No_such_entity>"],
               ["<dbpedia:British_Airways>", "<dbpedia:Ruin_value>"], ["<dbpedia:Normandy>"], []]
    for batch in batches:
        assert kept(batch) == table.of_many(batch)
        assert len(kept._kept) <= 3


def test_kept_identifiers_dropped_by_another_thread_meanwhile_are_still_answered(table: IdentifierTable) -> None:
    """Between a call's look at what is kept and its answer, another thread's call may drop those
    entities (simulated: the table's read runs another call, which drops the first one's kept entity)."""
    from elquery.serve.artefacts import KeptIds

    class Interleaved:
        def __init__(self) -> None:
            self.inner: KeptIds | None = None

        def of_many(self, entities: list[str]) -> dict:
            inner, self.inner = self.inner, None
            if inner is not None:
                inner(["<dbpedia:Normandy>"])  # another request, while this one reads
            return table.of_many(entities)

    reader = Interleaved()
    kept = KeptIds(reader, size=1)  # type: ignore[arg-type]
    kept(["<dbpedia:KLM>"])
    reader.inner = kept
    wanted = ["<dbpedia:KLM>", "<dbpedia:British_Airways>"]
    assert kept(wanted) == table.of_many(wanted)
