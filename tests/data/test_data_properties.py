"""Property tests of the registry and lock-file readers (issue 31, item 6): any TOML value in any
key of a registry, any JSON value in a lock file, and any bytes in either give a valid result or
one :class:`ElqueryError` line naming the file, never another exception; and a valid result keeps
every path inside ``$ELQUERY_HOME/datasets``."""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from elquery.base import ElqueryError
from elquery.data.registry import dataset_dir, datasets_dir, load_registry, read_lock, write_lock

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ELQUERY_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


# --- TOML values, and a writer of them -------------------------------------------------------

def toml_string(text: str) -> str:
    """A TOML basic string holding ``text`` exactly."""
    escaped = "".join("\\\\" if c == "\\" else '\\"' if c == '"' else f"\\u{ord(c):04x}" if ord(c) < 0x20 or c == "\x7f"
                      else c for c in text)
    return f'"{escaped}"'


def toml_value(value: Any) -> str:
    """``value`` (what :mod:`tomllib` gives) as TOML text; tables are inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, (int, datetime.date, datetime.time)):
        return value.isoformat() if not isinstance(value, int) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
scalars = (texts | st.integers(-2**63, 2**63 - 1) | st.floats() | st.booleans()
           | st.datetimes(timezones=st.none() | st.just(datetime.timezone.utc)) | st.dates() | st.times())
toml_values = st.recursive(scalars,
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
                           max_leaves=12)

plain = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,6}", fullmatch=True)
risky = (st.sampled_from(["..", "../x", "x/..", "/abs", "a//b", ".x", "a/.b", "a\x00b", "a\nb", "", ".", "lock.json",
                          "a\\b", "a/"])
         | texts)
good_mirrors = st.sampled_from(["http://127.0.0.1:9/", "https://example.org/data/", "http://[::1]:8000/a%20b/"])
bad_mirrors = st.sampled_from(["http://[bad/", "ftp://h/", "http://h/x", "http://h:99999/", "http:///", "http://a b/",
                               "http://h/?q/"]) | texts


@st.composite
def mirrors(draw: st.DrawFn) -> str:
    """Mostly a good base URL, else a bad one or any text."""
    return draw(bad_mirrors if draw(st.integers(0, 7)) == 7 else good_mirrors)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=10)

KEYS = ("description", "licence", "citation", "homepage", "mirrors", "files", "parts", "checksums", "sizes", "sources")
valid_names = st.lists(plain, min_size=1, max_size=3).map("/".join)
odd = toml_values | risky | st.lists(risky, min_size=1, max_size=3) | st.dictionaries(risky, toml_values, max_size=2)


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    """A dataset's table of the right form, then up to two keys replaced, removed or added, or a
    bad name among its files."""
    files = draw(st.lists(valid_names, min_size=1, max_size=4, unique=True))
    entry: dict[str, Any] = {key: draw(texts) for key in KEYS[:4]}
    entry |= {"mirrors": draw(st.lists(mirrors(), min_size=1, max_size=3)), "files": files}
    some = st.lists(st.sampled_from(files), max_size=3, unique=True)
    values = {"checksums": st.from_regex(r"[0-9a-f]{64}", fullmatch=True), "sizes": st.integers(0, 2**40),
              "sources": valid_names}
    for table, value in values.items():
        if draw(st.booleans()):
            entry[table] = {file: draw(value) for file in draw(some)}
    if draw(st.booleans()):
        entry["parts"] = draw(st.dictionaries(texts, some, max_size=2))
    for _ in range(max(0, draw(st.integers(0, 4)) - 2)):
        key = draw(st.sampled_from([*KEYS, "extra"]))
        change = draw(st.sampled_from(["replace", "remove", "name"]))
        if change == "replace":
            entry[key] = draw(odd)
        elif change == "remove":
            entry.pop(key, None)
        elif isinstance(entry.get(key), dict):
            entry[key][draw(risky)] = draw(st.sampled_from(list(entry[key].values()) or [1]))
        else:
            entry["files"] = [*files, draw(risky)]
    return entry


@st.composite
def registries(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly one or two datasets of plain names with tables as :func:`entries` draws them; else
    any names and values."""
    if draw(st.integers(0, 3)):
        return draw(st.dictionaries(plain, entries(), min_size=1, max_size=2))
    return draw(st.dictionaries(plain | risky, entries() | toml_values, max_size=3))


