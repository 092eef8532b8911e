"""The import graph of the package: indexing <- retrieval <- linking, evaluation depends on none of
them, every layer may import the bottom modules ``elquery.base``, ``elquery.files``, ``elquery.workers``, ``elquery.spark``, ``elquery.registry``
and the package ``elquery.formats`` (which itself imports only the standard library, ``elquery.base``
and ``elquery.files``), and the dispatcher (``elquery.cli``) sits on top. Walks every ``import`` statement of the source (lazy ones inside
functions too) with :mod:`ast`, so an upward edge fails here wherever it is written; and every
class of elquery's Java a layer names (``java_class("org.elquery....")``), which must belong to a
jar of its layer or one below."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PARTS = ("indexing", "retrieval", "linking", "evaluation")
LAYERS = {**{part: REPO / part for part in PARTS}, "kb": REPO / "elquery" / "kb"}
"""Where each layer's sources are: the four at the top of the repository, and ``elquery/kb``, the
knowledge base's read side (entity ids, normalization, the index and store readers, the JVM, the
demo's files), which sits under them all: kb <- indexing <- retrieval <- linking."""
# What each layer may import from elquery (besides itself and the bottom modules).
ALLOWED: dict[str, set[str]] = {
    "kb": set(),
    "indexing": {"kb"},
    "retrieval": {"kb", "indexing"},
    "linking": {"kb", "indexing", "retrieval"},
    "evaluation": set(),
    "base": set(),
    "files": set(),
    "workers": set(),
    "spark": set(),
    "registry": set(),
    "formats": set(),
}
BOTTOM = ("base", "files", "workers", "spark", "registry", "formats")
FORMATS_IMPORT = {"base", "files", "formats"}
"""All that ``elquery.formats`` may import from elquery (evaluation reads its files through it, and
.ci/lower-bounds installs elquery without its dependencies to run the evaluation tests)."""


def _part(module: str) -> str | None:
    """``elquery.linking.gif`` -> ``linking``; ``elquery.base`` -> ``base``; ``elquery.cli`` -> ``cli``."""
    parts = module.split(".")
    if parts[0] != "elquery":
        return None
    return parts[1] if len(parts) > 1 else "elquery"


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _sources() -> list[tuple[str, Path]]:
    out = []
    for part, folder in LAYERS.items():
        out += [(part, p) for p in sorted(folder.rglob("*.py"))]
    for name in BOTTOM:
        package = REPO / "elquery" / name
        out += [(name, p) for p in sorted(package.rglob("*.py"))] if package.is_dir() else [(name, package.with_suffix(".py"))]
    return out


def upward_edges() -> list[str]:
    edges = []
    for part, path in _sources():
        for line, module in _imports(path):
            target = _part(module)
            if target is None or target == part or target in BOTTOM:
                continue
            if target not in ALLOWED[part]:
                edges.append(f"{path.relative_to(REPO)}:{line}: {part} imports {module}")
    return edges


def test_no_layer_imports_upward() -> None:
    assert upward_edges() == []


JAVA_PACKAGES = {"org.elquery.index": "kb", "org.elquery.retrieval": "retrieval"}
"""The lowest layer that may load each package of elquery's Java (:data:`elquery.kb.jvm.HELPER_JARS`):
the index jar (``indexing/java``) is the knowledge base's read side (``EntityIndex``) as well as
the indexing layer's writer, the retrieval jar (``retrieval/java``) is the retrieval engine."""
JAVA_CLASS = re.compile(r"(org\.elquery\.[a-z]+)\.[A-Z][\w$]*")
"""A fully qualified class name of elquery's Java, the whole of a string literal (what
``java_class`` takes); a mention inside a docstring is no load."""


def _java_classes(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and JAVA_CLASS.fullmatch(node.value)]


def upward_java_classes() -> list[str]:
    """Per layer, the classes of elquery's Java it names that belong to a layer above it (or to no
    layer's package)."""
    edges = []
    for part, path in _sources():
        for line, name in _java_classes(path):
            owner = JAVA_PACKAGES.get(JAVA_CLASS.fullmatch(name).group(1))
            if owner is None or (owner != part and owner not in ALLOWED[part]):
                edges.append(f"{path.relative_to(REPO)}:{line}: {part} loads {name}")
    return edges


def test_no_layer_loads_a_java_class_of_a_layer_above() -> None:
    """The layering holds for the Java a layer calls as for what it imports: indexing (and the
    knowledge base under it) loads no class of the retrieval jar."""
    assert upward_java_classes() == []


def test_the_java_walk_sees_a_class_name(tmp_path: Path) -> None:
    """A class name passed to ``java_class`` or kept in a constant is seen; one mentioned in a
    docstring or comment is not."""
    source = tmp_path / "m.py"
    source.write_text('"""Calls ``org.elquery.retrieval.EntityScores``."""\n'
                      'ENTRY = "org.elquery.retrieval.PairFeatures"\n'
                      'def f():\n    return java_class("org.elquery.index.IndexAccess$Inner")  # org.elquery.retrieval.X\n')
    assert _java_classes(source) == [(2, "org.elquery.retrieval.PairFeatures"), (4, "org.elquery.index.IndexAccess$Inner")]


def test_formats_import_only_the_standard_library_base_and_files() -> None:
    """The ground floor of the file formats: nothing of another layer, of another bottom module than
    ``elquery.base`` and ``elquery.files``, or outside the standard library (numpy, ...), and the
    same for those two modules, so that the evaluation layer runs with numpy, scipy and
    ir_measures alone."""
    outside = []
    for part, path in _sources():
        if part not in FORMATS_IMPORT:
            continue
        for line, module in _imports(path):
            target = _part(module)
            if target not in FORMATS_IMPORT and (target is not None or module.split(".")[0] not in sys.stdlib_module_names):
                outside.append(f"{path.relative_to(REPO)}:{line}: {module}")
    assert outside == []


def test_the_walk_sees_an_upward_edge(tmp_path: Path) -> None:
    """The walker itself: a lazy import inside a function is an edge like any other."""
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from elquery.linking.linker import Linker\n    import elquery.cli\n")
    assert _imports(source) == [(2, "elquery.linking.linker"), (3, "elquery.cli")]
    assert [_part(m) for _, m in _imports(source)] == ["linking", "cli"]


@pytest.mark.parametrize("part", LAYERS)
def test_no_top_level_name_outside_the_namespace(part: str) -> None:
    """Every import of a layer names it through ``elquery.``: a bare ``import linking`` would pick
    up a user's own ``linking/`` folder."""
    bare = [f"{p.relative_to(REPO)}:{line}: {m}" for q, p in _sources() if q == part
            for line, m in _imports(p) if m.split(".")[0] in PARTS]
    assert bare == []
