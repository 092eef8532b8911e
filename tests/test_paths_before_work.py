"""Every command checks its input paths before any work, and before a worker pool above all: a
missing path, or one of the wrong kind, is one line and exit status 2, whatever --workers
says (a worker that failed to open the index used to break the pool: a 41-line
``BrokenProcessPool`` traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import elquery.retrieval.batch as rank_batch
from elquery.base import ElqueryError
from elquery.cli import main as elquery


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    [line] = capsys.readouterr().err.splitlines()
    return line


@pytest.fixture()
def queries(tmp_path: Path) -> Path:
    """Enough queries for two workers (retrieval.batch gives a worker 20 at least)."""
    path = tmp_path / "queries.tsv"
    path.write_text("".join(f"q{i}\tairline city {i}\n" for i in range(60)), encoding="utf-8")
    return path


@pytest.fixture()
def no_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a ranking starts (the searcher, or a pool of them)."""
    monkeypatch.setattr(rank_batch, "ordered_map", lambda *a, **k: pytest.fail("ranking started"))


def not_an_index(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A path that is no entity index, and the error it must get."""
    if kind == "missing":
        return tmp_path / "no-such-index", "no such entity index"
    if kind == "empty folder":
        (tmp_path / "empty").mkdir()
        return tmp_path / "empty", "not an elquery entity index"
    (tmp_path / "notes.txt").write_text("not an index\n")
    return tmp_path / "notes.txt", "not an elquery entity index"


@pytest.mark.parametrize("workers", [[], ["--workers", "2"], ["--workers", "1"]], ids=["default", "2", "1"])
@pytest.mark.parametrize("kind", ["missing", "empty folder", "file"])
def test_rank_refuses_a_path_that_is_not_an_index(tmp_path: Path, queries: Path, no_pool: None, kind: str,
                                                  workers: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    index, problem = not_an_index(tmp_path, kind)
    run = tmp_path / "x.run"
    assert elquery(["rank", "--index", str(index), "--queries", str(queries), "--out", str(run), *workers]) == 2
    assert one_error_line(capsys) == (f"elquery: error: {index}: {problem} "
                                      "(build one with `elquery index dbpedia` or `elquery build`)")
    assert not run.exists()


def test_rank_checks_the_index_before_reading_the_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first problem reported is the index's, though the query file is malformed too."""
    queries = tmp_path / "queries.tsv"
    queries.write_text("no tab on this line\n")
    assert elquery(["rank", "--index", str(tmp_path / "none"), "--queries", str(queries), "--out", "-"]) == 2
    assert "none: no such entity index" in one_error_line(capsys)


def sixty_queries(tmp_path: Path) -> list:  # type: ignore[type-arg]
    from elquery.retrieval.queries import read_queries

    path = tmp_path / "q.json"
    path.write_text(json.dumps({f"q{i}": f"city {i}" for i in range(60)}))
    return read_queries(path)


def test_the_ranking_api_refuses_a_missing_index_before_any_worker(tmp_path: Path, no_pool: None) -> None:
    from elquery.retrieval import mlm

    with pytest.raises(ElqueryError, match="no such entity index"):
        list(rank_batch.rank_many(str(tmp_path / "none"), sixty_queries(tmp_path), mlm(), 10, workers=2))


def test_a_worker_that_cannot_open_the_index_reports_why(tmp_path: Path) -> None:
    """An index folder of another format passes the path check; the workers that open it fail,
    and the caller gets their one-line reason instead of BrokenProcessPool."""
    from elquery.indexing.index_format import METADATA_FILE
    from elquery.retrieval import mlm

    index = tmp_path / "index"
    index.mkdir()
    (index / METADATA_FILE).write_text(json.dumps({"format": 999}))
    with pytest.raises(ElqueryError, match=r"index format 999 is not \d+; rebuild it"):
        list(rank_batch.rank_many(str(index), sixty_queries(tmp_path), mlm(), 10, workers=2))


@pytest.mark.parametrize("command", ["elq", "rank"])
def test_evaluate_checks_both_files_before_reading_either(tmp_path: Path, command: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("a malformed line\n")
    missing = tmp_path / "no-such.run"
    assert elquery(["evaluate", command, "--qrels", str(qrels), "--run", str(missing)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {missing}: no such run file"
    assert elquery(["evaluate", command, "--qrels", str(tmp_path), "--run", str(qrels)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {tmp_path}: is a directory, not a qrels file"


def test_evaluate_compare_checks_the_second_run_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 <dbpedia:Rome> 1\n")
    run = tmp_path / "a.run"
    run.write_text("a malformed line\n")
    assert elquery(["evaluate", "compare", "--qrels", str(qrels), str(run), str(tmp_path / "b.run"),
                    "--metric", "map"]) == 2
    assert one_error_line(capsys) == f"elquery: error: {tmp_path / 'b.run'}: no such run file"


@pytest.mark.parametrize("flag", ["--index", "--surface-forms", "--tagme"])
def test_serve_refuses_a_missing_artefact_before_serving(tmp_path: Path, flag: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.demo import demo_artefacts

    index, surface_forms = demo_artefacts()
    paths = {"--index": str(index), "--surface-forms": str(surface_forms), "--tagme": None}
    paths[flag] = str(tmp_path / "missing")
    argv = ["serve", "--port", "1"] + [arg for f, p in paths.items() if p for arg in (f, p)]
    assert elquery(argv) == 2
    kind = {"--index": "entity index", "--surface-forms": "surface-form store", "--tagme": "TAGME artefact"}[flag]
    assert one_error_line(capsys).startswith(f"elquery: error: {tmp_path / 'missing'}: no such {kind} (build one")


def test_link_with_workers_refuses_a_missing_index(tmp_path: Path, queries: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.demo import demo_artefacts

    _, surface_forms = demo_artefacts()
    out = tmp_path / "run.elq"
    assert elquery(["link", "--index", str(tmp_path / "none"), "--surface-forms", str(surface_forms),
                    "--queries", str(queries), "--workers", "2", "--out", str(out)]) == 2
    assert one_error_line(capsys) == (f"elquery: error: {tmp_path / 'none'}: no such entity index "
                                      "(build one with `elquery index dbpedia` or `elquery build`)")
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--index", "--surface-forms", "--tagme"])
@pytest.mark.parametrize("given", ["artefacts folder", "other folder"])
def test_link_checks_its_artefacts_as_rank_and_serve_do(tmp_path: Path, queries: Path, flag: str, given: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """elquery link's artefact paths get check_artefact's lines, as rank's and serve's do: what a
    path is not, which command builds one, and an artefacts folder pointed to --artefacts (link
    said 'no such surface-form store' of a folder, and of an artefacts folder given as --index
    'not an elquery index (no elquery.json); build one with `elquery index dbpedia`')."""
    from elquery.indexing.demo import demo_artefacts
    from elquery.kb.tagme.layout import FORMAT, META_FILE

    index, surface_forms = demo_artefacts()
    artefacts = tmp_path / "artefacts"
    (artefacts / "tagme").mkdir(parents=True)
    (artefacts / "tagme" / META_FILE).write_text(json.dumps({"format": FORMAT}), encoding="utf-8")
    (tmp_path / "other").mkdir()
    path = artefacts if given == "artefacts folder" else tmp_path / "other"
    if flag == "--tagme":
        argv = ["--method", "tagme", "--tagme", str(path)]
    else:
        argv = ["--index", str(path if flag == "--index" else index),
                "--surface-forms", str(path if flag == "--surface-forms" else surface_forms)]
    out = tmp_path / "run.elq"
    assert elquery(["link", *argv, "--queries", str(queries), "--workers", "2", "--out", str(out)]) == 2
    kind, built_by = {"--index": ("entity index", "elquery index dbpedia"),
                      "--surface-forms": ("surface-form store", "elquery index surface-forms"),
                      "--tagme": ("TAGME artefact", "elquery index tagme")}[flag]
    expected = (f"not an elquery {kind} but an artefacts folder of `elquery build`: give it as --artefacts {path}"
                if given == "artefacts folder" else f"not an elquery {kind} (build one with `{built_by}` or `elquery build`)")
    assert one_error_line(capsys) == f"elquery: error: {path}: {expected}"
    assert not out.exists()


@pytest.mark.parametrize("argv", [["index", "dbpedia", "--workers", "2", "--dumps"],
                                  ["index", "surface-forms", "--workers", "2", "--dumps"],
                                  ["index", "tagme", "--dumps"],
                                  ["build", "--workers", "2", "--data"]], ids=lambda a: " ".join(a[:2]))
def test_builds_refuse_missing_dumps(tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert elquery([*argv, str(tmp_path / "no-dumps"), "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {tmp_path / 'no-dumps'}: no such file or directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_artefacts_folder_given_for_one_artefact_points_to_artefacts(tmp_path: Path, queries: Path, no_pool: None,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's likely slip: the folder `elquery build --out` wrote, given as --index. The one
    line says what it is and which option takes it."""
    from elquery.kb.tagme.layout import FORMAT, META_FILE

    artefacts = tmp_path / "artefacts"  # what `elquery build` writes, here its TAGME artefact only
    (artefacts / "tagme").mkdir(parents=True)
    (artefacts / "tagme" / META_FILE).write_text(json.dumps({"format": FORMAT}), encoding="utf-8")
    run = tmp_path / "x.run"
    assert elquery(["rank", "--index", str(artefacts), "--queries", str(queries), "--out", str(run)]) == 2
    assert one_error_line(capsys) == (f"elquery: error: {artefacts}: not an elquery entity index but an artefacts "
                                      f"folder of `elquery build`: give it as --artefacts {artefacts}")
    assert not run.exists()
