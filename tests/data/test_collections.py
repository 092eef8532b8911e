"""The test collections of `elquery data` (DBpedia-Entity v2, Y-ERD and ERD-dev) against the
experiment configs that read them (issue 27.8): every file a config reads under ``$ELQUERY_DATA``
is a registered file of the dataset of that name; files fetched from a loopback server holding
them in the publishers' layouts land where the configs read them and are read by elquery's own
readers; a local copy in the configs' layout links as it is, one in the publisher's layout (a
clone of its folder) links under the configs' names, and a wrong folder is refused in one line
(exit 2) with nothing linked. With the shared data present, the shipped checksums are
checked against it (a download of it verifies, and gives the very same bytes)."""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.data.registry import REGISTRY, load_registry
from elquery.evaluation.readers import read_elq, read_trec_qrels
from elquery.experiments.folds import given_folds
from elquery.retrieval.queries import read_queries

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
DATA = re.compile(r"\$\{ELQUERY_DATA(?::-[^}]*)?\}")

# The publishers' layouts, as their repositories hold them (read on GitHub):
# DBpedia-Entity v2: iai-group/DBpedia-Entity, collection/v2/ (the files keep their names);
# Y-ERD and ERD-dev with DBpedia 2015-10 entities: iai-group/nordlys, data/el/ (renamed here).
PUBLISHED_NAMES = {
    "elq": {"yerd/queries_YERD.json": "y-erd/queries.json", "yerd/qrels_YERD_elq.txt": "y-erd/qrels-elq.txt",
            "yerd/qrels_YERD_er.txt": "y-erd/qrels-er.txt", "yerd/YERD_2015_10.tsv": "y-erd/annotations.tsv",
            "erd/queries_ERD.json": "erd-dev/queries.json", "erd/qrels_ERD_elq.txt": "erd-dev/qrels-elq.txt",
            "erd/qrels_ERD_er.txt": "erd-dev/qrels-er.txt"},
    "dbpedia-entity-v2": {name: name for name in (
        "queries-v2.txt", "queries-v2_stopped.txt", "qrels-v2.txt", "folds/all_queries.json", "folds/INEX-LD.json",
        "folds/ListSearch.json", "folds/QALD2.json", "folds/SemSearch-ES.json")},
}


def _folds(*testing: list[str]) -> str:
    """A fold file as the collection publishes it: {"0": {"testing": [...], "training": [...]}, ...}."""
    everyone = [qid for fold in testing for qid in fold]
    return json.dumps({str(n): {"testing": fold, "training": [q for q in everyone if q not in fold]}
                       for n, fold in enumerate(testing)}, indent=4)


Y_ERD = {"trec-2010-100_1": "forearm pain exercises", "trec-2010-101_1": "the music man songs",
         "trec-2010-104_1": "hoboken estates", "yahoo-375_1": "les miserables"}
ERD_DEV = {"TREC-1": "adobe indian houses", "TREC-10": "california franchise tax board",
           "TREC-13": "condo rentals in florida"}
DBPEDIA_ENTITY = {"INEX_LD-2009022": "Szechwan dish food cuisine", "INEX_LD-2009039": "roman architecture",
                  "SemSearch_ES-1": "44 magnum hunting", "SemSearch_ES-10": "asheville north carolina",
                  "SemSearch_LS-1": "Apollo astronauts walked on the Moon",
                  "TREC_Entity-1": "Carriers that Blackberry makes phones for",
                  "QALD2_te-1": "German cities have more than 250000 inhabitants",
                  "QALD2_tr-1": "all female Russian astronauts"}
