"""``elquery index surface-forms`` and ``elquery surface-forms lookup|aliases`` end to end."""

from __future__ import annotations

import argparse
import bz2
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from elquery.base import run
from elquery.kb.normalize import normalize
from elquery.indexing.surface_forms import cli


def _index_group(commands: argparse._SubParsersAction) -> None:
    index = commands.add_parser("index")
    cli.register_index(index.add_subparsers(dest="index_command", required=True))


def _elquery(*argv: str) -> int:
    return run([_index_group, cli.register], prog="elquery", argv=[str(a) for a in argv])


def test_build_and_lookup_on_the_sample(dbpedia_sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sf.db"
    assert _elquery("index", "surface-forms", "--dumps", dbpedia_sample, "--anchors", "--out", out, "--workers", "1") == 0
    assert "store:" in capsys.readouterr().err

    # Independent count: anchor_text lines whose text normalizes to "rome", per target.
    pattern = re.compile(r'^<http://dbpedia\.org/resource/(\S+)> \S+ "(.*)"@en \.$')
    counts: Counter[str] = Counter()
    with bz2.open(dbpedia_sample / "anchor_text_en.ttl.bz2", "rt", encoding="utf-8") as handle:
        for line in handle:
            match = pattern.match(line.strip())
            if match and normalize(match.group(2)) == "rome":
                counts[f"<dbpedia:{match.group(1)}>"] += 1
    total = sum(counts.values())

    assert _elquery("surface-forms", "lookup", out, "Rome") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["form"] == "rome"
    assert [(c["entity"], c["count"], c["commonness"]) for c in printed["candidates"]] == [
        (entity, n, n / total) for entity, n in counts.most_common()
    ]
    assert printed["candidates"][0]["sources"] == ["kb", "anchors"]

    assert _elquery("surface-forms", "lookup", out, "Rome", "--limit", "1") == 0
    assert len(json.loads(capsys.readouterr().out)["candidates"]) == 1
    assert _elquery("surface-forms", "lookup", out, "no such thing") == 0
    assert json.loads(capsys.readouterr().out) == {"form": "no such thing", "candidates": []}
    assert _elquery("surface-forms", "aliases", out, "<dbpedia:Rome>") == 0
    aliases = json.loads(capsys.readouterr().out)
    assert aliases["entity"] == "<dbpedia:Rome>" and aliases["aliases"][0]["form"] == "rome"


def test_user_errors_are_one_line(dbpedia_sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sf.db"
    assert _elquery("index", "surface-forms", "--dumps", dbpedia_sample, "--min-count", "2", "--out", out) == 0
    capsys.readouterr()
    assert _elquery("index", "surface-forms", "--dumps", dbpedia_sample, "--out", out) == 2
    assert capsys.readouterr().err.strip() == f"elquery: error: {out}: already exists (use --overwrite to replace it)"
    assert _elquery("index", "surface-forms", "--dumps", dbpedia_sample, "--out", out, "--overwrite") == 0
    capsys.readouterr()
    assert _elquery("index", "surface-forms", "--dumps", tmp_path / "missing", "--out", tmp_path / "x.db") == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert _elquery("surface-forms", "lookup", tmp_path / "missing.db", "rome") == 2
    assert "no such surface-form store" in capsys.readouterr().err


@pytest.mark.parametrize("limit", ["-1", "0", "x"])
def test_limit_is_refused_up_front(limit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.cli import main as elquery

    with pytest.raises(SystemExit) as exit_info:
        elquery(["surface-forms", "lookup", str(tmp_path / "sf.db"), "rome", "--limit", limit])
    assert exit_info.value.code == 2
    assert "argument --limit:" in capsys.readouterr().err
