"""The forms of the registry (``registry.toml``) and of the lock file (``lock.json``), checked
with pydantic when either is read: a mistake is one line naming the file and the key
(``registry.toml: sample.files[0]: ...``, keys written as TOML dotted keys).

Every path a registry names stays inside ``$ELQUERY_HOME/datasets``: a dataset's name is one
plain folder name, and a file's name is a relative path of plain names (no ``..`` or ``.``, no
empty part, no leading ``/``, no part starting with ``.``, which names elquery's own partial
files) without control characters. A mirror is an ``http(s)`` base URL ending with ``/``; a
checksum is a SHA-256 (64 hexadecimal digits); a size is a whole number of bytes.

Imported only when a registry or a lock file is read (pydantic is not part of elquery's start-up).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from elquery.data.registry import LOCK_FILE

_SHA256 = re.compile(r"[0-9a-f]{64}")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _no_control(text: str, what: str) -> str:
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise ValueError(f"{what} holds a control character, got {text!r}")
    return text


def _file_name(name: str) -> str:
    """A file's name in its dataset's folder: relative, of plain parts (see the module docstring)."""
    _no_control(name, "a file name")
    if not name:
        raise ValueError("a file name is not empty")
    if name.startswith("/") or "\\" in name:
        raise ValueError(f"a file name is relative to the dataset's folder, with '/' between its parts, got {name!r}")
    for part in name.split("/"):
        if part in ("", ".", ".."):
            raise ValueError(f"a file name has no empty, '.' or '..' part (it stays in the dataset's folder), "
                             f"got {name!r}")
        if part.startswith("."):
            raise ValueError(f"a part of a file name does not start with '.' (elquery's partial files do), "
                             f"got {name!r}")
    return name


def dataset_name(name: str) -> str:
    """A dataset's name: one plain folder name of ``$ELQUERY_HOME/datasets``."""
    _no_control(name, "a dataset name")
    if not name or "/" in name or "\\" in name or name.startswith(".") or name == LOCK_FILE:
        raise ValueError(f"not a dataset name (one folder name, not starting with '.', not {LOCK_FILE}), got {name!r}")
    return name


def _mirror(url: str) -> str:
    _no_control(url, "a mirror")
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port
    except ValueError as exc:
        raise ValueError(f"not a URL ({exc}), got {url!r}") from None
    if any(c.isspace() for c in url):
        raise ValueError(f"not a URL (it holds a space), got {url!r}")
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"a mirror is an http:// or https:// URL with a host, got {url!r}")
    if not url.endswith("/") or parts.query or parts.fragment:
        raise ValueError(f"a mirror is a base URL (a folder): it must end with / (a file's URL is the mirror and "
                         f"its name), got {url!r}")
    return url


def _source(name: str) -> str:
    _no_control(name, "a source name")
    if not name or name.startswith("/") or "://" in name:
        raise ValueError(f"a source name is a path relative to the mirrors, got {name!r}")
    return name


def _sha256(digest: str) -> str:
    if not _SHA256.fullmatch(digest):
        raise ValueError(f"expected a SHA-256 (64 lowercase hexadecimal digits), got {digest!r}")
    return digest


FileName = Annotated[str, AfterValidator(_file_name)]
Mirror = Annotated[str, AfterValidator(_mirror)]
Source = Annotated[str, AfterValidator(_source)]
Sha256 = Annotated[str, AfterValidator(_sha256)]
Size = Annotated[int, Field(ge=0)]


class DatasetEntry(BaseModel):
    """One dataset's table of the registry."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    description: str
    licence: str
    citation: str
    homepage: str
    mirrors: list[Mirror] = Field(min_length=1)
    files: list[FileName] = Field(min_length=1)
    parts: dict[str, list[FileName]] = Field(default_factory=dict)
    checksums: dict[FileName, Sha256] = Field(default_factory=dict)
    sizes: dict[FileName, Size] = Field(default_factory=dict)
    sources: dict[FileName, Source] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names_are_files(self) -> DatasetEntry:
        seen: set[str] = set()
        for file in self.files:
            if file in seen:
                raise _KeyError(("files",), f"{file!r} is given twice")
            seen.add(file)
        for table in ("parts", "checksums", "sizes", "sources"):
            for key, value in getattr(self, table).items():
                for file in (value if table == "parts" else [key]):
                    if file not in seen:
                        where = (table, key) if table != "parts" else (table, key, value.index(file))
                        raise _KeyError(where, f"a {table[:-1]} for {file!r}, which is not one of its files")
        return self


class LockRecord(BaseModel):
    """What the lock file records of a file verified at its first download."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    sha256: Sha256
    size: Size