# Real lines of the published files (a few queries each), in their formats.
FIXTURES = {
    "elq": {
        "yerd/queries_YERD.json": json.dumps(Y_ERD, indent=4),
        "yerd/qrels_YERD_elq.txt": "trec-2010-100_1\ntrec-2010-101_1\t1\t<dbpedia:The_Music_Man>\n"
                                   "trec-2010-104_1\t1\t<dbpedia:Hoboken,_New_Jersey>\n"
                                   "yahoo-375_1\t1\t<dbpedia:Les_Misérables>\n"
                                   "yahoo-375_1\t1\t<dbpedia:Les_Misérables_(musical)>\n",
        "yerd/qrels_YERD_er.txt": "trec-2010-101_1\tQ0\t<dbpedia:The_Music_Man>\t1\n"
                                  "trec-2010-104_1\tQ0\t<dbpedia:Hoboken,_New_Jersey>\t1\n"
                                  "yahoo-375_1\tQ0\t<dbpedia:Les_Misérables>\t1\n"
                                  "yahoo-375_1\tQ0\t<dbpedia:Les_Misérables_(musical)>\t1\n",
        "yerd/YERD_2015_10.tsv": "difficulty\tqid\tquery\tmention\tentity\tset_id\n"
                                 "e\ttrec-2010-100_1\tforearm pain exercises\t\t\t\n"
                                 "e\ttrec-2010-101_1\tthe music man songs\tthe music man\t<dbpedia:The_Music_Man>\t0\n"
                                 "e\ttrec-2010-104_1\thoboken estates\thoboken\t<dbpedia:Hoboken,_New_Jersey>\t0\n"
                                 "e\tyahoo-375_1\tles miserables\tles miserables\t<dbpedia:Les_Misérables>\t0\n"
                                 "e\tyahoo-375_1\tles miserables\tles miserables\t"
                                 "<dbpedia:Les_Misérables_(musical)>\t1\n",
        "erd/queries_ERD.json": json.dumps(ERD_DEV, indent=4),
        "erd/qrels_ERD_elq.txt": "TREC-1\nTREC-10\t1\t<dbpedia:California>\n"
                                 "TREC-13\t1\t<dbpedia:Condominium>\t<dbpedia:Florida>\n",
        "erd/qrels_ERD_er.txt": "TREC-10\tQ0\t<dbpedia:California>\t1\nTREC-13\tQ0\t<dbpedia:Condominium>\t1\n"
                                "TREC-13\tQ0\t<dbpedia:Florida>\t1\n",
    },
    "dbpedia-entity-v2": {
        "queries-v2.txt": "".join(f"{qid}\t{text}?\n" for qid, text in DBPEDIA_ENTITY.items()),
        "queries-v2_stopped.txt": "".join(f"{qid}\t{text}\n" for qid, text in DBPEDIA_ENTITY.items()),
        "qrels-v2.txt": "INEX_LD-2009022\tQ0\t<dbpedia:Chili_oil>\t2\nINEX_LD-2009022\tQ0\t<dbpedia:Ambuyat>\t0\n"
                        "SemSearch_ES-1\tQ0\t<dbpedia:Handgun_hunting>\t2\n"
                        "SemSearch_ES-1\tQ0\t<dbpedia:.41_Remington_Magnum>\t1\n"
                        "QALD2_te-1\tQ0\t<dbpedia:Berlin>\t2\nQALD2_tr-1\tQ0\t<dbpedia:Svetlana_Savitskaya>\t2\n"
                        "SemSearch_LS-1\tQ0\t<dbpedia:Buzz_Aldrin>\t2\nTREC_Entity-1\tQ0\t<dbpedia:AT&T>\t1\n",
        "folds/all_queries.json": _folds(["INEX_LD-2009022", "SemSearch_ES-1", "SemSearch_LS-1", "QALD2_te-1"],
                                         ["INEX_LD-2009039", "SemSearch_ES-10", "TREC_Entity-1", "QALD2_tr-1"]),
        "folds/INEX-LD.json": _folds(["INEX_LD-2009022"], ["INEX_LD-2009039"]),
        "folds/SemSearch-ES.json": _folds(["SemSearch_ES-1"], ["SemSearch_ES-10"]),
        "folds/ListSearch.json": _folds(["SemSearch_LS-1"], ["TREC_Entity-1"]),
        "folds/QALD2.json": _folds(["QALD2_te-1"], ["QALD2_tr-1"]),
    },
}


def config_paths() -> dict[str, set[str]]:
    """{dataset: {file}} of every path the shipped configs read under ``${ELQUERY_DATA}``."""
    read: dict[str, set[str]] = {}
    for config in sorted(CONFIGS.glob("*.toml")):
        for dataset, file in re.findall(r'"\$\{ELQUERY_DATA(?::-[^}]*)?\}/([^/"]+)/([^"]+)"', config.read_text()):
            read.setdefault(dataset, set()).add(file)
    return read


def test_every_file_a_config_reads_is_a_registered_file_of_its_dataset() -> None:
    registry = load_registry()
    read = config_paths()
    assert set(read) == {"elq", "dbpedia-entity-v2"}
    for dataset, files in read.items():
        assert files - set(registry[dataset].files) == set(), dataset


