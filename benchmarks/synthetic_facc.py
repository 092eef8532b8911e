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

Real size and shape (:func:`generate_pairs`, for ``bench_facc_scale``): exactly ``pairs``
distinct (normalized form, entity) pairs, the way FACC1's are distributed:

- forms per entity Zipfian (weight rank^-0.8 over ``entities`` entities, at least 1 each, at most
  :data:`MAX_FORMS_PER_ENTITY`): every entity has its label, popular entities hundreds of
  thousands of forms;
- forms shared between entities (ambiguity): an entity's forms after its label are a run of
  consecutive form numbers from a start drawn skewed towards 0, so the low numbers are forms of
  many entities;
- counts: 1 + nothing for the long tail, Zipf(s = 1.8) capped at 10^6 (about half of the pairs are
  linked once);
- each pair written as 1 to 3 rows (70/20/10%), each a variant of its form that normalizes to it:
  lower case, Title Case, UPPER CASE, or with hyphens for spaces and a trailing full stop; about 2%
  of the words hold a letter outside ASCII (é, ü, ø);
- rows in a seeded random order within chunks of entities, over ``files`` files; a Freebase
  mapping (``freebase_links_en.ttl``) maps every entity, so the store has exactly ``pairs`` pairs.

The same pairs as raw FACC1 annotation lines (:func:`generate_raw_annotations`): rows drawn
about as often as their count (capped at :data:`MAX_RAW_REPEAT`), in the published 8-column
layout, gzip files of ``lines`` lines in all.

Usage: ``python benchmarks/synthetic_facc.py OUT_DIR [--rows N] [--forms N] [--entities N]
[--files N] [--seed N]``, or ``--pairs N`` (real shape, with ``--entities``, ``--files``) or
``--raw-lines N`` (raw annotations of the real shape); prints one JSON line describing what it
wrote.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

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


MAX_FORMS_PER_ENTITY = 200_000
MAX_RAW_REPEAT = 1_000
_PAIR_CHUNK = 4_000_000
_WRITE = pa_csv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")


@dataclass(frozen=True)
class PairSpec:
    """Real-shape FACC counts: ``pairs`` distinct (form, entity) pairs over ``entities`` entities."""

    pairs: int = 30_000_000
    entities: int = 4_600_000
    files: int = 32
    seed: int = 42


def forms_per_entity(spec: PairSpec) -> np.ndarray:
    """How many forms each entity has (Zipf weights rank^-0.8 over a seeded order of the
    entities, each at least 1 and at most ``MAX_FORMS_PER_ENTITY``), summing to ``spec.pairs``."""
    if not spec.entities <= spec.pairs <= spec.entities * MAX_FORMS_PER_ENTITY:
        raise ValueError(f"pairs must be between the entities ({spec.entities}) and {MAX_FORMS_PER_ENTITY} times them")
    rng = np.random.default_rng(spec.seed)
    weights = np.arange(1, spec.entities + 1, dtype=np.float64) ** -0.8
    weights = weights[rng.permutation(spec.entities)]
    counts = np.ones(spec.entities, np.int64)
    for _ in range(16):  # give the rest in proportion to the weights of the entities not yet full
        rest = spec.pairs - int(counts.sum())
        room = counts < MAX_FORMS_PER_ENTITY
        if rest == 0:
            break
        share = np.floor(rest * np.where(room, weights, 0) / weights[room].sum()).astype(np.int64)
        counts = np.minimum(counts + share, MAX_FORMS_PER_ENTITY)
    while rest := spec.pairs - int(counts.sum()):  # the last few, one each to the heaviest with room
        room = np.flatnonzero(counts < MAX_FORMS_PER_ENTITY)
        counts[room[np.argsort(-weights[room], kind="stable")[:rest]]] += 1
    return counts


def _words(count: int, rng: np.random.Generator) -> pa.Array:
    """``count`` distinct lower-case words that normalize to themselves (2% with a letter outside ASCII)."""
    from elquery.kb.normalize import normalize

    ascii_letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < count:
        letters = "".join(ascii_letters[i] for i in rng.integers(0, 26, int(rng.integers(3, 10))))
        if rng.random() < 0.02:
            at = int(rng.integers(0, len(letters)))
            letters = letters[:at] + "éüø"[int(rng.integers(0, 3))] + letters[at + 1:]
        if normalize(letters) == letters:
            words.add(letters)
    return pa.array(sorted(words), pa.string())


