"""Hostile registries, lock files and mirrors (issue 31, item 6): every path of a registry entry
stays inside ``$ELQUERY_HOME/datasets``; a mirror streaming without end is stopped at the
published size; a redirect loop, a bad gzip content-encoding, an invalid mirror URL and every
malformed registry or lock file are one line (exit status 2) naming the file and the key, with
nothing written. The mirrors are a real HTTP server on a loopback port."""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from elquery.base import ElqueryError, run
from elquery.data.cli import register
from elquery.data.download import download, verify
from elquery.data.registry import dataset_dir, load_registry, read_lock

BODY = bytes(range(256)) * 4  # the published file: 1,000 bytes once cut
PUBLISHED = BODY[:1000]
SHA = hashlib.sha256(PUBLISHED).hexdigest()
ENDLESS_LIMIT = 64 * 2**20
"""What the "endless" mirror sends at most before it gives up (a bound, so that a client that
never stops reading still ends the test; one that stops at the published size reads 1,000 bytes)."""


class Mirror(BaseHTTPRequestHandler):
    """Mirrors by path prefix: /good/ (the file), /endless/ (bytes until the client stops reading,
    no Content-Length), /announce/ (a Content-Length larger than the published size), /loop/ (a
    redirect to itself), /badgzip/ (Content-Encoding: gzip over bytes that are not gzip), /gzip/
    (the file gzip-encoded, as a server that compresses its answers sends it)."""

    sent: dict[str, int] = {}
    """Bytes of the endless body written per file, counted after each write returns (a client may
    stop reading before the first count: then none)."""
    requests: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        mirror, _, name = self.path.lstrip("/").partition("/")
        Mirror.requests.append(self.path)
        if mirror == "loop":
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mirror == "endless":
            self.send_response(200)
            self.end_headers()  # HTTP/1.0, no length: the body ends when the connection does
            chunk = b"\xab" * 65536
            try:
                while Mirror.sent.get(name, 0) < ENDLESS_LIMIT:
                    self.wfile.write(chunk)
                    Mirror.sent[name] = Mirror.sent.get(name, 0) + len(chunk)
            except OSError:
                pass
            return
        body = {"good": PUBLISHED, "announce": PUBLISHED * 5, "badgzip": b"this is not gzip" * 40,
                "gzip": gzip.compress(PUBLISHED)}.get(mirror)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        if mirror in ("badgzip", "gzip"):
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Mirror)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ELQUERY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ELQUERY_REGISTRY", raising=False)
    Mirror.sent, Mirror.requests = {}, []
    return tmp_path / "home"


HEAD = '[sample]\ndescription = "d"\nlicence = "l"\ncitation = "c"\nhomepage = "https://example.org/"\n'


def _registry(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "registry.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _sample(tmp_path: Path, server: str, mirrors: list[str], name: str = "a.bin", size: bool = True,
            checksum: bool = True) -> Path:
    text = HEAD + "mirrors = [" + ", ".join(f'"{server}/{m}/"' for m in mirrors) + f"]\nfiles = [{json.dumps(name)}]\n"
    if checksum:
        text += f"[sample.checksums]\n{json.dumps(name)} = \"{SHA}\"\n"
    if size:
        text += f"[sample.sizes]\n{json.dumps(name)} = 1000\n"
    return _registry(tmp_path, text)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = run([register], "elquery", ["data", *args])
    return status, capsys.readouterr().err


def _files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


# --- paths stay in $ELQUERY_HOME/datasets ----------------------------------------------------

@pytest.mark.parametrize("name", ["../../escaped.bin", "../escaped.bin", "x/../../../escaped.bin", "ABSOLUTE",
                                  "a\u0007b.bin", "a\nb.bin", "a\x7fb", "./a.bin", "a//b.bin", "a/", ""])