def test_the_registry_names_the_publishers_files() -> None:
    """Where each test-collection file is fetched from is the publisher's name for it."""
    registry = load_registry()
    for name, published in PUBLISHED_NAMES.items():
        entry = registry[name]
        assert {entry.source(local): local for local in entry.files} == published
        assert set(entry.checksums) == set(entry.sizes) == set(entry.files)  # pinned: the figures' data
        for local in entry.files:
            assert [url.rpartition("/")[0] for url in entry.urls(local)] == [
                (mirror + entry.source(local)).rpartition("/")[0] for mirror in entry.mirrors]
            assert all(url.startswith("https://raw.githubusercontent.com/iai-group/") for url in entry.urls(local))


def test_a_source_for_an_unregistered_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "registry.toml"
    path.write_text('[x]\ndescription = "d"\nlicence = "l"\ncitation = "c"\nhomepage = "h"\n'
                    'mirrors = ["http://127.0.0.1/"]\nfiles = ["a.txt"]\n[x.sources]\n"b.txt" = "B.txt"\n')
    with pytest.raises(ElqueryError,
                       match=r"registry.toml: x\.sources\.\"b\.txt\": a source for 'b.txt', which is not one of its files"):
        load_registry(path)


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ELQUERY_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture()
def publisher(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A loopback web server over a folder (``/NAME/...`` is the publisher of dataset NAME)."""
    root = tmp_path / "published"
    root.mkdir()

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()
    httpd.server_close()


def _registry_at(server: str, tmp_path: Path, *, checksums: bool) -> Path:
    """The shipped registry with every mirror replaced by ``server/NAME/`` (and, for fixtures that
    are not the published files, without the published checksums and sizes)."""
    lines, name, skipping = [], "", False
    for line in REGISTRY.read_text(encoding="utf-8").splitlines():
        if header := re.fullmatch(r"\[([^\].]+)(\.[^\]]+)?\]", line):
            name = header[1]
            skipping = not checksums and header[2] in (".checksums", ".sizes")
        if skipping:
            continue
        lines.append(f'mirrors = ["{server}/{name}/"]' if line.startswith("mirrors = ") else line)
    path = tmp_path / "registry.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "elquery", "data", *args], capture_output=True, text=True,
                          env={**os.environ, **env})


def _read_everything_the_configs_read(root: Path) -> dict[str, set[str]]:
    """Each file a shipped config reads under ``${ELQUERY_DATA}`` = ``root``, read by elquery's
    reader for its key: {config file: the query ids of its queries}."""
    seen = {}
    for config in sorted(CONFIGS.glob("*.toml")):
        data = tomllib.loads(config.read_text())
        if not DATA.search(data.get("queries", "")):
            continue
        resolve = lambda value: Path(DATA.sub(str(root), value))  # noqa: E731
        qids = {query.qid for query in read_queries(resolve(data["queries"]))}
        for task, reader in (("interpretation_finding", read_elq), ("semantic_mapping", read_trec_qrels),
                             ("entity_retrieval", read_trec_qrels)):
            if task in data and DATA.search(data[task]["qrels"]):  # not a published run's own qrels
                assert set(reader(resolve(data[task]["qrels"]))) <= qids, (config.name, task)
        if data["crossval"]["scheme"] == "given":
            folds = given_folds([resolve(file) for file in data["crossval"]["files"]], qids)
            assert {qid for fold in folds for qid in fold.test} == qids, config.name
        seen[config.name] = qids
    return seen


def test_the_published_layout_downloads_into_what_the_configs_read(
        tmp_path: Path, home: Path, publisher: tuple[str, Path]) -> None:
    server, root = publisher
    for name, files in FIXTURES.items():
        for file, text in files.items():
            (root / name / file).parent.mkdir(parents=True, exist_ok=True)
            (root / name / file).write_text(text, encoding="utf-8")
    env = {"ELQUERY_REGISTRY": str(_registry_at(server, tmp_path, checksums=False)), "ELQUERY_HOME": str(home)}
    for name in FIXTURES:
        fetched = _cli("download", name, env=env)
        assert fetched.returncode == 0, fetched.stderr
    data = Path(_cli("path", env=env).stdout.strip())
    assert data == home / "datasets"
    read = _read_everything_the_configs_read(data)
    assert read["y-erd.toml"] == read["sample-y-erd.toml"] == set(Y_ERD)
    assert read["erd-dev.toml"] == read["ictir15-erd-dev-published.toml"] == set(ERD_DEV)
    assert read["dbpedia-entity.toml"] == read["dbpedia-entity-published.toml"] == set(DBPEDIA_ENTITY)
    for name, published in PUBLISHED_NAMES.items():
        for source, local in published.items():
            assert (data / name / local).read_text(encoding="utf-8") == FIXTURES[name][source]
    checked = _cli("verify", "elq", env=env)
    assert checked.returncode == 0 and checked.stdout.splitlines() == [
        f"ok\t{file}" for file in load_registry()["elq"].files]


def test_the_shared_files_are_the_published_ones(tmp_path: Path, home: Path, publisher: tuple[str, Path],
                                                 elq_data: Path) -> None:
    """Served in the publishers' layouts, the shared files download and verify against the shipped
    checksums, and land byte for byte as the shared folder holds them."""
    shared = {"elq": elq_data, "dbpedia-entity-v2": elq_data.parent / "dbpedia-entity-v2"}
    server, root = publisher
    for name, published in PUBLISHED_NAMES.items():
        for source, local in published.items():
            (root / name / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shared[name] / local, root / name / source)
    env = {"ELQUERY_REGISTRY": str(_registry_at(server, tmp_path, checksums=True)), "ELQUERY_HOME": str(home)}
    for name, published in PUBLISHED_NAMES.items():
        assert _cli("download", name, env=env).returncode == 0
        assert _cli("verify", name, env=env).returncode == 0
        for local in published.values():
            assert filecmp.cmp(home / "datasets" / name / local, shared[name] / local, shallow=False)
    read = _read_everything_the_configs_read(home / "datasets")
    assert len(read["y-erd.toml"]) == 2398 and len(read["erd-dev.toml"]) == 91
    assert len(read["dbpedia-entity.toml"]) == 467


def test_the_shared_folders_link_as_they_are(home: Path, elq_data: Path) -> None:
    env = {"ELQUERY_HOME": str(home)}
    for name, folder in (("elq", elq_data), ("dbpedia-entity-v2", elq_data.parent / "dbpedia-entity-v2")):
        linked = _cli("link", name, str(folder), env=env)
        assert linked.returncode == 0, linked.stderr
        assert linked.stdout.splitlines() == [f"ok\t{file}" for file in load_registry()[name].files]
        assert (home / "datasets" / name).resolve() == folder.resolve()
    shown = _cli("info", "elq", env=env).stdout
    assert "file: y-erd/queries.json\there\tfrom yerd/queries_YERD.json" in shown.splitlines()


def test_a_partial_copy_links_and_names_what_is_missing(tmp_path: Path, home: Path, elq_data: Path) -> None:
    copy = tmp_path / "copy"
    (copy / "y-erd").mkdir(parents=True)
    for file in ("queries.json", "qrels-elq.txt"):
        shutil.copyfile(elq_data / "y-erd" / file, copy / "y-erd" / file)
    linked = _cli("link", "elq", str(copy), env={"ELQUERY_HOME": str(home)})
    assert linked.returncode == 0, linked.stderr
    assert linked.stdout.splitlines()[:3] == ["ok\ty-erd/queries.json", "ok\ty-erd/qrels-elq.txt",
                                              "missing\ty-erd/qrels-er.txt"]
    assert linked.stderr.splitlines() == [f"linked {copy}: 2 of 7 files of elq; complete parts: none "
                                          "(`elquery data download elq` fetches the others)"]


def _publishers_copy(folder: Path, elq_data: Path) -> Path:
    """A copy of the shared Y-ERD and ERD-dev files in Nordlys' layout (``data/el/`` of a clone)."""
    for source, local in PUBLISHED_NAMES["elq"].items():
        (folder / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(elq_data / local, folder / source)
    return folder


def test_a_copy_in_the_publishers_layout_links_under_the_configs_names(tmp_path: Path, home: Path,
                                                                       elq_data: Path) -> None:
    """A clone of Nordlys' data/el/ (yerd/queries_YERD.json, ...): the dataset's folder becomes a
    folder of links named as the configs read them, each to the publisher's file; it verifies,
    `list` calls it a local copy, every config reads it, and a later link replaces it."""
    env = {"ELQUERY_HOME": str(home)}
    published = _publishers_copy(tmp_path / "nordlys" / "data" / "el", elq_data)
    linked = _cli("link", "elq", str(published), env=env)
    assert linked.returncode == 0, linked.stderr
    assert (linked.stdout.splitlines(), linked.stderr) == ([f"ok\t{file}" for file in load_registry()["elq"].files], "")
    folder = home / "datasets" / "elq"
    for source, local in PUBLISHED_NAMES["elq"].items():
        assert (folder / local).is_symlink() and (folder / local).resolve() == published / source
    assert sorted(p.name for p in home.joinpath("datasets").iterdir()) == ["elq"]  # no work folder left
    assert _cli("verify", "elq", env=env).stdout.splitlines() == [f"ok\t{f}" for f in load_registry()["elq"].files]
    assert "elq\tlocal copy\t" in _cli("list", env=env).stdout
    assert _cli("link", "dbpedia-entity-v2", str(elq_data.parent / "dbpedia-entity-v2"), env=env).returncode == 0
    read = _read_everything_the_configs_read(home / "datasets")
    assert len(read["y-erd.toml"]) == 2398 and len(read["erd-dev.toml"]) == 91
    # linked again, to a copy in the dataset's layout: the folder of links is replaced by a link
    relinked = _cli("link", "elq", str(elq_data), env=env)
    assert relinked.returncode == 0, relinked.stderr
    assert folder.is_symlink() and folder.resolve() == elq_data.resolve()
    assert _cli("link", "elq", str(published), env=env).returncode == 0
    assert not folder.is_symlink() and (folder / "erd-dev" / "queries.json").resolve() == published / "erd" / "queries_ERD.json"
    assert sorted(p.name for p in home.joinpath("datasets").iterdir()) == ["dbpedia-entity-v2", "elq"]


def test_a_partial_copy_in_the_publishers_layout_names_what_it_completes(tmp_path: Path, home: Path,
                                                                         elq_data: Path) -> None:
    published = _publishers_copy(tmp_path / "el", elq_data)
    shutil.rmtree(published / "yerd")
    linked = _cli("link", "elq", str(published), env={"ELQUERY_HOME": str(home)})
    assert linked.returncode == 0, linked.stderr
    assert linked.stderr.splitlines() == [f"linked {published}: 3 of 7 files of elq; complete parts: erd-dev "
                                          "(`elquery data download elq` fetches the others)"]
    assert sorted(p.name for p in (home / "datasets" / "elq").iterdir()) == ["erd-dev"]


def test_a_folder_in_another_layout_or_with_other_bytes_is_refused_and_nothing_is_linked(
        tmp_path: Path, home: Path) -> None:
    env = {"ELQUERY_HOME": str(home)}
    other = tmp_path / "other"  # neither the dataset's layout nor the publisher's
    (other / "Y-ERD").mkdir(parents=True)
    (other / "Y-ERD" / "Y-ERD.tsv").write_text("x\n", encoding="utf-8")
    refused = _cli("link", "elq", str(other), env=env)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"elquery: error: {other} holds none of the files of elq, under their names or the publisher's "
        "(such as y-erd/queries.json or yerd/queries_YERD.json); `elquery data info elq` lists them"]
    published = tmp_path / "nordlys-data-el"  # the publisher's layout, not the published bytes
    for file, text in FIXTURES["elq"].items():
        (published / file).parent.mkdir(parents=True, exist_ok=True)
        (published / file).write_text(text, encoding="utf-8")
    refused = _cli("link", "elq", str(published), env=env)
    assert refused.returncode == 2 and refused.stdout == ""
    first = FIXTURES["elq"]["yerd/queries_YERD.json"].encode()
    assert refused.stderr.splitlines() == [
        f"elquery: error: {published}/yerd/queries_YERD.json: not the published file: SHA-256 "
        f"{hashlib.sha256(first).hexdigest()[:12]}..., {len(first)} bytes, expected "
        f"{load_registry()['elq'].checksums['y-erd/queries.json'][:12]}..., 108819 bytes; nothing was linked"]
    assert not (home / "datasets").exists()
    # the dataset's layout, but not the published bytes (the fixtures are a few lines of each file)
    copy = tmp_path / "copy"
    for source, local in PUBLISHED_NAMES["elq"].items():
        (copy / local).parent.mkdir(parents=True, exist_ok=True)
        (copy / local).write_text(FIXTURES["elq"][source], encoding="utf-8")
    refused = _cli("link", "elq", str(copy), env=env)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"elquery: error: {copy}/y-erd/queries.json: not the published file: SHA-256 "
        f"{hashlib.sha256(first).hexdigest()[:12]}..., {len(first)} bytes, expected "
        f"{load_registry()['elq'].checksums['y-erd/queries.json'][:12]}..., 108819 bytes; nothing was linked"]
    assert not (home / "datasets" / "elq").exists() and not (home / "datasets" / "lock.json").exists()
