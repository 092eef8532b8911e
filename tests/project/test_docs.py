"""The documentation lives in the repository and stays true: no module docstring or help text
names a path outside the repository, and every module and command-line flag a docs/ page names
exists."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SOURCES = [p for part in ("indexing", "retrieval", "linking", "evaluation", "elquery") for p in (REPO / part).rglob("*.py")]
OUTSIDE = re.compile(r"\.\./")
FILE_SUFFIXES = {"json", "txt", "npy", "md", "toml", "db", "jar"}


def _parser() -> argparse.ArgumentParser:
    import elquery.cli

    parser = argparse.ArgumentParser(prog="elquery")
    commands = parser.add_subparsers(dest="command")
    for register in elquery.cli.registrars():
        register(commands)
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command path (("index", "dbpedia"), ("link",), ...) with its parser."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
        children = _subparsers(parser)
        if path and not children:
            found[path] = parser
        for name, child in children.items():
            walk((*path, name), child)

    walk((), _parser())
    return found


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def _texts(parser: argparse.ArgumentParser) -> list[str]:
    return [t for t in (parser.description, *(a.help for a in parser._actions)) if t]


def test_no_docstring_names_a_path_outside_the_repository() -> None:
    bad = []
    for path in SOURCES:
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if OUTSIDE.search(docstring):
            bad.append(str(path.relative_to(REPO)))
    assert bad == []


def test_no_help_text_names_a_path_outside_the_repository() -> None:
    bad = [f"{' '.join(path)}: {text[:60]}" for path, parser in commands().items()
           for text in _texts(parser) if OUTSIDE.search(text) or "shared/docs" in text]
    assert bad == []


def test_every_command_has_a_page_and_every_flag_on_a_page_exists() -> None:
    pages = {page.stem: page.read_text(encoding="utf-8") for page in (DOCS / "commands").glob("*.md")}
    by_page: dict[str, set[str]] = {}
    for path, parser in commands().items():
        page = "-".join(path) if "-".join(path) in pages else path[0]
        assert page in pages, f"no docs/commands page for `elquery {' '.join(path)}`"
        by_page.setdefault(page, set()).update(_flags(parser))
    for page, text in pages.items():
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))
        assert named <= by_page.get(page, set()), f"docs/commands/{page}.md names flags that do not exist: {named - by_page.get(page, set())}"


def test_every_module_a_page_names_exists() -> None:
    missing = []
    for page in DOCS.rglob("*.md"):
        for name in set(re.findall(r"`(elquery(?:\.\w+)+)`", page.read_text(encoding="utf-8"))):
            if name.rsplit(".", 1)[1] in FILE_SUFFIXES:  # a file name such as elquery.json
                continue
            if not _resolves(name):
                missing.append(f"{page.relative_to(REPO)}: {name}")
    assert missing == []


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                target = getattr(target, attribute)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("page", ["methods.md", "index-schema.md", "surface-forms.md", "formats.md", "evaluation.md"])
def test_the_reference_pages_exist(page: str) -> None:
    assert (DOCS / page).read_text(encoding="utf-8").startswith("# ")


def _environment_section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Environment variables\n", 1)[1].split("\n## ", 1)[0]


def test_every_environment_variable_is_in_the_readme_s_list() -> None:
    """Each ``ELQUERY_*`` variable the package or a shipped config reads is named in the README's
    "Environment variables" section, but those ``elquery serve`` sets for its own worker
    processes (``ELQUERY_SERVE_*``, ``elquery.serve.cli``)."""
    texts = [p.read_text(encoding="utf-8") for p in SOURCES]
    texts += [p.read_text(encoding="utf-8") for p in (REPO / "elquery" / "experiments" / "configs").glob("*.toml")]
    read = {name for text in texts for name in re.findall(r"ELQUERY_[A-Z0-9_]*[A-Z0-9]", text)}
    listed = set(re.findall(r"ELQUERY_[A-Z0-9_]*[A-Z0-9]", _environment_section()))
    assert sorted(name for name in read - listed if not name.startswith("ELQUERY_SERVE_")) == []


def test_the_cache_row_names_every_folder_elquery_writes_there() -> None:
    """``$ELQUERY_CACHE`` holds the demo's artefacts and the LTR models' compiled forests: the
    README's row names both (the forests' folder by its name)."""
    from elquery.linking.ltr.forest_file import FOLDER

    [row] = [line for line in _environment_section().splitlines() if line.startswith("| `ELQUERY_CACHE` |")]
    assert "demo knowledge base" in row and f"`{FOLDER}/`" in row
