"""Shared fixtures: the real data under ../shared/data (or $ELQUERY_DATA), skipped when absent."""

from __future__ import annotations

import bz2
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from elquery.indexing.ntriples import ParseReport

REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a user at a terminal sends it: a shell's background job (``cmd &`` in a script,
    as a CI runner may start the tests) inherits SIGINT ignored, which elquery rightly keeps, and
    the tests that interrupt a command (this process or the ones it starts, which inherit the
    disposition) would then test nothing. A handled signal is reset to the default in a child."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if "ELQUERY_CACHE" not in os.environ:  # the tests' demo artefacts and compiled forests, not the user's
        os.environ["ELQUERY_CACHE"] = tempfile.mkdtemp(prefix="elquery-test-cache-")
        config.add_cleanup(lambda: shutil.rmtree(os.environ.pop("ELQUERY_CACHE"), ignore_errors=True))


def index_without_ltr_texts(index: Path, copy: Path) -> Path:
    """A copy of ``index`` as built before ``ltr_texts.bin`` existed (no files, no ``ltr_texts``
    in ``elquery.json``)."""
    shutil.copytree(index, copy, ignore=shutil.ignore_patterns("ltr_text*", "write.lock"))
    metadata = json.loads((copy / "elquery.json").read_text(encoding="utf-8"))
    del metadata["ltr_texts"]
    (copy / "elquery.json").write_text(json.dumps(metadata), encoding="utf-8")
    return copy


def data_root() -> Path:
    return Path(os.environ.get("ELQUERY_DATA", REPO.parent / "shared" / "data"))


def freebase_links(path: Path, report: ParseReport) -> list[tuple[str, str]]:
    """The (entity id, mid) links of a freebase_links file, one by one, from the batches the
    surface-form build reads (:func:`~elquery.indexing.surface_forms.sources.freebase_link_batches`)."""
    from elquery.indexing.surface_forms.sources import freebase_link_batches

    return [link for entities, mids in freebase_link_batches(path, report) for link in zip(entities, mids)]


def write_compressed(path: Path, data: bytes | str) -> Path:
    """``data`` (text as UTF-8) written to ``path``, compressed as its name ends: ``.gz``,
    ``.bz2``, or plain."""
    import bz2
    import gzip

    raw = data.encode("utf-8") if isinstance(data, str) else data
    compress = {".gz": gzip.compress, ".bz2": bz2.compress}.get(path.suffix, lambda b: b)
    path.write_bytes(compress(raw))
    return path


def counted_line_by_line(lines: Iterable[bytes | str], min_posterior: float) -> tuple[Counter[tuple[str, str]], Counter[str]]:
    """What the one-line rule (:func:`~elquery.indexing.surface_forms.facc_annotations.annotation_pair`)
    makes of raw FACC1 annotation lines: the (form, mid) pairs counted, and the lines rejected per reason."""
    from elquery.indexing.surface_forms.facc_annotations import Rejected, annotation_pair

    pairs: Counter[tuple[str, str]] = Counter()
    rejected: Counter[str] = Counter()
    for line in lines:
        result = annotation_pair(line, min_posterior)
        if isinstance(result, Rejected):
            rejected[result.value] += 1
        else:
            pairs[result] += 1
    return pairs, rejected


def read_pair_counts(path: Path) -> dict[tuple[str, str], int]:
    """The rows of a FACC count file (``form<TAB>mid<TAB>count``), as ``elquery facc-counts`` writes it."""
    rows = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines())
    return {(form, mid): int(count) for form, mid, count in rows}


def _process_state(stat: Path) -> tuple[str, int]:
    """The state and parent pid of a process, from its ``/proc/PID/stat``."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (it exists and is no zombie)."""
    try:
        state, _ = _process_state(Path("/proc") / str(pid) / "stat")
    except OSError:
        return False
    return state != "Z"


def gone(pids: Iterable[int], seconds: float = 5) -> bool:
    """Whether every process of ``pids`` ends within ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def child_processes(pid: int, resource_tracker: bool = False) -> list[int]:
    """The live child processes of ``pid``; without ``resource_tracker``, but multiprocessing's
    resource tracker (started with the first pool, it stays for the life of its parent)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, parent = _process_state(entry / "stat")
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if parent == pid and state != "Z" and (resource_tracker or b"resource_tracker" not in command):
                found.append(int(entry.name))
    return found


