"""Qrels and LTR ground truth written in any identifier scheme (issue 32.3, docs/identifiers.md),
over artefacts ``elquery build`` made from the real DBpedia sample and a Wikidata links file in
DBpedia's format. The test writes DBpedia qrels for queries over the sample's entities and
rewrites them into Wikidata QIDs, Freebase mids, Wikipedia URLs, page ids and a mix of every
spelling, with the mapping read here from the dump lines (not through elquery): ``elquery
experiment`` gives the same figures for each as for the DBpedia qrels, a run written with
``--entity-ids wikidata`` the same as the DBpedia run, and ``elquery ltr features --qrels`` the same
labels. Ids that resolve to no entity stay as written, counted in one line, and the qrels still
evaluate."""

from __future__ import annotations

import csv
import itertools
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import sample_page_ids_and_mids, write_wikidata_links
from elquery.cli import main as elquery

WIKIDATA = {"British_Airways": "Q8691", "KLM": "Q181912", "Rome": "Q220", "Colosseum": "Q10285",
            "Lufthansa": "Q9325", "Porsche": "Q40993", "Sichuan": "Q19770", "Normandy": "Q15878"}
"""The QIDs of the Wikidata links file the test writes (the other entities have none)."""
QUERIES = {
    "q01": "british airways klm", "q02": "rome colosseum", "q03": "lufthansa cargo", "q04": "porsche saab 900",
    "q05": "sichuan hot pot", "q06": "normandy sword beach", "q07": "korean air singapore airlines",
    "q08": "pont du gard arch bridge", "q09": "general tso's chicken", "q10": "university of mississippi",
    "q11": "roman concrete roman brick", "q12": "basilica of san lorenzo milan",
}
INTERPRETATIONS = {
    "q01": [["British_Airways", "KLM"]], "q02": [["Rome", "Colosseum"]], "q03": [["Lufthansa_Cargo"], ["Lufthansa"]],
    "q04": [["Porsche", "Saab_900"]], "q05": [["Sichuan", "Hot_pot"]], "q06": [["Normandy", "Sword_Beach"]],
    "q07": [["Korean_Air", "Singapore_Airlines"]], "q08": [["Pont_du_Gard", "Arch_bridge"]],
    "q09": [["General_Tso's_chicken"]], "q10": [["University_of_Mississippi"]], "q11": [["Roman_concrete", "Roman_brick"]],
    "q12": [["Basilica_of_San_Lorenzo,_Milan"]],
}
ALSO_RELEVANT = {"q02": ["Ancient_Roman_architecture"], "q04": ["Saab_Automobile"], "q11": ["Ancient_Roman_architecture"]}
SCHEMES = ("wikidata", "freebase", "url", "pageid", "mixed")


@pytest.fixture(scope="module")
def spellings(dbpedia_sample: Path) -> dict[str, Callable[[str], str | None]]:
    """Per scheme, the id a title has in it (None: none), from the dump lines and the QIDs above."""
    page_ids, mids = sample_page_ids_and_mids(dbpedia_sample)
    return {
        "wikidata": WIKIDATA.get,
        "freebase": lambda title: mids.get(title),
        "url": lambda title: "https://en.wikipedia.org/wiki/" + quote(title, safe=""),
        "pageid": lambda title: None if title not in page_ids else "curid:" + page_ids[title],
        "wikidata-uri": lambda title: None if title not in WIKIDATA else "http://www.wikidata.org/entity/" + WIKIDATA[title],
        "freebase-dotted": lambda title: None if title not in mids else "m." + mids[title].removeprefix("/m/"),
        "pageid-url": lambda title: None if title not in page_ids else "https://en.wikipedia.org/?curid=" + page_ids[title],
    }


def _writer(scheme: str, spellings: dict[str, Callable[[str], str | None]]) -> Callable[[str], str]:
    """Title -> its id in ``scheme`` (``mixed``: each next id in the next of seven spellings), the
    DBpedia id where the scheme has none."""
    if scheme == "dbpedia":
        return lambda title: f"<dbpedia:{title}>"
    if scheme == "mixed":
        turns = itertools.cycle(["wikidata-uri", "freebase-dotted", "pageid-url", "url", "wikidata", "freebase", "pageid"])
        return lambda title: spellings[next(turns)](title) or f"<dbpedia:{title}>"
    return lambda title: spellings[scheme](title) or f"<dbpedia:{title}>"


