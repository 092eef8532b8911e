"""`elquery data` against a real HTTP server on a loopback port serving the real DBpedia sample
files: resume after a dropped connection, a server that ignores Range, a wrong checksum, a 404 on
the first mirror, a full disk, a permission error, Ctrl-C mid-file, local copies, and the CLI."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.data.download import download, link, verify
from elquery.data.registry import dataset, dataset_dir, load_registry, read_lock

FILES = ("labels_en.ttl.bz2", "page_ids_en.ttl.bz2", "page_links_en.ttl.bz2")


class Handler(BaseHTTPRequestHandler):
    """Mirrors by path prefix: /good/ (Range honoured), /missing/ (404), /norange/ (Range
    ignored), /corrupt/ (other bytes), /drop/ (the first answer of each file stops half-way)."""

    files: dict[str, bytes] = {}
    requests: list[tuple[str, str | None]] = []
    dropped: set[str] = set()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        mirror, _, name = self.path.lstrip("/").partition("/")
        Handler.requests.append((self.path, self.headers.get("Range")))
        body = self.files.get(name)
        if mirror == "missing" or body is None:
            self.send_error(404)
            return
        if mirror == "corrupt":
            body = body[::-1]
        start = 0
        if mirror != "norange" and (asked := self.headers.get("Range")):
            start = int(asked.removeprefix("bytes=").split("-")[0])
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if mirror == "drop" and name not in Handler.dropped:
            Handler.dropped.add(name)
            self.wfile.write(body[start:start + (len(body) - start) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body[start:])


@pytest.fixture(scope="module")
def server(dbpedia_sample: Path) -> Iterator[str]:
    Handler.files = {name: (dbpedia_sample / name).read_bytes() for name in FILES}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ELQUERY_HOME", str(tmp_path / "home"))
    Handler.requests, Handler.dropped = [], set()
    return tmp_path / "home"


def _registry(tmp_path: Path, server: str, mirrors: list[str], checksums: dict[str, str] | None = None) -> Path:
    lines = ["[sample]", 'description = "test"', 'licence = "CC BY-SA 3.0"', 'citation = "test"',
             'homepage = "http://127.0.0.1/"',
             "mirrors = [" + ", ".join(f'"{server}/{m}/"' for m in mirrors) + "]",
             "files = [" + ", ".join(f'"{f}"' for f in FILES) + "]",
             "[sample.parts]", f'names = ["{FILES[0]}"]']
    if checksums:
        lines += ["[sample.checksums]"] + [f'"{name}" = "{digest}"' for name, digest in checksums.items()]
    path = tmp_path / "registry.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load(tmp_path: Path, server: str, mirrors: list[str], checksums: dict[str, str] | None = None):
    return dataset("sample", load_registry(_registry(tmp_path, server, mirrors, checksums)))


def test_download_verifies_records_and_skips(tmp_path: Path, server: str, home: Path) -> None:
    data = _load(tmp_path, server, ["good"])
    states = download(data, backoff=0)
    assert [s.detail for s in states] == ["downloaded"] * 3
    for name in FILES:
        assert (dataset_dir("sample") / name).read_bytes() == Handler.files[name]
    lock = read_lock()["sample"]
    assert lock[FILES[0]] == {"sha256": _sha(Handler.files[FILES[0]]), "size": len(Handler.files[FILES[0]])}
    assert [s.state for s in verify(data)] == ["ok"] * 3
    before = len(Handler.requests)
    assert [s.detail for s in download(data, backoff=0)] == ["already there"] * 3
    assert len(Handler.requests) == before
    # a file changed after its first download no longer verifies
    (dataset_dir("sample") / FILES[1]).write_bytes(b"changed")
    assert [s.state for s in verify(data)] == ["ok", "bad", "ok"]
    assert not list(dataset_dir("sample").glob(".*.part"))


def test_only_a_part(tmp_path: Path, server: str) -> None:
    data = _load(tmp_path, server, ["good"])
    assert [s.file for s in download(data, ["names"], backoff=0)] == [FILES[0]]
    assert [s.state for s in verify(data)] == ["ok", "missing", "missing"]
    with pytest.raises(ElqueryError, match="no part or file 'nope'"):
        data.selected(["nope"])


def test_a_dropped_connection_resumes_with_range(tmp_path: Path, server: str) -> None:
    data = _load(tmp_path, server, ["drop"], {name: _sha(body) for name, body in Handler.files.items()})
    download(data, [FILES[2]], backoff=0)
    assert (dataset_dir("sample") / FILES[2]).read_bytes() == Handler.files[FILES[2]]
    half = len(Handler.files[FILES[2]]) // 2
    assert Handler.requests == [(f"/drop/{FILES[2]}", None), (f"/drop/{FILES[2]}", f"bytes={half}-")]


def test_a_server_ignoring_range_sends_the_file_again(tmp_path: Path, server: str) -> None:
    data = _load(tmp_path, server, ["norange"])
    part = dataset_dir("sample") / f".{FILES[0]}.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(Handler.files[FILES[0]][:100])  # left by an interrupted run
    download(data, [FILES[0]], backoff=0)
    assert Handler.requests[0][1] == "bytes=100-"
    assert (dataset_dir("sample") / FILES[0]).read_bytes() == Handler.files[FILES[0]]


def test_a_404_falls_back_to_the_next_mirror(tmp_path: Path, server: str) -> None:
    data = _load(tmp_path, server, ["missing", "good"])
    download(data, [FILES[0]], backoff=0)
    assert [path.split("/")[1] for path, _ in Handler.requests] == ["missing", "good"]
    assert (dataset_dir("sample") / FILES[0]).read_bytes() == Handler.files[FILES[0]]


def test_a_wrong_checksum_leaves_nothing_behind(tmp_path: Path, server: str) -> None:
    checksums = {name: _sha(body) for name, body in Handler.files.items()}
    data = _load(tmp_path, server, ["corrupt"], checksums)
    with pytest.raises(ElqueryError, match="checksum or size does not match"):
        download(data, [FILES[0]], backoff=0)
    assert list(dataset_dir("sample").iterdir()) == []
    # a good mirror after the bad one gives the file
    download(_load(tmp_path, server, ["corrupt", "good"], checksums), [FILES[0]], backoff=0)
    assert [s.state for s in verify(data, [FILES[0]])] == ["ok"]


def test_disk_full_and_permission_errors_are_one_line_and_keep_the_partial_file(
        tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _load(tmp_path, server, ["good"])
    import elquery.data.download as module

    real_open = open
    written: list[int] = []

    class Full:
        def __init__(self, handle) -> None:
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.handle.close()

        def write(self, chunk: bytes) -> None:
            if written:
                raise OSError(errno.ENOSPC, "No space left on device")
            written.append(self.handle.write(chunk[:1000]))

    with monkeypatch.context() as patched:
        patched.setattr(module, "open", lambda path, mode="r", *a: Full(real_open(path, mode, *a))
                        if "a" in mode or "w" in mode else real_open(path, mode, *a), raising=False)
        with pytest.raises(ElqueryError, match="No space left on device.*run the command again to resume"):
            download(data, [FILES[2]], backoff=0)
    assert not (dataset_dir("sample") / FILES[2]).exists()
    assert (dataset_dir("sample") / f".{FILES[2]}.part").stat().st_size == 1000
    download(data, [FILES[2]], backoff=0)  # resumes from the kept partial file
    assert Handler.requests[-1][1] == "bytes=1000-"
    assert (dataset_dir("sample") / FILES[2]).read_bytes() == Handler.files[FILES[2]]

    # as root no folder refuses a write, so the refusal is the operating system's answer, given
    with monkeypatch.context() as patched:
        def refuse(self, *args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))

        patched.setattr(Path, "mkdir", refuse)
        with pytest.raises(ElqueryError, match="Permission denied"):
            download(data, [FILES[0]], backoff=0)


def test_ctrl_c_mid_file_keeps_a_resumable_partial(tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _load(tmp_path, server, ["good"])
    import httpx

    original = httpx.Response.iter_bytes

    def interrupted(self, chunk_size=None):
        for number, chunk in enumerate(original(self, 4096)):
            if number == 3:
                raise KeyboardInterrupt
            yield chunk

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):
        patched.setattr(httpx.Response, "iter_bytes", interrupted)
        download(data, [FILES[2]], backoff=0)
    part = dataset_dir("sample") / f".{FILES[2]}.part"
    assert part.stat().st_size == 3 * 4096 and not (dataset_dir("sample") / FILES[2]).exists()
    download(data, [FILES[2]], backoff=0)
    assert Handler.requests[-1][1] == f"bytes={3 * 4096}-"
    assert (dataset_dir("sample") / FILES[2]).read_bytes() == Handler.files[FILES[2]]


def test_a_local_copy_is_linked_and_verified(tmp_path: Path, server: str, dbpedia_sample: Path) -> None:
    data = _load(tmp_path, server, ["good"])
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in FILES[:2]:
        (copy / name).write_bytes((dbpedia_sample / name).read_bytes())
    assert [s.state for s in link(data, copy)] == ["ok", "ok", "missing"]
    assert dataset_dir("sample").is_symlink() and dataset_dir("sample").resolve() == copy.resolve()
    (copy / FILES[0]).write_bytes(b"edited")
    assert [s.state for s in verify(data)][0] == "bad"
    # another copy with other bytes is refused, the link and the lock file unchanged
    other = tmp_path / "other"
    other.mkdir()
    (other / FILES[0]).write_bytes(b"edited")
    lock = read_lock()
    with pytest.raises(ElqueryError, match=rf"{FILES[0]}: not the file recorded in .*lock.json \(delete its entry "
                                           r"there to accept this copy\): SHA-256 .*, 6 bytes, .*nothing was linked"):
        link(data, other)
    assert read_lock() == lock and dataset_dir("sample").resolve() == copy.resolve()


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "elquery", "data", *args], capture_output=True, text=True,
                          env={**os.environ, **env})


def test_cli(tmp_path: Path, server: str, home: Path) -> None:
    env = {"ELQUERY_REGISTRY": str(_registry(tmp_path, server, ["missing", "good"])), "ELQUERY_HOME": str(home)}
    assert _cli("download", "sample", "--only", "names", env=env).returncode == 0
    listed = _cli("list", env=env).stdout
    assert listed.startswith("sample\t1/3 files\t")
    assert _cli("path", "sample", env=env).stdout.strip() == str(home / "datasets" / "sample")
    checked = _cli("verify", "sample", env=env)
    assert checked.returncode == 1 and checked.stdout.splitlines()[0] == f"ok\t{FILES[0]}"
    info = _cli("info", "sample", env=env).stdout
    assert "licence: CC BY-SA 3.0" in info and f"mirror: {server}/good/" in info
    for args, words in ((["info", "nope"], "no dataset 'nope'"), (["download", "sample", "--only", "x"], "no part or file"),
                        (["link", "sample", str(tmp_path / "none")], "no such folder")):
        failed = _cli(*args, env=env)
        assert failed.returncode != 0 and words in failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1 and "Traceback" not in failed.stderr


def test_the_shipped_registry_covers_the_real_sample(dbpedia_sample: Path) -> None:
    """Every file the builders read is registered, each part names registered files, and every
    dataset has a web mirror."""
    registry = load_registry()
    dbpedia = registry["dbpedia-2015-10"]
    for part in ("index", "surface-forms", "tagme"):
        assert set(dbpedia.parts[part]) <= set(dbpedia.files)
    unread = {"geo_coordinates_mappingbased_en.ttl.bz2", "homepages_en.ttl.bz2", "images_en.ttl.bz2",
              "out_degree_en.ttl.bz2", "specific_mappingbased_properties_en.ttl.bz2"}
    assert {p.name for p in dbpedia_sample.iterdir() if p.name.endswith(".ttl.bz2")} - set(dbpedia.files) == unread
    assert all(d.mirrors and all(m.startswith(("http://", "https://")) for m in d.mirrors) for d in registry.values())