def _one_line_about(error: ElqueryError, path: Path) -> None:
    message = str(error)
    assert message.startswith(f"{path}: ") and "\n" not in message and "\r" not in message


def _inside(data_folder: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(data_folder.resolve())


@SETTINGS
@given(registries())
def test_any_registry_gives_datasets_in_their_folder_or_one_line(tmp_path: Path, registry: dict[str, Any]) -> None:
    path = tmp_path / "registry.toml"
    path.write_text("".join(f"{toml_string(name)} = {toml_value(entry)}\n" for name, entry in registry.items()),
                    encoding="utf-8")
    try:
        datasets = load_registry(path)
    except ElqueryError as error:
        _one_line_about(error, path)
        event("refused")
        return
    event(f"read, {sum(len(d.files) for d in datasets.values()) > 0} files")
    assert set(datasets) == set(registry)
    for name, data in datasets.items():
        assert data.files and data.mirrors and len(set(data.files)) == len(data.files)
        assert dataset_dir(name).parent == datasets_dir() and _inside(datasets_dir(), dataset_dir(name))
        for file in data.files:
            destination = dataset_dir(name) / file
            assert _inside(dataset_dir(name), destination) and destination != dataset_dir(name)
            assert not any(ord(c) < 0x20 or c == "\x7f" for c in file)
            part = destination.with_name(f".{destination.name}.part")
            assert part.name not in {Path(f).name for f in data.files}
        assert all(m.startswith(("http://", "https://")) and m.endswith("/") for m in data.mirrors)
        assert all(set(files) <= set(data.files) for files in data.parts.values())
        assert set(data.checksums) | set(data.sizes) | set(data.sources) <= set(data.files)
        assert all(type(size) is int and size >= 0 for size in data.sizes.values())


@SETTINGS
@given(st.binary(max_size=300) | toml_values.map(lambda v: f"x = {toml_value(v)}\n".encode("utf-8", "surrogatepass")))
def test_any_bytes_as_a_registry_give_datasets_or_one_line(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "registry.toml"
    path.write_bytes(raw)
    try:
        load_registry(path)
    except ElqueryError as error:
        _one_line_about(error, path)


# --- lock files ------------------------------------------------------------------------------

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=10)
valid_records = st.fixed_dictionaries({"sha256": st.from_regex(r"[0-9a-f]{64}", fullmatch=True),
                                       "size": st.integers(0, 2**40)})
keys = st.one_of(plain, plain, st.text(max_size=8))


@st.composite
def locks(draw: st.DrawFn) -> Any:
    """A lock file of the right form, then up to two values anywhere in it replaced by any JSON
    value, or a key added to a record; or any JSON value."""
    if draw(st.integers(0, 5)) == 0:
        return draw(json_values)
    lock = draw(st.dictionaries(keys, st.dictionaries(keys, valid_records, max_size=3), max_size=3))
    for _ in range(max(0, draw(st.integers(0, 4)) - 2)):
        where: Any = lock
        path = []
        while isinstance(where, dict) and where and draw(st.booleans()):
            path.append(draw(st.sampled_from(sorted(where))))
            where = where[path[-1]]
        if path:
            parent = lock
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = draw(json_values)
        else:
            lock[draw(keys)] = draw(json_values)
    return lock


@SETTINGS
@given(locks())
def test_any_json_lock_file_gives_its_records_or_one_line(home: Path, value: Any) -> None:
    path = datasets_dir() / "lock.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    try:
        lock = read_lock()
    except ElqueryError as error:
        _one_line_about(error, path)
        event("refused")
        return
    event(f"read, {sum(map(len, lock.values())) > 0} records")
    assert lock == value  # exactly what was recorded: {dataset: {file: {"sha256": HEX, "size": N}}}
    for files in lock.values():
        for record in files.values():
            assert set(record) == {"sha256", "size"} and len(record["sha256"]) == 64
            assert type(record["size"]) is int and record["size"] >= 0
    write_lock(lock)
    assert read_lock() == lock


@SETTINGS
@given(st.binary(max_size=200) | st.just(b"[" * 100_000) | st.just(b'{"a": {"b": {"sha256": "' + b"0" * 64 + b'", '
                                                                     b'"size": 1e400}}}'))
def test_any_bytes_as_a_lock_file_give_records_or_one_line(home: Path, raw: bytes) -> None:
    path = datasets_dir() / "lock.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    try:
        read_lock()
    except ElqueryError as error:
        _one_line_about(error, path)
