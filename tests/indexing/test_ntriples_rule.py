"""One N-Triples rule for every builder (issue 31, item 3): a dump line that `index dbpedia` and
the TAGME build (ntriples.read_triples / parse_line) count as malformed is malformed for
`index surface-forms` too, with the same line number and reason, whichever of its readers meets
it (the predicate scan, the Freebase-link blocks) and whatever its predicate: an IRI holding
bytes that are not UTF-8, a DBpedia resource with an empty title, characters the grammar forbids
in an IRI, an over-long line. The scanners' fast path (ntriples.plain_statement) never accepts a
line that parse_line refuses, and reads the ones it accepts as parse_line does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elquery.indexing.ntriples import MAX_LINE_CHARS, ObjectKind, ParseReport, parse_line, plain_statement, read_triples
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms.sources import FREEBASE_MID_PREFIX, RDFS_LABEL, scan
from elquery.indexing.surface_forms.sources import SAME_AS as SAME_AS_IRI
from elquery.kb.entities import entity_id
from elquery.kb.normalize import normalize
from elquery.kb.surface_forms.store import SurfaceFormStore

from conftest import freebase_links  # tests/conftest.py, on the path as pytest loads it

R = b"http://dbpedia.org/resource/"
LABEL = b"<http://www.w3.org/2000/01/rdf-schema#label>"
BIRTH = b"<http://dbpedia.org/ontology/birthDate>"
SAME_AS = b"<http://www.w3.org/2002/07/owl#sameAs>"
FOAF_NAME = b"<http://xmlns.com/foaf/0.1/name>"


def _label(title: bytes, text: bytes) -> bytes:
    return b"<" + R + title + b"> " + LABEL + b' "' + text + b'"@en .\n'


BAD_IRI = _label(b"Caf\xe9", b"Cafe")  # Latin-1, not UTF-8
EMPTY_TITLE = _label(b"", b"Nothing")
LONG = _label(b"Long", b"x" * MAX_LINE_CHARS)


def _dumps(root: Path) -> Path:
    dumps = root / "dumps"
    dumps.mkdir()
    (dumps / "labels_en.ttl").write_bytes(
        _label(b"Tokyo", b"Tokyo") + BAD_IRI + EMPTY_TITLE + _label(b"Rome", b"Ro\xffme") + _label(b"A|B", b"Pipe")
        + LONG + _label(b"Paris", b"Paris"))
    (dumps / "freebase_links_en.ttl").write_bytes(
        b"<" + R + b"Tokyo> " + SAME_AS + b" <http://rdf.freebase.com/ns/m.07dfk> .\n"
        + b"<" + R + b"Caf\xe9> " + SAME_AS + b" <http://rdf.freebase.com/ns/m.0cafe> .\n"
        + b"<" + R + b"> " + SAME_AS + b" <http://rdf.freebase.com/ns/m.0none> .\n")
    (dumps / "persondata_en.ttl").write_bytes(  # read for foaf:name only: the other lines are checked too
        b"<" + R + b"Rome> " + FOAF_NAME + b' "Roma"@it .\n'
        + b"<" + R + b"Caf\xe9> " + BIRTH + b' "1900"@en .\n'
        + b"<" + R + b"> " + BIRTH + b' "1900"@en .\n')
    (root / "facc.tsv").write_bytes(b"Tokyo\t/m/07dfk\t3\n")  # FACC counts: the Freebase links are read
    return dumps


def _python_rule(path: Path) -> tuple[int, list[str]]:
    report = ParseReport()
    for _ in read_triples(path, report):
        pass
    return report.file(path).malformed, report.file(path).errors


def test_the_surface_form_build_counts_the_lines_the_index_counts(tmp_path: Path) -> None:
    dumps = _dumps(tmp_path)
    done = subprocess.run([sys.executable, "-m", "elquery", "index", "surface-forms", "--dumps", str(dumps),
                           "--facc", str(tmp_path / "facc.tsv"), "--out", str(tmp_path / "sf.db"), "--workers", "1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    labels, links, persons = (dumps / name for name in ("labels_en.ttl", "freebase_links_en.ttl", "persondata_en.ttl"))
    expected = {
        labels: [f"{labels}:2: IRI is not valid UTF-8", f"{labels}:3: DBpedia resource IRI with an empty title",
                 f"{labels}:5: not an N-Triples statement", f"{labels}:6: line longer than {MAX_LINE_CHARS} characters"],
        links: [f"{links}:2: IRI is not valid UTF-8", f"{links}:3: DBpedia resource IRI with an empty title"],
        persons: [f"{persons}:2: IRI is not valid UTF-8", f"{persons}:3: DBpedia resource IRI with an empty title"],
    }
    for path, errors in expected.items():
        assert _python_rule(path) == (len(errors), errors)  # the rule of index dbpedia and TAGME
        for error in errors:
            assert error in done.stderr.splitlines()
    assert "dumps: " in done.stderr and " 8 malformed lines;" in done.stderr
    with SurfaceFormStore(tmp_path / "sf.db") as store:
        assert [c.entity for c in store.lookup(normalize("Ro\ufffdme"))] == ["<dbpedia:Rome>"]  # U+FFFD for the bad byte
        assert [c.entity for c in store.lookup("tokyo")] == ["<dbpedia:Tokyo>"]
        assert store.lookup("nothing") == [] and store.lookup("cafe") == [] and store.lookup("pipe") == []


def test_the_build_report_holds_the_same_counts(tmp_path: Path) -> None:
    report = build_store(tmp_path / "sf.db", BuildOptions(dumps=(_dumps(tmp_path),), facc=(tmp_path / "facc.tsv",), workers=1, progress=False))
    files = report.dumps.parse.files
    for path, parsed in files.items():
        assert (parsed.malformed, parsed.errors) == _python_rule(Path(path))
    assert report.dumps.parse.malformed == 8


_IRI_TEXT = st.lists(st.sampled_from(
    ["a", "é", "/", "_", " ", "\t", "<", ">", '"', "{", "|", "^", "`", "\\", "\x00", "\x7f", "\x85", "\xa0", "\u2028",
     "\udce9", "\ud800", "http://dbpedia.org/resource/", "\\u00e9", "\\U0001F600", "\\ud800"]), max_size=6).map("".join)
_LITERAL_TEXT = st.lists(st.sampled_from(["a", "é", " ", "\t", '"', "\\", "\\n", "\\u00e9", "\udcff", "\r", "<"]),
                         max_size=6).map("".join)
_OBJECT = st.one_of(st.builds(lambda t: f"<{t}>", _IRI_TEXT),
                    st.builds(lambda t, tail: f'"{t}"{tail}', _LITERAL_TEXT,
                              st.sampled_from(["", "@en", "@en-GB", "@1", "^^<http://x/y>", "^^<>", "^^<a b>"])))
_LINE = st.builds(lambda s, p, o, sep, end: f"<{s}>{sep}<{p}>{sep}{o}{end}", _IRI_TEXT, _IRI_TEXT, _OBJECT,
                  st.sampled_from([" ", "\t", "  ", ""]), st.sampled_from([" .\n", " .", ".\n", " . \n", " . # c\n", " .\u2028\n"]))


@settings(max_examples=3000, deadline=None)
@given(_LINE)
def test_the_fast_path_accepts_only_what_parse_line_accepts_and_reads_it_alike(line: str) -> None:
    plain = plain_statement(line)
    if plain is None:
        return
    triple = parse_line(line)  # raises ValueError if the rule refuses the line
    assert triple is not None
    assert plain == (triple.subject, triple.predicate, triple.object, triple.kind is ObjectKind.LITERAL)


def test_the_fast_path_takes_the_usual_lines() -> None:
    assert plain_statement('<http://dbpedia.org/resource/Caf\u00e9> <http://www.w3.org/2000/01/rdf-schema#label> '
                           '"Caf\u00e9"@en .\n') == ("http://dbpedia.org/resource/Caf\u00e9",
                                                    "http://www.w3.org/2000/01/rdf-schema#label", "Caf\u00e9", True)
    assert plain_statement("<http://dbpedia.org/resource/A> <http://dbpedia.org/ontology/wikiPageRedirects> "
                           "<http://dbpedia.org/resource/B> .\n") == (
        "http://dbpedia.org/resource/A", "http://dbpedia.org/ontology/wikiPageRedirects", "http://dbpedia.org/resource/B",
        False)
    for refused in (BAD_IRI, EMPTY_TITLE, _label(b"A|B", b"x"), LONG):
        assert plain_statement(refused.decode("utf-8", "surrogateescape")) is None


_DUMP_PIECES = [b"<http://dbpedia.org/resource/", b"Tokyo", b"Caf\xe9", b"Caf\xc3\xa9", b">", b"<", b" ",
                b"<http://www.w3.org/2000/01/rdf-schema#label>", b"<http://www.w3.org/2002/07/owl#sameAs>",
                b"<http://rdf.freebase.com/ns/m.07dfk>", b'"', b'"Tokyo"@en', b"\\u00e9", b"\\", b"|", b" .", b"\n",
                b"\r", b"\r\n", b"\xff", b"\x00", b"_:b1", b"# c", b"\xef\xbb\xbf", b"\xe2\x80\xa8"]
_DUMP_LINE = st.sampled_from([
    _label(b"Tokyo", b"Tokyo"), BAD_IRI, EMPTY_TITLE, _label(b"A|B", b"x"), _label(b"Rome", b"Ro\xffme"),
    b"<" + R + b"Tokyo> " + SAME_AS + b" <http://rdf.freebase.com/ns/m.07dfk> .\n",
    b"<" + R + b"Caf\xe9> " + SAME_AS + b" <http://rdf.freebase.com/ns/m.0cafe> .\n",
    b"<" + R + b"> " + SAME_AS + b" <http://rdf.freebase.com/ns/m.0none> .\n"])
_DUMP = st.lists(st.one_of(_DUMP_LINE, st.lists(st.sampled_from(_DUMP_PIECES), max_size=10).map(b"".join),
                           st.binary(max_size=30)), max_size=30).map(b"".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_DUMP)
def test_the_scanners_count_any_bytes_as_the_rule_does(tmp_path: Path, data: bytes) -> None:
    """Arbitrary bytes as a labels file and as a Freebase-link file: the surface-form scanners
    count the malformed lines read_triples counts, with the same reasons, and hand on only
    statements read_triples reads, with text that can be stored (UTF-8)."""
    path = tmp_path / "dump.ttl"
    path.write_bytes(data)
    expected = ParseReport(max_errors=1000)
    triples = list(read_triples(path, expected))
    label = [(t.subject, t.object) for t in triples if t.predicate == RDFS_LABEL]
    links = [(entity_id(t.subject), "/m/" + t.object[len(FREEBASE_MID_PREFIX):]) for t in triples
             if t.predicate == SAME_AS_IRI and t.kind is ObjectKind.IRI and t.object.startswith(FREEBASE_MID_PREFIX)
             and entity_id(t.subject) is not None]
    report, report_links = ParseReport(max_errors=1000), ParseReport(max_errors=1000)
    scanned = [(s, o) for _, s, o, _ in scan(path, frozenset({RDFS_LABEL}), report)]
    linked = list(freebase_links(path, report_links))
    for found, wanted in ((scanned, label), (linked, links)):
        assert found == wanted
        assert all(text.encode("utf-8") for pair in found for text in pair)
    for parsed in (report, report_links):
        assert (parsed.malformed, parsed.file(path).errors) == (expected.malformed, expected.file(path).errors)
