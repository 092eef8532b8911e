"""Seeded synthetic FACC1-format count files and a Freebase mapping, for the surface-form benchmark.

Shape (methods.md §3 inputs, at benchmark scale):

- ``rows`` lines ``surface form<TAB>Freebase id<TAB>count`` spread over ``files`` count files
  (one per "ClueWeb directory"); the Freebase id is written ``/m/0abc`` (FACC1 native),
  ``m.0abc`` or ``http://rdf.freebase.com/ns/m.0abc`` depending on the file.
- Forms: Zipf (s = 1.0) over ``forms`` distinct two-word forms; each row writes the form in one
  of three case variants (lower 60%, Title 30%, UPPER 10%), which normalization folds together.
- Entities: a form's entity is ``1.5 * form + k`` with a small Zipf rank k (s = 2, k <= 16), so
  every form has a dominant entity and a tail, and entity frequency is Zipf-like over
  ``entities`` entities.
- Counts: 1 + Zipf(s = 2.5), capped at 10,000.
- A DBpedia dump directory with ``freebase_links_en.ttl`` (owl:sameAs) mapping 95% of the
  entities (every 20th entity stays unmapped).

Raw annotations (:func:`generate_annotations`, for ``bench_facc_counts``): the same forms,
variants and entities, one FACC1 line per annotation (document id, encoding, mention, byte
offsets, posterior uniform in [0, 1), context probability, ``/m/`` mid) in gzip files; one line in
``MALFORMED_EVERY`` has three columns only.

Usage: ``python benchmarks/synthetic_facc.py OUT_DIR [--rows N] [--forms N] [--entities N]
[--files N] [--seed N]``; prints one JSON line describing what it wrote.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

FREEBASE_NS = "http://rdf.freebase.com/ns/"
_MID_ALPHABET = "0123456789bcdfghjklmnpqrstvwxyz_"
_LETTERS = "abcdefghijklmnopqrstuvwxyzéüø"
_VOCABULARY = 1500
MALFORMED_EVERY = 1000
_CHUNK = 1_000_000


@dataclass(frozen=True)
class SyntheticSpec:
    rows: int = 20_000_000
    forms: int = 2_000_000
    entities: int = 3_000_000
    files: int = 20
    seed: int = 42


@dataclass(frozen=True)
class SyntheticData:
    spec: SyntheticSpec
    facc_files: tuple[Path, ...]
    dumps_dir: Path
    mapped_entities: int


def mid(index: int) -> str:
    """Synthetic Freebase mid ``m.0...`` of entity ``index``."""
    digits = []
    while True:
        index, rest = divmod(index, 32)
        digits.append(_MID_ALPHABET[rest])
        if index == 0:
            break
    return "m.0" + "".join(reversed(digits))


def entity_title(index: int) -> str:
    return f"Entity_{index}"


def _vocabulary(rng: np.random.Generator) -> list[str]:
    words: set[str] = set()
    while len(words) < _VOCABULARY:
        length = int(rng.integers(3, 10))
        word = "".join(_LETTERS[i] for i in rng.integers(0, len(_LETTERS), length))
        if int(rng.integers(0, 20)) == 0:
            word = word[:2] + "'" + word[2:]
        words.add(word)
    return sorted(words)


def _zipf_ranks(rng: np.random.Generator, size: int, support: int, exponent: float) -> np.ndarray:
    weights = np.cumsum(1.0 / np.arange(1, support + 1, dtype=np.float64) ** exponent)
    return np.searchsorted(weights, rng.random(size) * weights[-1], side="right")


def _form_variants(spec: SyntheticSpec, rng: np.random.Generator) -> list[tuple[str, str, str]]:
    words = _vocabulary(rng)
    order = rng.permutation(_VOCABULARY * _VOCABULARY)[: spec.forms]
    variants = []
    for code in order.tolist():
        form = f"{words[code // _VOCABULARY]} {words[code % _VOCABULARY]}"
        variants.append((form, form.title(), form.upper()))
    return variants


def _check(spec: SyntheticSpec) -> None:
    if spec.forms > _VOCABULARY * _VOCABULARY:
        raise ValueError(f"at most {_VOCABULARY * _VOCABULARY} forms")


def _form_entity_case(rng: np.random.Generator, spec: SyntheticSpec, size: int) -> tuple[list[int], list[int], list[int]]:
    """``size`` draws of (form, entity, case variant): Zipf forms, each with a dominant entity and a tail."""
    forms = _zipf_ranks(rng, size, spec.forms, 1.0)
    entities = (forms * 3 // 2 + _zipf_ranks(rng, size, 16, 2.0)) % spec.entities
    cases = np.searchsorted([0.6, 0.9], rng.random(size), side="right")
    return forms.tolist(), entities.tolist(), cases.tolist()


def generate_annotations(out_dir: Path, spec: SyntheticSpec) -> list[Path]:
    """Write ``spec.rows`` raw FACC1 annotation lines over ``spec.files`` gzip files in ``out_dir``."""
    _check(spec)
    rng = np.random.default_rng(spec.seed)
    variants = _form_variants(spec, rng)
    out_dir.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, spec.rows, spec.files + 1).astype(np.int64)
    files = []
    for number in range(spec.files):
        path = out_dir / f"{number:03d}.anns.tsv.gz"
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
            for start in range(int(bounds[number]), int(bounds[number + 1]), _CHUNK):
                size = min(_CHUNK, int(bounds[number + 1]) - start)
                forms, entities, cases = _form_entity_case(rng, spec, size)
                offsets = rng.integers(0, 100_000, size).tolist()
                posteriors = rng.random(size).tolist()
                out.write("".join(
                    f"clueweb09-en{number:04d}-{line // 10_000 % 100:02d}-{line % 10_000:05d}\tUTF-8\t{variants[f][c]}\t"
                    f"{o}\t{o + len(variants[f][c])}\t{p:.6f}\t0.0001\t/m/{mid(e)[2:]}\n"
                    if line % MALFORMED_EVERY else f"clueweb09-en{number:04d}\tUTF-8\tbroken line\n"
                    for line, f, e, c, o, p in zip(range(start, start + size), forms, entities, cases, offsets, posteriors)))
        files.append(path)
    return files


def generate(out_dir: Path, spec: SyntheticSpec) -> SyntheticData:
    """Write the count files and the mapping dump under ``out_dir`` (deterministic in ``spec``)."""
    _check(spec)
    rng = np.random.default_rng(spec.seed)
    variants = _form_variants(spec, rng)
    mids = [mid(i) for i in range(spec.entities)]
    facc_dir = out_dir / "facc"
    dumps_dir = out_dir / "dumps"
    facc_dir.mkdir(parents=True, exist_ok=True)
    dumps_dir.mkdir(parents=True, exist_ok=True)
    prefixes = ("/m/", "/m/", "m.", FREEBASE_NS + "m.")
    files = []
    bounds = np.linspace(0, spec.rows, spec.files + 1).astype(np.int64)
    for number in range(spec.files):
        size = int(bounds[number + 1] - bounds[number])
        forms, entities, cases = _form_entity_case(rng, spec, size)
        counts = np.minimum(rng.zipf(2.5, size), 10_000)
        prefix = prefixes[number % len(prefixes)]
        path = facc_dir / f"facc-{number:04d}.tsv"
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(
                f"{variants[f][c]}\t{prefix}{mids[e][2:]}\t{n}\n"
                for f, c, e, n in zip(forms, cases, entities, counts.tolist())
            )
        files.append(path)
    mapped = 0
    with open(dumps_dir / "freebase_links_en.ttl", "w", encoding="utf-8") as handle:
        for index in range(spec.entities):
            if index % 20:
                handle.write(
                    f"<http://dbpedia.org/resource/{entity_title(index)}> "
                    f"<http://www.w3.org/2002/07/owl#sameAs> <{FREEBASE_NS}{mids[index]}> .\n"
                )
                mapped += 1
    return SyntheticData(spec, tuple(files), dumps_dir, mapped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    defaults = SyntheticSpec()
    for name in ("rows", "forms", "entities", "files", "seed"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    args = parser.parse_args(argv)
    spec = SyntheticSpec(args.rows, args.forms, args.entities, args.files, args.seed)
    data = generate(args.out_dir, spec)
    print(json.dumps({"spec": asdict(spec), "facc_files": len(data.facc_files), "mapped_entities": data.mapped_entities}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
