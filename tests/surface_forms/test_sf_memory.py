"""The surface-form build within ``--memory`` (issue 30): with a budget far below the input, rows
are spilled in many chunks and partitions, and the store holds exactly the pairs counted
independently from the same files; a budget below 1 MB is refused in one line."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms.aggregate import SpillWriter
from elquery.indexing.surface_forms.memory import chunk_rows, partition_input_bytes
from elquery.kb.normalize import normalize
from elquery.kb.surface_forms.store import SurfaceFormStore

WORDS = ["new", "york", "Paris", "o'brien", "café", "Zürich", "city", "river", "saint-louis", "ÉCOLE"]
VARIANTS = (str, str.lower, str.upper, str.title, lambda text: text.replace(" ", "-") + ".")


def _facc(tmp_path: Path, rows: int, entities: int) -> tuple[list[Path], Path]:
    """Count files of ``rows`` rows over three files (case and punctuation variants of two-word
    forms, ids in the three spellings FACC files use) and a dump mapping every entity."""
    rng = random.Random(7)
    files = []
    for number in range(3):
        path = tmp_path / f"facc-{number}.tsv"
        lines = []
        for _ in range(rows // 3):
            form = rng.choice(VARIANTS)(f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randrange(300)}")
            entity = rng.randrange(entities)
            mid = ("/m/0", "m.0", "http://rdf.freebase.com/ns/m.0")[number] + format(entity, "x")
            lines.append(f"{form}\t{mid}\t{rng.choice((1, 1, 1, 2, 5, 40))}\n")
        path.write_text("".join(lines), encoding="utf-8")
        files.append(path)
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "freebase_links_en.ttl").write_text("".join(
        f"<http://dbpedia.org/resource/E{e}> <http://www.w3.org/2002/07/owl#sameAs> "
        f"<http://rdf.freebase.com/ns/m.0{e:x}> .\n" for e in range(entities)), encoding="utf-8")
    return files, dumps


def _independent_counts(files: list[Path]) -> Counter[tuple[str, str]]:
    """(normalized form, entity id) -> summed count, read line by line with the store's normalization."""
    counts: Counter[tuple[str, str]] = Counter()
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            form, mid, count = line.split("\t")
            counts[normalize(form), f"<dbpedia:E{int(mid.rsplit('.0', 1)[-1].rsplit('/0', 1)[-1], 16)}>"] += int(count)
    return counts


def _stored(db: Path) -> Counter[tuple[str, str]]:
    with SurfaceFormStore(db) as store:
        return Counter({(p.form, p.entity): p.facc for p in store.pairs()})


def test_a_tiny_memory_spills_and_the_store_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, dumps = _facc(tmp_path, 30_000, 900)
    pieces: list[tuple[str, int]] = []
    write = SpillWriter.write

    def spy(self: SpillWriter, partition: int, piece: tuple) -> None:
        pieces.append((self.tag, partition))
        write(self, partition, piece)

    monkeypatch.setattr(SpillWriter, "write", spy)
    options = {"dumps": (dumps,), "facc": tuple(files), "kb_aliases": False, "workers": 1, "progress": False}
    report = build_store(tmp_path / "tiny.db", BuildOptions(memory_mb=1, **options))
    # three files of 10,000 rows against chunks of 4,096 rows and partitions of ~87 kB of input:
    # each file's rows are spilled (a chunk is full after a file's batch) into every one of many partitions
    assert chunk_rows(1) < 10_000 and sum(p.stat().st_size for p in files) > 5 * partition_input_bytes(1)
    facc_pieces = [piece for piece in pieces if piece[0].startswith("facc")]
    partitions = {partition for _, partition in facc_pieces}
    assert len(partitions) > 5 and len(facc_pieces) >= 3 * len(partitions)

    expected = _independent_counts(files)
    assert _stored(tmp_path / "tiny.db") == expected
    assert report.pairs == len(expected) and report.forms == len({form for form, _ in expected})
    pieces.clear()
    build_store(tmp_path / "roomy.db", BuildOptions(**options))
    assert len({partition for _, partition in pieces}) == 1  # the default budget: one partition, one chunk per file
    assert _stored(tmp_path / "roomy.db") == expected
    form, entity = max(expected, key=expected.__getitem__)
    total = sum(count for (other, _), count in expected.items() if other == form)
    with SurfaceFormStore(tmp_path / "tiny.db") as store:
        candidates = {c.entity: c for c in store.lookup(form)}
        assert candidates[entity].count == expected[form, entity]
        assert candidates[entity].commonness == expected[form, entity] / total


def test_memory_below_one_mb_is_refused(tmp_path: Path) -> None:
    files, dumps = _facc(tmp_path, 30, 5)
    with pytest.raises(ElqueryError, match=r"^--memory must be at least 1 \(MB\), not 0$"):
        build_store(tmp_path / "sf.db", BuildOptions(dumps=(dumps,), facc=tuple(files), memory_mb=0))
    assert not (tmp_path / "sf.db").exists()


@pytest.mark.parametrize("command", [["index", "surface-forms", "--dumps", "{dir}", "--out", "{dir}/sf.db"],
                                     ["index", "facc-counts", "{dir}", "--out", "{dir}/counts.tsv"],
                                     ["build", "--data", "{dir}", "--out", "{dir}/artefacts"]])
@pytest.mark.parametrize("memory", ["0", "-5", "1.5"])
def test_memory_option_is_refused_in_one_line_by_every_command(command: list[str], memory: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.cli import main as elquery

    with pytest.raises(SystemExit) as exit_info:
        elquery([*(part.format(dir=tmp_path) for part in command), "--memory", memory])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "argument --memory:" in err
    assert not any(tmp_path.iterdir())