def _ids(path: Path) -> list[str]:
    """The entity ids of an ELQ qrels file (fields after the score) or of TREC qrels (the third field)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.name == "qrels-elq.txt":
        return [entity for line in lines for entity in line.split("\t")[2:]]
    return [line.split(" ")[2] for line in lines]


def _write_qrels(folder: Path, write: Callable[[str], str], extra_elq: str = "", extra_trec: str = "") -> tuple[Path, Path]:
    folder.mkdir()
    elq = folder / "qrels-elq.txt"
    elq.write_text("".join(f"{qid}\t1\t" + "\t".join(map(write, entities)) + "\n"
                           for qid, interpretations in INTERPRETATIONS.items() for entities in interpretations)
                   + extra_elq, encoding="utf-8")
    trec = folder / "qrels-er.txt"
    lines = []
    for qid, interpretations in INTERPRETATIONS.items():
        titles = dict.fromkeys(t for entities in interpretations for t in entities)
        lines += [f"{qid} 0 {write(title)} 2\n" for title in titles]
        lines += [f"{qid} 0 {write(title)} 1\n" for title in ALSO_RELEVANT.get(qid, [])]
    trec.write_text("".join(lines) + extra_trec, encoding="utf-8")
    return elq, trec


@pytest.fixture(scope="module")
def setup(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The artefacts (``art``), the query file and the two given runs of each scheme."""
    root = tmp_path_factory.mktemp("qrels-ids")
    data = Path(shutil.copytree(dbpedia_sample, root / "dumps"))
    write_wikidata_links(data, WIKIDATA)
    assert elquery(["build", "--data", str(data), "--out", str(root / "art"), "--workers", "1", "--min-link", "1",
                    "--stages", "index,identifiers,surface-forms"]) == 0
    (root / "queries.tsv").write_text("".join(f"{qid}\t{text}\n" for qid, text in QUERIES.items()), encoding="utf-8")
    link = ["link", "--queries", str(root / "queries.tsv"), "--artefacts", str(root / "art"), "--method", "mlmcg",
            "--gif-threshold", "0.5", "--workers", "1"]
    for scheme in ("dbpedia", "wikidata"):
        assert elquery([*link, "--format", "elq", "--entity-ids", scheme, "--out", str(root / f"run-{scheme}.elq")]) == 0
        assert elquery([*link, "--format", "trec", "--entity-ids", scheme, "--out", str(root / f"run-{scheme}.trec")]) == 0
    assert (root / "run-wikidata.elq").read_text() != (root / "run-dbpedia.elq").read_text()
    assert (root / "run-wikidata.trec").read_text() != (root / "run-dbpedia.trec").read_text()
    return root


def _config(root: Path, name: str, elq: Path, trec: Path) -> Path:
    config = root / f"{name}.toml"
    config.write_text(f"""
name = "{name}"
queries = "{root / 'queries.tsv'}"
[crossval]
folds = 3
[interpretation_finding]
qrels = "{elq}"
baseline = "TopRanked-CMNS"
[[interpretation_finding.methods]]
method = "cmns"
finder = "top-ranked"
[[interpretation_finding.methods]]
method = "mlmcg"
gif_threshold = [0.5, 2]
[[interpretation_finding.methods]]
method = "run"
run = "{root / 'run-dbpedia.elq'}"
label = "given-dbpedia"
[[interpretation_finding.methods]]
method = "run"
run = "{root / 'run-wikidata.elq'}"
label = "given-wikidata"
[semantic_mapping]
qrels = "{trec}"
baseline = "CMNS"
[[semantic_mapping.methods]]
method = "cmns"
[[semantic_mapping.methods]]
method = "run"
run = "{root / 'run-dbpedia.trec'}"
label = "given-dbpedia"
[[semantic_mapping.methods]]
method = "run"
run = "{root / 'run-wikidata.trec'}"
label = "given-wikidata"
[mention_detection]
""", encoding="utf-8")
    return config