def test_a_file_name_leaving_the_dataset_folder_is_refused(tmp_path: Path, server: str, home: Path,
                                                            capsys: pytest.CaptureFixture[str], name: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    name = name.replace("ABSOLUTE", str(tmp_path / "escaped.bin"))
    registry = _sample(tmp_path, server, ["good"], name)
    monkeypatch.setenv("ELQUERY_REGISTRY", str(registry))
    status, err = _cli(capsys, "download", "sample", "--retries", "1")
    assert status == 2, err
    assert err.startswith(f"elquery: error: {registry}: sample.files[0]: ") and err.count("\n") == 1
    assert _files_under(tmp_path / "home") == [] and not (tmp_path / "escaped.bin").exists()
    assert Mirror.requests == []


@pytest.mark.parametrize("table", ["checksums", "sizes", "sources", "parts"])
def test_a_bad_name_in_any_table_is_refused(tmp_path: Path, server: str, table: str) -> None:
    value = {"checksums": f'"{SHA}"', "sizes": "1000", "sources": '"a.bin"', "parts": '["../x"]'}[table]
    key = '"p"' if table == "parts" else '"../x"'
    text = HEAD + f'mirrors = ["{server}/good/"]\nfiles = ["a.bin"]\n[sample.{table}]\n{key} = {value}\n'
    with pytest.raises(ElqueryError, match=rf"^{tmp_path}/registry.toml: sample\.{table}\..*\.\./x"):
        load_registry(_registry(tmp_path, text))


@pytest.mark.parametrize("name", ["..", ".", "lock.json", "a/b", ".hidden", "a\tb"])
def test_a_dataset_name_that_is_not_one_plain_folder_name_is_refused(tmp_path: Path, server: str, name: str) -> None:
    text = HEAD.replace("[sample]", f"[{json.dumps(name)}]") + f'mirrors = ["{server}/good/"]\nfiles = ["a.bin"]\n'
    with pytest.raises(ElqueryError, match=r"registry.toml: .*dataset name"):
        load_registry(_registry(tmp_path, text))


# --- mirrors that do not behave ---------------------------------------------------------------

def test_an_endless_mirror_is_stopped_at_the_published_size(tmp_path: Path, server: str) -> None:
    data = load_registry(_sample(tmp_path, server, ["endless"]))["sample"]
    started = time.monotonic()
    with pytest.raises(ElqueryError, match=r"^a\.bin: could not be downloaded \(.*/endless/a\.bin: sent more than "
                                           r"the published 1000 bytes"):
        download(data, backoff=0)
    assert Mirror.sent.get("a.bin", 0) < ENDLESS_LIMIT // 4  # the client stopped reading
    assert time.monotonic() - started < 30
    assert _files_under(dataset_dir("sample")) == []
    # the next mirror gives the file
    data = load_registry(_sample(tmp_path, server, ["endless", "good"]))["sample"]
    assert [s.detail for s in download(data, backoff=0)] == ["downloaded"]
    assert (dataset_dir("sample") / "a.bin").read_bytes() == PUBLISHED


def test_the_size_recorded_in_the_lock_file_bounds_a_download_too(tmp_path: Path, server: str, home: Path) -> None:
    """A file the publisher gives no size for: its first download records it; a later download
    (after the file was removed) stops at the recorded size."""
    data = load_registry(_sample(tmp_path, server, ["good"], size=False, checksum=False))["sample"]
    download(data, backoff=0)
    assert read_lock() == {"sample": {"a.bin": {"sha256": SHA, "size": 1000}}}
    (dataset_dir("sample") / "a.bin").unlink()
    data = load_registry(_sample(tmp_path, server, ["endless"], size=False, checksum=False))["sample"]
    with pytest.raises(ElqueryError, match="sent more than the recorded 1000 bytes"):
        download(data, backoff=0)
    assert Mirror.sent.get("a.bin", 0) < ENDLESS_LIMIT // 4


def test_a_length_larger_than_the_published_size_is_refused_unread(tmp_path: Path, server: str) -> None:
    data = load_registry(_sample(tmp_path, server, ["announce", "good"]))["sample"]
    assert [s.detail for s in download(data, backoff=0)] == ["downloaded"]
    assert Mirror.requests == ["/announce/a.bin", "/good/a.bin"]
    data = load_registry(_sample(tmp_path, server, ["announce"]))["sample"]
    (dataset_dir("sample") / "a.bin").unlink()
    with pytest.raises(ElqueryError, match=r"announce/a\.bin: announces 5000 bytes, the published size is 1000"):
        download(data, backoff=0)


def test_a_redirect_loop_moves_on_to_the_next_mirror(tmp_path: Path, server: str) -> None:
    data = load_registry(_sample(tmp_path, server, ["loop", "good"]))["sample"]
    assert [s.detail for s in download(data, backoff=0)] == ["downloaded"]
    assert Mirror.requests[-1] == "/good/a.bin"
    loops = len(Mirror.requests) - 1
    data = load_registry(_sample(tmp_path, server, ["loop"]))["sample"]
    (dataset_dir("sample") / "a.bin").unlink()
    with pytest.raises(ElqueryError, match=r"loop/a\.bin: too many redirects"):
        download(data, backoff=0)
    assert len(Mirror.requests) - 1 - loops == loops  # tried once, not retried


def test_a_bad_gzip_encoding_moves_on_to_the_next_mirror(tmp_path: Path, server: str) -> None:
    data = load_registry(_sample(tmp_path, server, ["badgzip"]))["sample"]
    with pytest.raises(ElqueryError, match=r"badgzip/a\.bin: the answer's content-encoding does not decode"):
        download(data, backoff=0)
    assert Mirror.requests == ["/badgzip/a.bin"]
    assert _files_under(dataset_dir("sample")) == []
    data = load_registry(_sample(tmp_path, server, ["badgzip", "gzip"]))["sample"]
    download(data, backoff=0)  # a well gzip-encoded answer is decoded
    assert [s.state for s in verify(data)] == ["ok"]


def test_cli_one_line_for_a_misbehaving_mirror(tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELQUERY_REGISTRY", str(_sample(tmp_path, server, ["loop", "badgzip", "endless"])))
    status, err = _cli(capsys, "download", "sample", "--retries", "1")
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("elquery: error: a.bin: could not be downloaded (")
    for words in ("too many redirects", "content-encoding", "sent more than the published 1000 bytes"):
        assert words in err


# --- registries that are not one ------------------------------------------------------------

GOOD = 'mirrors = ["http://127.0.0.1:9/"]\nfiles = ["a.bin"]\n'
BAD_REGISTRIES = {
    "mirrors as a string": (HEAD + 'mirrors = "http://127.0.0.1:9/"\nfiles = ["a.bin"]\n', "sample.mirrors", "list"),
    "files = 5": (HEAD + 'mirrors = ["http://127.0.0.1:9/"]\nfiles = 5\n', "sample.files", "list"),
    "missing key": (HEAD.replace('licence = "l"\n', "") + GOOD, "sample.licence", "missing"),
    "unknown key": (HEAD + GOOD + 'checksum = "x"\n', "sample.checksum", "unknown key"),
    "non-table dataset": ("sample = 5\n", "sample", "table"),
    "invalid mirror URL": (HEAD + 'mirrors = ["http://[bad/"]\nfiles = ["a.bin"]\n', "sample.mirrors[0]", "URL"),
    "ftp mirror": (HEAD + 'mirrors = ["ftp://example.org/"]\nfiles = ["a.bin"]\n', "sample.mirrors[0]", "http"),
    "mirror not a folder": (HEAD + 'mirrors = ["http://example.org/x"]\nfiles = ["a.bin"]\n', "sample.mirrors[0]",
                            "end with /"),
    "no mirror": (HEAD + 'mirrors = []\nfiles = ["a.bin"]\n', "sample.mirrors", "at least 1"),
    "no file": (HEAD + 'mirrors = ["http://127.0.0.1:9/"]\nfiles = []\n', "sample.files", "at least 1"),
    "a file twice": (HEAD + 'mirrors = ["http://127.0.0.1:9/"]\nfiles = ["a", "a"]\n', "sample.files", "twice"),
    "size as text": (HEAD + GOOD + '[sample.sizes]\n"a.bin" = "1000"\n', 'sample.sizes."a.bin"', "integer"),
    "negative size": (HEAD + GOOD + '[sample.sizes]\n"a.bin" = -1\n', 'sample.sizes."a.bin"', "0"),
    "bad checksum": (HEAD + GOOD + '[sample.checksums]\n"a.bin" = "abc"\n', 'sample.checksums."a.bin"', "SHA-256"),
    "checksum of no file": (HEAD + GOOD + f'[sample.checksums]\n"b.bin" = "{SHA}"\n', 'sample.checksums."b.bin"',
                            "not one of its files"),
    "description as a number": (HEAD.replace('"d"', "5") + GOOD, "sample.description", "string"),
}


@pytest.mark.parametrize("case", BAD_REGISTRIES)
def test_a_malformed_registry_is_one_line_naming_file_and_key(tmp_path: Path, case: str,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    text, key, words = BAD_REGISTRIES[case]
    registry = _registry(tmp_path, text)
    monkeypatch.setenv("ELQUERY_REGISTRY", str(registry))
    started = time.monotonic()
    status, err = _cli(capsys, "download", "sample", "--retries", "1")
    assert time.monotonic() - started < 10
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith(f"elquery: error: {registry}: {key}: ") and words in err, err
    assert _files_under(tmp_path / "home") == []


@pytest.mark.parametrize("raw", [b"\xff\xfe[sample]\n", b'[sample]\ndescription = "\xff"\n'])
def test_a_registry_of_bad_bytes_is_one_line(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "registry.toml"
    path.write_bytes(raw)
    with pytest.raises(ElqueryError, match=rf"^{path}: not valid UTF-8 \(byte 0xff at offset \d+\)$"):
        load_registry(path)


@pytest.mark.parametrize("value", ["[" * 100_000 + "]" * 100_000, "{x = " * 5000 + "1" + "}" * 5000])
def test_a_registry_nested_too_deeply_is_one_line(tmp_path: Path, value: str) -> None:
    path = _registry(tmp_path, f"a = {value}\n")
    with pytest.raises(ElqueryError, match=rf"^{path}: not valid TOML \(nested too deeply\)$"):
        load_registry(path)


def test_a_registry_with_a_byte_order_mark_reads(tmp_path: Path) -> None:
    path = tmp_path / "registry.toml"
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + GOOD).encode())
    assert load_registry(path)["sample"].files == ("a.bin",)


# --- lock files that are not one ------------------------------------------------------------

BAD_LOCKS = {
    "[]": ("[]", "", "object"),
    '{"ds": "x"}': ('{"ds": "x"}', "ds", "object"),
    '{"ds": {"a.bin": 5}}': ('{"ds": {"a.bin": 5}}', 'ds."a.bin"', "object"),
    "no size": (json.dumps({"ds": {"a.bin": {"sha256": SHA}}}), 'ds."a.bin".size', "missing"),
    "bad checksum": (json.dumps({"ds": {"a.bin": {"sha256": "x", "size": 1}}}), 'ds."a.bin".sha256', "SHA-256"),
    "size true": (json.dumps({"ds": {"a.bin": {"sha256": SHA, "size": True}}}), 'ds."a.bin".size', "integer"),
    "NaN size": ('{"ds": {"a.bin": {"sha256": "%s", "size": NaN}}}' % SHA, 'ds."a.bin".size', "integer"),
    "extra key": (json.dumps({"ds": {"a.bin": {"sha256": SHA, "size": 1, "x": 1}}}), 'ds."a.bin".x', "unknown key"),
    "bad bytes": ('{"ds": "\xff"}', "", "not valid"),
    "not JSON": ("{", "", "not valid JSON"),
}


@pytest.mark.parametrize("case", BAD_LOCKS)
def test_a_malformed_lock_file_is_one_line_naming_file_and_key(tmp_path: Path, home: Path, server: str, case: str,
                                                               capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    text, key, words = BAD_LOCKS[case]
    lock = home / "datasets" / "lock.json"
    lock.parent.mkdir(parents=True)
    lock.write_bytes(text.encode("utf-8") if case != "bad bytes" else b'{"ds": "\xff"}')
    with pytest.raises(ElqueryError, match=rf"^{lock}: ") as raised:
        read_lock()
    assert "\n" not in str(raised.value) and words in str(raised.value)
    if key:
        assert str(raised.value).startswith(f"{lock}: {key}: ")
    monkeypatch.setenv("ELQUERY_REGISTRY", str(_sample(tmp_path, server, ["good"])))
    for command in ("download", "verify"):
        status, err = _cli(capsys, command, "sample")
        assert status == 2 and err == f"elquery: error: {raised.value}\n"
    assert Mirror.requests == [] and sorted(p.name for p in lock.parent.iterdir()) == ["lock.json"]