def _form_strings(numbers: np.ndarray, words: pa.Array) -> pa.Array:
    """Form number n -> words[n] below len(words), else words[n % V] + " " + words[n // V] (distinct
    for distinct numbers below V^2)."""
    size = len(words)
    first = words.take(pa.array(numbers % size))
    second = words.take(pa.array(np.minimum(numbers // size, size - 1)))
    return pc.if_else(pa.array(numbers < size), first, pc.binary_join_element_wise(first, second, " "))


def _variants(forms: pa.Array, kinds: np.ndarray) -> pa.Array:
    """Each form as variant ``kinds[i]``: 0 as is, 1 Title Case, 2 UPPER CASE, 3 hyphens and a full stop."""
    title, upper = pc.utf8_title(forms), pc.utf8_upper(forms)
    dotted = pc.binary_join_element_wise(pc.replace_substring(forms, " ", "-"), pa.scalar("."), "")
    kinds_array = pa.array(kinds)
    out = pc.if_else(pc.equal(kinds_array, 1), title, forms)
    out = pc.if_else(pc.equal(kinds_array, 2), upper, out)
    return pc.if_else(pc.equal(kinds_array, 3), dotted, out)


def _mids(entities: int) -> pa.Array:
    return pa.array([f"/m/{mid(i)[2:]}" for i in range(entities)], pa.string())


def _pair_rows(spec: PairSpec) -> Iterator[tuple[pa.Array, pa.Array, np.ndarray]]:
    """(raw form, mid, count) rows of ``spec``'s pairs, chunk by chunk of entities, shuffled within a chunk."""
    rng = np.random.default_rng(spec.seed + 1)
    per_entity = forms_per_entity(spec)
    shared = max(1, spec.pairs // 4)  # the form numbers after the labels
    vocabulary = max(12_000, math.isqrt(spec.entities + shared) + 1)
    words = _words(vocabulary, rng)
    mids = _mids(spec.entities)
    starts = np.floor(shared * rng.random(spec.entities) ** 3).astype(np.int64)
    ends = np.cumsum(per_entity)
    first = 0
    while first < spec.entities:
        last = int(np.searchsorted(ends, (ends[first - 1] if first else 0) + _PAIR_CHUNK, side="right"))
        last = max(last, first + 1)
        entity = np.repeat(np.arange(first, last), per_entity[first:last])
        rank = np.arange(len(entity)) - np.repeat(np.cumsum(per_entity[first:last]) - per_entity[first:last],
                                                  per_entity[first:last])
        form = np.where(rank == 0, entity, spec.entities + (starts[entity] + rank - 1) % shared)
        counts = np.minimum(rng.zipf(1.8, len(entity)), 1_000_000)
        copies = np.searchsorted([0.7, 0.9], rng.random(len(entity)), side="right") + 1
        row_pair = np.repeat(np.arange(len(entity)), copies)
        row_counts = np.where(np.r_[True, row_pair[1:] != row_pair[:-1]], counts[row_pair],
                              np.minimum(rng.zipf(2.2, len(row_pair)), 10_000))
        kinds = np.searchsorted([0.55, 0.8, 0.88], rng.random(len(row_pair)), side="right")
        order = rng.permutation(len(row_pair))
        row_pair, row_counts, kinds = row_pair[order], row_counts[order], kinds[order]
        texts = _variants(_form_strings(form[row_pair], words), kinds)
        yield texts, mids.take(pa.array(entity[row_pair])), row_counts
        first = last


def _freebase_links(path: Path, entities: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, entities, _CHUNK):
            handle.write("".join(f"<http://dbpedia.org/resource/{entity_title(i)}> <http://www.w3.org/2002/07/owl#sameAs> "
                                 f"<{FREEBASE_NS}{mid(i)}> .\n" for i in range(start, min(entities, start + _CHUNK))))


def generate_pairs(out_dir: Path, spec: PairSpec) -> dict[str, object]:
    """Write ``spec.files`` count files (``facc/``) of ``spec.pairs`` distinct pairs and the Freebase
    mapping (``dumps/freebase_links_en.ttl``) under ``out_dir``; returns what was written."""
    facc_dir, dumps_dir = out_dir / "facc", out_dir / "dumps"
    facc_dir.mkdir(parents=True, exist_ok=True)
    dumps_dir.mkdir(parents=True, exist_ok=True)
    _freebase_links(dumps_dir / "freebase_links_en.ttl", spec.entities)
    rows = 0
    handles = [pa.OSFile(str(facc_dir / f"facc-{n:04d}.tsv"), "wb") for n in range(spec.files)]
    try:
        for texts, mids, counts in _pair_rows(spec):
            table = pa.table({"form": texts, "mid": mids, "count": pa.array(counts)})
            bounds = np.linspace(0, len(counts), spec.files + 1).astype(np.int64).tolist()
            for handle, start, stop in zip(handles, bounds, bounds[1:]):
                pa_csv.write_csv(table.slice(start, stop - start), handle, _WRITE)
            rows += len(counts)
    finally:
        for handle in handles:
            handle.close()
    return {"spec": asdict(spec), "rows": rows, "bytes": sum(p.stat().st_size for p in facc_dir.iterdir())}


def generate_raw_annotations(out_dir: Path, spec: PairSpec, lines: int) -> dict[str, object]:
    """Write ``lines`` FACC1 annotation lines (8 columns) of ``spec``'s pairs into ``spec.files``
    gzip files in ``out_dir``: lines drawn from a chunk's count rows, each about as often as its
    count (at most ``MAX_RAW_REPEAT``), then from the next chunk's; stops at ``lines``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(spec.seed + 2)
    per_file = math.ceil(lines / spec.files)
    written, number = 0, 0
    handle = gzip.open(out_dir / f"{number:04d}.anns.tsv.gz", "wb", compresslevel=1)
    try:
        for texts, mids, counts in _pair_rows(spec):
            weights = np.cumsum(np.minimum(counts, MAX_RAW_REPEAT))  # a row is drawn about min(count, cap) times
            draws = min(lines - written, int(weights[-1]))
            repeat = np.searchsorted(weights, rng.integers(0, weights[-1], draws), side="right")
            offsets = rng.integers(0, 200_000, len(repeat))
            mention = texts.take(pa.array(repeat))
            document = pc.binary_join_element_wise(
                pa.scalar("clueweb12-"), pc.cast(pa.array(written + np.arange(len(repeat)) // 14), pa.string()), "")
            table = pa.table({
                "document": document, "encoding": pa.array(np.full(len(repeat), "UTF-8")), "mention": mention,
                "begin": pa.array(offsets), "end": pa.array(offsets + pc.utf8_length(mention).to_numpy()),
                "posterior": pc.cast(pa.array(np.round(0.5 + rng.random(len(repeat)) / 2, 6)), pa.string()),
                "context": pa.array(np.full(len(repeat), "0.0001")), "mid": mids.take(pa.array(repeat)),
            })
            for start in range(0, len(repeat), _CHUNK):
                part = table.slice(start, _CHUNK)
                sink = pa.BufferOutputStream()
                pa_csv.write_csv(part, sink, _WRITE)
                handle.write(sink.getvalue().to_pybytes())
                written += part.num_rows
                if written >= (number + 1) * per_file and written < lines:
                    handle.close()
                    number += 1
                    handle = gzip.open(out_dir / f"{number:04d}.anns.tsv.gz", "wb", compresslevel=1)
            if written >= lines:
                break
    finally:
        handle.close()
    return {"spec": asdict(spec), "lines": written, "files": number + 1,
            "bytes": sum(p.stat().st_size for p in out_dir.glob("*.anns.tsv.gz"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    defaults = SyntheticSpec()
    for name in ("rows", "forms", "entities", "files", "seed"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    parser.add_argument("--pairs", type=int, help="real shape: this many distinct pairs (facc/ and dumps/)")
    parser.add_argument("--raw-lines", type=int, help="real shape: raw annotation lines of --pairs pairs")
    args = parser.parse_args(argv)
    if args.pairs:
        pairs = PairSpec(args.pairs, args.entities, args.files, args.seed)
        written = generate_raw_annotations(args.out_dir, pairs, args.raw_lines) if args.raw_lines else \
            generate_pairs(args.out_dir, pairs)
        print(json.dumps(written))
        return 0
    spec = SyntheticSpec(args.rows, args.forms, args.entities, args.files, args.seed)
    data = generate(args.out_dir, spec)
    print(json.dumps({"spec": asdict(spec), "facc_files": len(data.facc_files), "mapped_entities": data.mapped_entities}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