def _figures(root: Path, name: str, elq: Path, trec: Path) -> dict:
    """``elquery experiment``'s per-query figures {(task, method, qid, metric): value}."""
    out = root / f"out-{name}"
    assert elquery(["experiment", str(_config(root, name, elq, trec)), "--out", str(out),
                    "--artefacts", str(root / "art"), "--workers", "1"]) == 0
    with open(out / "per_query.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return {(r["task"], r["method"], r["qid"], r["metric"]): float(r["value"]) for r in rows}


def _experiment(root: Path, name: str, elq: Path, trec: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    """:func:`_figures` and the experiment's stderr."""
    capsys.readouterr()
    figures = _figures(root, name, elq, trec)
    return figures, capsys.readouterr().err


@pytest.fixture(scope="module")
def dbpedia_figures(setup: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _figures(setup, "dbpedia", *_write_qrels(setup / "qrels-dbpedia", _writer("dbpedia", {})))


def _given_equal(figures: dict) -> None:
    """The run written with --entity-ids wikidata scores as the DBpedia run, query by query."""
    given = {key: value for key, value in figures.items() if key[1] == "given-dbpedia"}
    assert given and all(figures[(task, "given-wikidata", qid, metric)] == value
                         for (task, _, qid, metric), value in given.items())


def test_the_dbpedia_qrels_figures_are_not_trivial(dbpedia_figures: dict) -> None:
    _given_equal(dbpedia_figures)
    for key in (("if", "GIF-MLMcg", "strict.F"), ("if", "given-dbpedia", "strict.F"), ("sm", "CMNS", "map"),
                ("sm", "given-dbpedia", "map"), ("md", "KB+Web", "recall")):
        values = [v for k, v in dbpedia_figures.items() if k[:2] == key[:2] and k[3] == key[2]]
        assert len(values) == len(QUERIES) and sum(values) > 3, key


@pytest.mark.parametrize("scheme", SCHEMES)
def test_qrels_in_any_scheme_give_the_dbpedia_figures(scheme: str, setup: Path, dbpedia_figures: dict,
                                                      spellings: dict, capsys: pytest.CaptureFixture[str]) -> None:
    write = _writer(scheme, spellings)
    elq, trec = _write_qrels(setup / f"qrels-{scheme}", write)
    for path in (elq, trec):
        assert sum(not entity.startswith("<dbpedia:") for entity in _ids(path)) >= len(WIKIDATA)  # in the scheme
    figures, err = _experiment(setup, scheme, elq, trec, capsys)
    assert figures == dbpedia_figures
    assert "compared as written" not in err
    _given_equal(figures)


def test_ids_that_resolve_to_nothing_stay_as_written_and_are_counted(setup: Path, dbpedia_figures: dict,
                                                                     spellings: dict,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    elq, trec = _write_qrels(setup / "qrels-unknown", _writer("wikidata", spellings),
                             extra_elq="q01\t1\tQ999999999\t/m/0zzzzzz\n", extra_trec="q02 0 curid:1 1\n")
    figures, err = _experiment(setup, "unknown", elq, trec, capsys)
    noted = [line for line in err.splitlines() if "compared as written" in line]
    assert noted == [
        f"elquery experiment: {elq}: 2 of {len(set(_ids(elq)))} entity ids name no entity in the index's identifiers "
        "table and are compared as written (e.g. '/m/0zzzzzz')",
        f"elquery experiment: {trec}: 1 of {len(set(_ids(trec)))} entity ids name no entity in the index's identifiers "
        "table and are compared as written (e.g. 'curid:1')"]
    relevant = 1 + 2 + len(ALSO_RELEVANT["q02"])  # q02's judged entities with the unknown one
    for method in ("CMNS", "given-dbpedia", "given-wikidata"):
        before = dbpedia_figures[("sm", method, "q02", "map")]
        assert figures[("sm", method, "q02", "map")] == pytest.approx(before * (relevant - 1) / relevant)
        assert figures[("sm", method, "q03", "map")] == dbpedia_figures[("sm", method, "q03", "map")]
    # q01 gains an interpretation no run can find: strict recall halves, the other queries keep theirs
    # (methods with one setting: a swept one may choose another setting on these training folds)
    for method in ("TopRanked-CMNS", "given-wikidata"):
        assert figures[("if", method, "q01", "strict.R")] == dbpedia_figures[("if", method, "q01", "strict.R")] / 2
        assert figures[("if", method, "q05", "strict.F")] == dbpedia_figures[("if", method, "q05", "strict.F")]


def test_ltr_features_label_by_qrels_in_any_scheme(setup: Path, spellings: dict,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    files = {}
    for scheme in ("dbpedia", "wikidata", "mixed"):
        folder = setup / f"qrels-ltr-{scheme}"
        elq, _ = _write_qrels(folder, _writer(scheme, spellings), extra_elq="q01\t1\tQ999999999\n")
        capsys.readouterr()
        assert elquery(["ltr", "features", "--queries", str(setup / "queries.tsv"), "--qrels", str(elq),
                        "--artefacts", str(setup / "art"), "--out", str(folder / "features.tsv")]) == 0
        err = capsys.readouterr().err
        assert [line for line in err.splitlines() if "compared as written" in line] == [
            f"elquery ltr features: {elq}: 1 of {len(set(_ids(elq)))} entity ids name no entity in the index's "
            "identifiers table and are compared as written (e.g. 'Q999999999')"]
        files[scheme] = (folder / "features.tsv").read_text(encoding="utf-8")
    labels = [line.split("\t")[5] for line in files["dbpedia"].splitlines()[1:]]
    assert labels.count("1") >= 10 and labels.count("0") > 0
    assert files["wikidata"] == files["dbpedia"] == files["mixed"]
