"""The package as a user gets it: the README's Python snippets run as written, as plain scripts,
in a folder holding a user's own `evaluation.py` and `linking/` (which must not shadow elquery's
layers), `elquery evaluate` works there too, and a wheel built with `pip wheel .` installed into a
fresh virtual environment links a query on the demo knowledge base."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def readme_snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


@pytest.fixture()
def user_folder(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A working folder with modules named like elquery's layers, which break when imported."""
    (tmp_path / "evaluation.py").write_text("raise ImportError('the user evaluation.py was imported')\n")
    (tmp_path / "linking").mkdir()
    (tmp_path / "linking" / "__init__.py").write_text("raise ImportError('the user linking/ was imported')\n")
    env = {**os.environ, "ELQUERY_CACHE": str(tmp_path_factory.getbasetemp() / "elquery-cache-packaging"),
           "PYTHONPATH": str(tmp_path)}
    return tmp_path, env


def test_readme_snippets_run_as_plain_scripts_beside_shadowing_modules(user_folder: tuple[Path, dict[str, str]]) -> None:
    folder, env = user_folder
    snippets = readme_snippets()
    assert snippets, "the README has no Python snippet"
    for number, snippet in enumerate(snippets):
        script = folder / f"snippet_{number}.py"
        script.write_text(snippet, encoding="utf-8")
        completed = subprocess.run([sys.executable, script.name], cwd=folder, env=env, capture_output=True,
                                   text=True, timeout=600)
        assert completed.returncode == 0, completed.stderr[-2000:]
        assert "Traceback" not in completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "{'map': 0.5}"


def test_elquery_evaluate_beside_shadowing_modules(user_folder: tuple[Path, dict[str, str]]) -> None:
    folder, env = user_folder
    (folder / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (folder / "run").write_text("q1 Q0 a 1 1.0 x\n")
    completed = subprocess.run([sys.executable, "-m", "elquery", "evaluate", "rank", "--qrels", "qrels", "--run", "run",
                                "--metrics", "map"], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[-1].split() == ["all", "0.5000"]


def fresh_venv_seeing_dependencies(environment: Path) -> Path:
    """A new venv whose imports fall back on the site-packages of the interpreter running the tests
    (the user's venv, wherever pytest runs), not on the machine's base interpreter: a ``.pth`` line
    appends them after the venv's own site-packages, so the wheel installed there comes first and
    the editable elquery of the running venv (a finder hooked in by its own ``.pth``) stays out."""
    import sysconfig

    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(site) / "running-interpreter.pth").write_text("".join(f"{path}\n" for path in ours), encoding="utf-8")
    return python


def test_a_built_wheel_installs_and_links(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    wheels, source = tmp_path / "wheels", tmp_path / "source"
    # built from a copy of the checkout: setuptools writes build/ and *.egg-info beside the sources it
    # builds, which must not stay in the user's checkout (nor feed a later build stale modules)
    leftovers = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(REPO, source, ignore=leftovers)
    before = sorted(path.name for path in REPO.iterdir())
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(wheels), str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    assert sorted(path.name for path in REPO.iterdir()) == before  # nothing written into the checkout
    [wheel] = wheels.glob("elquery-*.whl")
    environment = tmp_path / "venv"
    python = fresh_venv_seeing_dependencies(environment)
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    env = {**os.environ, "ELQUERY_CACHE": str(tmp_path / "cache")}
    where = subprocess.run([str(python), "-c", "import elquery.linking, elquery.kb.demo as d; "
                            "print(elquery.linking.__file__); print(len(d.dumps()))"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    module, dumps = where.stdout.split()
    assert Path(module).is_relative_to(environment) and int(dumps) > 5  # the wheel's copy, with its data
    linked = subprocess.run([str(environment / "bin" / "elquery"), "link", "new york pizza manhattan"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=600)
    assert linked.returncode == 0, linked.stderr[-2000:]
    assert linked.stdout.split("\t")[2:] == ["<dbpedia:New_York-style_pizza>", "<dbpedia:Manhattan>\n"]