def free_port() -> int:
    """A TCP port free on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(port: int) -> bool:
    """Whether the server on ``port`` answers 200 at /health."""
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def elquery_serve(args: Sequence[str], cwd: Path, cache: str, seconds: float,
                  ready: Callable[[int], bool] = healthy) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """``elquery serve --port PORT ARGS`` (a free loopback port), run from ``cwd`` with
    ``ELQUERY_CACHE=cache``: its port and process once ``ready(port)`` (by default: /health answers
    200); the test fails, with the server's stderr, if it exits first or takes longer than
    ``seconds``. The server is stopped after the block."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "elquery", "serve", "--port", str(port), *args], cwd=cwd,
                              env={**os.environ, "ELQUERY_CACHE": cache}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + seconds
        while not ready(port):
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read() if server.stderr else ""
            time.sleep(0.3)
        yield port, server
    finally:
        server.terminate()
        server.wait(timeout=30)


def require_data(relative: str) -> Path:
    path = data_root() / relative
    if not path.exists():
        pytest.skip(f"real data not found at {path} (set ELQUERY_DATA to the shared data folder)")
    return path


@pytest.fixture(scope="session")
def dbpedia_sample() -> Path:
    """The real DBpedia 2015-10 sample (98 entities)."""
    return require_data("dbpedia-2015-10-sample")


@pytest.fixture(scope="session")
def elq_data() -> Path:
    return require_data("elq")


@pytest.fixture(scope="session")
def sample_link_artefacts(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The index and the surface forms (KB names and anchor texts) of the real DBpedia sample,
    built once for every test that links against it."""
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.surface_forms.build import BuildOptions, build_store

    root = tmp_path_factory.mktemp("linking-sample")
    build_dbpedia_index([dbpedia_sample], root / "index", workers=2)
    build_store(root / "sf.db", BuildOptions((dbpedia_sample,), anchors=True, workers=2, progress=False))
    return root / "index", root / "sf.db"


SPARK_MASTER = "local[2]"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One Spark session in local mode (two cores) for the ``--engine spark`` tests; they are
    skipped, with the reason, when the optional extra ``elquery[spark]`` is not installed."""
    pytest.importorskip("pyspark", reason="the optional extra is not installed: pip install 'elquery[spark]'")
    from elquery.spark import session

    spark = session(SPARK_MASTER)
    yield spark
    spark.stop()


@pytest.fixture(scope="module")
def demo_tagme(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """TAGME (a TagmeLinker) over the demo knowledge base's artefact, built in a cache of the test
    module's own."""
    from elquery.linking.tagme import TagmeLinker

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-tagme")))
        linker = TagmeLinker.demo()
    with linker:
        yield linker


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo knowledge base's index, built in a cache of the test module's own."""
    from elquery.indexing.demo import demo_artefacts

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-index")))
        index, _ = demo_artefacts()
    return index


def sample_page_ids_and_mids(sample: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Title -> Wikipedia page id and title -> Freebase mid (``/m/...``), read from the sample's
    ``page_ids`` and ``freebase_links`` dump lines by regular expressions (not by elquery's
    code), the first value of a title kept."""
    resource = r"<http://dbpedia.org/resource/(\S+)>"
    page_ids = _dump_values(sample / "page_ids_en.ttl.bz2",
                            resource + r' <http://dbpedia.org/ontology/wikiPageID> "(\d+)"\^\^<http://www.w3.org/2001/XMLSchema#integer> \.')
    mids = _dump_values(sample / "freebase_links_en.ttl.bz2",
                        resource + r" <http://www.w3.org/2002/07/owl#sameAs> <http://rdf.freebase.com/ns/m\.(\w+)> \.")
    return page_ids, {title: "/m/" + code for title, code in mids.items()}


def _dump_values(path: Path, pattern: str) -> dict[str, str]:
    """Title -> the value ``pattern`` (subject title, value) finds on each line of a dump."""
    found: dict[str, str] = {}
    for line in bz2.open(path, "rt", encoding="utf-8"):
        match = re.fullmatch(pattern, line.rstrip("\n"))
        assert match is not None, line
        found.setdefault(match.group(1), match.group(2))
    return found


def write_wikidata_links(data: Path, qids: dict[str, str]) -> None:
    """A DBpedia ``interlanguage_links_en.ttl`` in ``data`` linking each title of ``qids`` to its
    Wikidata item, as DBpedia 2015-10 writes them (``owl:sameAs`` a wikidata.dbpedia.org IRI)."""
    (data / "interlanguage_links_en.ttl").write_text("".join(
        f"<http://dbpedia.org/resource/{title}> <http://www.w3.org/2002/07/owl#sameAs> "
        f"<http://wikidata.dbpedia.org/resource/{qid}> .\n" for title, qid in qids.items()), encoding="utf-8")
