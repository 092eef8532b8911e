"""The registry of datasets elquery uses (``registry.toml`` in this package, or the file named by
``ELQUERY_REGISTRY``: a copy pointing at a private mirror) and where their files live:
``$ELQUERY_HOME/datasets/NAME/`` (``ELQUERY_HOME`` defaults to ``~/.elquery``), under the names the
experiment configs read (``$ELQUERY_HOME/datasets`` is their ``${ELQUERY_DATA}``), with the
checksums of files the registry gives none for in ``$ELQUERY_HOME/datasets/lock.json``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elquery.base import ElqueryError
from elquery.files import read_toml

REGISTRY = Path(__file__).with_name("registry.toml")
LOCK_FILE = "lock.json"


@dataclass(frozen=True)
class Dataset:
    """One registered dataset: its files, mirrors (base URLs), published checksums and sizes."""

    name: str
    description: str
    licence: str
    citation: str
    homepage: str
    mirrors: tuple[str, ...]
    files: tuple[str, ...]
    parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    checksums: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    """A file's name under the mirrors, where the publisher names it otherwise than the dataset's
    folder does (the folder holds what elquery's configs read)."""

    def selected(self, only: Sequence[str] = ()) -> list[str]:
        """The files of the parts or file names in ``only`` (all files when empty), in registry order."""
        if not only:
            return list(self.files)
        wanted: set[str] = set()
        for item in only:
            if item in self.parts:
                wanted |= set(self.parts[item])
            elif item in self.files:
                wanted.add(item)
            else:
                choices = ", ".join([*self.parts, *self.files])
                raise ElqueryError(f"{self.name} has no part or file {item!r}; choose from {choices}")
        return [name for name in self.files if name in wanted]

    def source(self, file: str) -> str:
        """The publisher's name of ``file``, relative to a mirror."""
        return self.sources.get(file, file)

    def urls(self, file: str) -> list[str]:
        return [mirror + self.source(file) for mirror in self.mirrors]

    def complete_parts(self, present: Sequence[str]) -> list[str]:
        """The parts all of whose files are among ``present``."""
        return [part for part, files in self.parts.items() if set(files) <= set(present)]


def load_registry(path: Path | None = None) -> dict[str, Dataset]:
    """The datasets of a registry file (by name): ``path``, else ``$ELQUERY_REGISTRY``, else the
    package's own. Its form is checked as it is read (:mod:`elquery.data.schema`): a mistake is one
    line naming the file and the key."""
    from elquery.data.schema import SchemaError, registry_entry

    path = path or Path(os.environ.get("ELQUERY_REGISTRY") or REGISTRY)
    data = read_toml(path, "registry")
    try:
        entries = {name: registry_entry(name, value) for name, value in data.items()}
    except SchemaError as exc:
        raise ElqueryError(f"{path}: {exc}") from None
    return {name: Dataset(name, entry.description, entry.licence, entry.citation, entry.homepage,
                          tuple(entry.mirrors), tuple(entry.files),
                          {part: tuple(files) for part, files in entry.parts.items()},
                          dict(entry.checksums), dict(entry.sizes), dict(entry.sources))
            for name, entry in entries.items()}


def dataset(name: str, registry: dict[str, Dataset] | None = None) -> Dataset:
    registry = load_registry() if registry is None else registry
    if name not in registry:
        raise ElqueryError(f"no dataset {name!r}; `elquery data list` shows {', '.join(registry)}")
    return registry[name]


def home() -> Path:
    return Path(os.environ.get("ELQUERY_HOME") or Path.home() / ".elquery")


def datasets_dir() -> Path:
    """The folder of every dataset's folder: the experiment configs' ``${ELQUERY_DATA}``."""
    return home() / "datasets"


def dataset_dir(name: str) -> Path:
    """Where a dataset's files are (a local copy for ``elquery data link``: :func:`is_local_copy`)."""
    return datasets_dir() / name


def is_local_copy(folder: Path) -> bool:
    """Whether a dataset's folder is what ``elquery data link`` makes: a symbolic link to a copy
    in the dataset's layout, or, for a copy in the publisher's layout, a folder of symbolic links
    to its files (and nothing else)."""
    if folder.is_symlink():
        return True
    entries = [Path(root) / name for root, folders, files in os.walk(folder)
               for name in [*files, *(f for f in folders if (Path(root) / f).is_symlink())]]
    return bool(entries) and all(entry.is_symlink() for entry in entries)


def read_lock() -> dict[str, dict[str, dict[str, object]]]:
    """{dataset: {file: {"size": N, "sha256": HEX}}} of the files verified at their first download,
    its form checked as it is read (one line naming the file and the key)."""
    from elquery.data.schema import SchemaError, decoded, lock_records

    path = datasets_dir() / LOCK_FILE
    try:
        records = lock_records(json.loads(decoded(path.read_bytes())))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ElqueryError(f"{path}: unreadable lock file ({exc.strerror or exc})") from None
    except SchemaError as exc:
        raise ElqueryError(f"{path}: {exc}") from None
    except (ValueError, RecursionError) as exc:
        why = exc if isinstance(exc, ValueError) else "nested too deeply"
        raise ElqueryError(f"{path}: not valid JSON ({why})") from None
    return {name: {file: {"sha256": record.sha256, "size": record.size} for file, record in files.items()}
            for name, files in records.items()}


def write_lock(lock: dict[str, dict[str, dict[str, object]]]) -> None:
    path = datasets_dir() / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{LOCK_FILE}.{os.getpid()}")
    temporary.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(path)