class _KeyError(ValueError):
    """A mistake found across keys, at ``where`` (keys below the dataset's table)."""

    def __init__(self, where: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.where = where


_LOCK = TypeAdapter(dict[str, dict[str, LockRecord]])


class SchemaError(Exception):
    """A value not of its form: the dotted key where and what is wrong."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)


def key_text(path: tuple[str | int, ...]) -> str:
    """``('sample', 'sizes', 'a.bin')`` as a TOML dotted key: ``sample.sizes."a.bin"``; a list index as ``[0]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + (part if _BARE_KEY.fullmatch(part) else _quoted(part))
    return text


def _quoted(key: str) -> str:
    """A TOML quoted key, every character that does not print escaped (so a message shows it as it is)."""
    def escaped(c: str) -> str:
        if c in '"\\':
            return "\\" + c
        if c.isprintable():
            return c
        return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"

    return '"' + "".join(map(escaped, key)) + '"'


_MESSAGES = {"missing": "missing", "extra_forbidden": "unknown key", "list_type": "expected a list",
             "string_type": "expected a string", "int_type": "expected an integer",
             "greater_than_equal": "expected an integer >= 0", "too_short": "expected at least 1 item"}


def _message(error: Mapping[str, Any], table: str) -> str:
    kind = error["type"]
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        text = f"expected {table}"
    elif kind == "value_error":
        return str(error["ctx"]["error"])
    else:
        text = _MESSAGES.get(kind, " ".join(str(error["msg"]).split()))
    if kind not in ("missing", "extra_forbidden"):
        text += f", got {_shown(error['input'])}"
    return text


def _shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut after 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_problem(exc: ValidationError, prefix: tuple[str | int, ...], table: str) -> SchemaError:
    error = exc.errors(include_url=False)[0]
    where = tuple(part for part in error["loc"] if part != "[key]")
    return SchemaError(key_text(prefix + where), _message(error, table))


def registry_entry(name: Any, entry: Any) -> DatasetEntry:
    """The table ``entry`` of the dataset ``name``, checked; :class:`SchemaError` if it is not one."""
    try:
        dataset_name(name)
    except ValueError as exc:
        raise SchemaError(key_text((name,)), str(exc)) from None
    if not isinstance(entry, dict):
        raise SchemaError(key_text((name,)), f"expected a table ([{key_text((name,))}]), got {_shown(entry)}")
    try:
        return DatasetEntry.model_validate(entry)
    except ValidationError as exc:
        cause = exc.errors(include_url=False)[0].get("ctx", {}).get("error")
        if isinstance(cause, _KeyError):
            raise SchemaError(key_text((name, *cause.where)), str(cause)) from None
        raise _first_problem(exc, (name,), "a table") from None


def lock_records(value: Any) -> dict[str, dict[str, LockRecord]]:
    """The lock file's parsed JSON, checked: ``{dataset: {file: {"sha256": HEX, "size": N}}}``."""
    if not isinstance(value, dict):
        raise SchemaError("", 'expected an object {"DATASET": {"FILE": {"sha256": ..., "size": ...}}}, '
                          f"got {_shown(value)}")
    try:
        return _LOCK.validate_python(value)
    except ValidationError as exc:
        raise _first_problem(exc, (), "an object") from None


def decoded(raw: bytes) -> str:
    """The text of a registry or lock file: UTF-8, a byte order mark at the start dropped; a bad
    byte is :class:`SchemaError` naming its offset."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SchemaError("", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
