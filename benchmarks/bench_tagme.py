"""TAGME benchmark (TAGME issue): per-query latency over the Y-ERD queries (methods.md §6).

Builds, in one run, a synthetic TAGME artefact in the project's format and links every Y-ERD
query (``ELQUERY_DATA``/elq/y-erd/queries.json) with :class:`elquery.linking.tagme.TagmeLinker`:

* in-link graph: ``--entities`` nodes (default 1,000,000) and ``--links`` links drawn
  (default 50,000,000; duplicates and self-links removed, so slightly fewer remain); targets follow
  a Zipf-like popularity p(r) ∝ 1 / (r + 100) over a seeded permutation of the nodes (the most
  linked entity gets about 0.1% of the links, like the largest hubs of Wikipedia), sources are
  uniform;
* dictionary: every token n-gram (up to 6 tokens) of the normalized queries is a form with a
  probability falling with its length (1: 0.9, 2: 0.5, 3: 0.25, longer: 0.1); a form has
  1 + Zipf(1.6) senses (at most 500) if it is one token, 1 + Zipf(2.0) (at most 50) otherwise,
  entities drawn by the same popularity, link counts Zipf(2.0); lp(m) is log-uniform in
  [10^-3.5, 1] for one token and [10^-2, 1] for longer forms (df = link / lp); plus
  ``--filler-forms`` two-token forms (default 2,000,000) with one sense each, so that SQLite
  look-ups run against a dictionary of realistic size.

Prints JSON lines: a header describing the artefact, then per measurement ``queries``,
``mean_ms``, ``p50_ms``, ``p90_ms``, ``p99_ms``, ``max_ms``: the full pipeline (``link_result``,
:meth:`TagmeLinker.result`) on a first and a second pass over the queries, parsing alone
(``spots``), and the relatedness block of each query (rows: senses with commonness >= tau,
columns: all senses) computed as one sparse product against the per-pair ``np.intersect1d``
baseline on the first ``--baseline-queries`` queries (the two must agree).

With ``--dump-links N[,N...]`` it measures the build itself instead (``elquery index tagme`` in a
subprocess, on synthetic N-Triples dumps of ``--dump-pages`` pages, default 200,000): N page_links
lines, N / 2 anchor_text lines (two-word anchors, Zipf over 20,000 forms), a label per page, a
redirect per 5 pages and an abstract of 60 words per 10 pages; it reports the wall time and the
peak resident memory, which with the pages fixed should not grow with the links.

Usage:
    python benchmarks/bench_tagme.py [--entities N] [--links N] [--filler-forms N]
        [--baseline-queries N] [--seed N] [--keep DIR | --artefact DIR]
    python benchmarks/bench_tagme.py --dump-links N,N [--dump-pages N] [--seed N]

``--keep DIR`` keeps the synthetic artefact; ``--artefact DIR`` times an existing one instead of
building (e.g. one kept before, or a real one from ``elquery index tagme``).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from harness import emit, percentiles, yerd_queries, yerd_queries_file  # noqa: E402
from elquery.indexing.tagme.dictionary import FormEntry  # noqa: E402
from elquery.indexing.tagme.dictionary_writer import DictionaryWriter  # noqa: E402
from elquery.kb.normalize import normalize  # noqa: E402
from elquery.kb.tagme.layout import DICTIONARY_FILE, INDICES_FILE, INDPTR_FILE, read_meta, write_meta  # noqa: E402
from elquery.linking.tagme import TagmeLinker  # noqa: E402
from elquery.linking.tagme.relatedness import milne_witten  # noqa: E402

FORM_PROBABILITY = {1: 0.9, 2: 0.5, 3: 0.25}
LONG_FORM_PROBABILITY = 0.1
_CHUNK = 5_000_000


def popularity(entities: int, rng: np.random.Generator) -> Callable[[int], np.ndarray]:
    """A sampler of entity nodes: p(rank r) ∝ 1 / (r + 100), ranks on a seeded permutation."""
    cdf = np.cumsum(1.0 / (np.arange(entities) + 100.0))
    cdf /= cdf[-1]
    permutation = rng.permutation(entities).astype(np.int32)
    return lambda size: permutation[np.minimum(np.searchsorted(cdf, rng.random(size)), entities - 1)]


def write_graph(out: Path, entities: int, links: int, draw: Callable[[int], np.ndarray],
                rng: np.random.Generator) -> int:
    """CSR in-link arrays of a synthetic graph; returns the number of distinct links."""
    keys = []
    for start in range(0, links, _CHUNK):
        size = min(_CHUNK, links - start)
        targets = draw(size).astype(np.int64)
        sources = rng.integers(0, entities, size, dtype=np.int64)
        keep = targets != sources
        keys.append((targets[keep] << 32) | sources[keep])
    key = np.unique(np.concatenate(keys))
    del keys
    indptr = np.zeros(entities + 1, dtype=np.int64)
    np.cumsum(np.bincount(key >> 32, minlength=entities), out=indptr[1:])
    np.save(out / INDPTR_FILE, indptr)
    np.save(out / INDICES_FILE, (key & 0xFFFFFFFF).astype(np.int32))
    return len(key)


def ngrams(tokens: list[str]) -> Iterator[str]:
    for start in range(len(tokens)):
        for end in range(start + 1, min(start + 6, len(tokens)) + 1):
            yield " ".join(tokens[start:end])


def dictionary_entries(queries: dict[str, str], filler: int, draw: Callable[[int], np.ndarray],
                       rng: np.random.Generator) -> tuple[list[FormEntry], dict[str, int]]:
    forms = sorted({g for q in queries.values() for g in ngrams(normalize(q).split())})
    entries, df = [], {}
    for form in forms:
        length = form.count(" ") + 1
        if rng.random() >= FORM_PROBABILITY.get(length, LONG_FORM_PROBABILITY):
            continue
        senses = min(1 + int(rng.zipf(1.6 if length == 1 else 2.0)), 500 if length == 1 else 50)
        nodes = np.unique(draw(senses))
        counts = np.minimum(rng.zipf(2.0, len(nodes)), 100_000)
        link = int(counts.sum())
        lp = 10 ** rng.uniform(-3.5 if length == 1 else -2.0, 0.0)
        entries.append(FormEntry(form, link, tuple(zip(nodes.tolist(), counts.tolist()))))
        df[form] = math.ceil(link / lp)
    for number in range(filler):
        entries.append(FormEntry(f"filler {number}", 2, ((int(draw(1)[0]), 2),)))
    entries.sort(key=lambda e: e.form)
    return entries, df


def build(out: Path, queries: dict[str, str], args: argparse.Namespace) -> dict[str, object]:
    rng = np.random.default_rng(args.seed)
    draw = popularity(args.entities, rng)
    started = time.monotonic()
    edges = write_graph(out, args.entities, args.links, draw, rng)
    entries, df = dictionary_entries(queries, args.filler_forms, draw, rng)
    writer = DictionaryWriter(out / DICTIONARY_FILE)
    writer.add_forms(entries)
    writer.set_document_frequencies(df)
    writer.add_entities((node, f"<dbpedia:Entity_{node}>") for node in range(args.entities))
    writer.close()
    meta = {"min_link": 2, "max_tokens": 6, "forms": writer.forms, "pairs": writer.pairs,
            "entities": args.entities, "nodes": args.entities, "edges": edges, "abstracts": 0, "synthetic": True}
    write_meta(out, meta)
    return {**meta, "build_s": round(time.monotonic() - started, 1)}


def summary(measure: str, times: list[float], **extra: object) -> dict[str, object]:
    return {"measure": measure, "queries": len(times),
            **percentiles(times, ("mean", "p50", "p90", "p99", "max")), **extra}


def per_pair_baseline(linker: TagmeLinker, rows: list[int], columns: list[int]) -> np.ndarray:
    graph = linker.artefact.graph
    inlinks = {n: graph.inlinks(n) for n in set(rows) | set(columns)}
    rel = np.zeros((len(rows), len(columns)))
    for i, a in enumerate(rows):
        for j, b in enumerate(columns):
            common = len(np.intersect1d(inlinks[a], inlinks[b], assume_unique=True))
            rel[i, j] = 1.0 if a == b else milne_witten(len(inlinks[a]), len(inlinks[b]), common, graph.entities)
    return rel


def run(artefact: Path, queries: dict[str, str], baseline_queries: int) -> Iterator[dict[str, object]]:
    started = time.monotonic()
    linker = TagmeLinker(artefact)
    yield {"measure": "open", "ms": round((time.monotonic() - started) * 1000, 3)}
    items = sorted(queries.items())
    for label in ("first", "second"):
        times, linked = [], 0
        for qid, query in items:
            started = time.perf_counter()
            result = linker.result(query, qid)
            times.append(time.perf_counter() - started)
            linked += bool(result.interpretations)
        yield summary("link_result", times, passes=label, queries_linked=linked)
    times, spot_counts = [], []
    for _, query in items:
        started = time.perf_counter()
        spots = linker.spots(normalize(query).split())
        times.append(time.perf_counter() - started)
        spot_counts.append(len(spots))
    yield summary("spots", times, spots_mean=round(float(np.mean(spot_counts)), 2))
    block, pairwise, pairs = [], [], []
    for _, query in items[:baseline_queries]:
        spots = linker.spots(normalize(query).split())
        rows = sorted({s.node for spot in spots for s in spot.senses if s.commonness >= linker.params.tau})
        columns = sorted({s.node for spot in spots for s in spot.senses})
        started = time.perf_counter()
        fast = linker.relatedness.matrix(rows, columns)
        block.append(time.perf_counter() - started)
        started = time.perf_counter()
        slow = per_pair_baseline(linker, rows, columns)
        pairwise.append(time.perf_counter() - started)
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)
        pairs.append(len(rows) * len(columns))
    pair_stats = {"pairs_mean": round(float(np.mean(pairs)), 1), "pairs_max": int(np.max(pairs))}
    yield summary("relatedness_block", block, **pair_stats)
    yield summary("relatedness_per_pair_baseline", pairwise, **pair_stats)


def write_dumps(out: Path, pages: int, links: int, seed: int) -> None:
    """Synthetic DBpedia-shaped dumps (see the module docstring)."""
    rng = np.random.default_rng(seed)
    draw = popularity(pages, rng)
    out.mkdir(parents=True)
    resource_iri = "<http://dbpedia.org/resource/Entity_{}>".format
    ontology = "http://dbpedia.org/ontology/"
    words = [f"w{n}" for n in range(2000)]
    with open(out / "page_links_en.ttl", "w", encoding="utf-8") as handle:
        for start in range(0, links, _CHUNK):
            size = min(_CHUNK, links - start)
            for s, t in zip(rng.integers(0, pages, size).tolist(), draw(size).tolist()):
                handle.write(f"{resource_iri(s)} <{ontology}wikiPageWikiLink> {resource_iri(t)} .\n")
    forms = rng.integers(0, len(words), (20_000, 2))
    with open(out / "anchor_text_en.ttl", "w", encoding="utf-8") as handle:
        size = links // 2
        ranks = np.minimum(rng.zipf(1.3, size), 20_000) - 1
        for rank, target in zip(ranks.tolist(), draw(size).tolist()):
            a, b = forms[rank]
            handle.write(f'{resource_iri(target)} <{ontology}wikiPageWikiLinkText> "{words[a]} {words[b]}"@en .\n')
    with open(out / "labels_en.ttl", "w", encoding="utf-8") as handle:
        handle.writelines(f'{resource_iri(p)} <http://www.w3.org/2000/01/rdf-schema#label> "Entity {p}"@en .\n'
                          for p in range(pages))
    with open(out / "transitive_redirects_en.ttl", "w", encoding="utf-8") as handle:
        redirect = "<http://dbpedia.org/resource/Redirect_{}>".format
        handle.writelines(f"{redirect(p)} <{ontology}wikiPageRedirects> {resource_iri(p)} .\n"
                          for p in range(0, pages, 5))
    with open(out / "long_abstracts_en.ttl", "w", encoding="utf-8") as handle:
        for p in range(0, pages, 10):
            text = " ".join(words[w] for w in rng.integers(0, len(words), 60).tolist())
            handle.write(f'{resource_iri(p)} <{ontology}abstract> "{text}"@en .\n')


# Runs `elquery index tagme` and then prints the process's peak resident memory (VmHWM, kB): the
# peak of this process image only (ru_maxrss would include the benchmark's memory at fork time).
_BUILD_AND_REPORT_PEAK = """
import sys
from elquery.indexing.cli import main
code = main(sys.argv[1:])
print(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1], file=sys.stderr)
sys.exit(code)
"""


def measure_build(pages: int, links: int, seed: int) -> dict[str, object]:
    directory = Path(tempfile.mkdtemp(prefix="bench-tagme-build-"))
    try:
        write_dumps(directory / "dumps", pages, links, seed)
        started = time.monotonic()
        completed = subprocess.run([sys.executable, "-c", _BUILD_AND_REPORT_PEAK, "tagme", "--dumps",
                                    str(directory / "dumps"), "--out", str(directory / "artefact")],
                                   cwd=REPO, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if completed.returncode != 0:
            sys.exit(f"bench_tagme: build failed: {completed.stderr[-2000:]}")
        built = json.loads(completed.stdout)
        peak_kb = int(completed.stderr.strip().splitlines()[-1])
        return {"measure": "build_from_dumps", "pages": pages, "page_links_lines": links,
                "anchor_lines": links // 2, "seconds": round(seconds, 1),
                "page_links_lines_per_s": round(links / seconds), "peak_rss_mb": round(peak_kb / 1024),
                "forms": built["forms"], "edges": built["edges"], "entities": built["entities"]}
    finally:
        shutil.rmtree(directory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--links", type=int, default=50_000_000)
    parser.add_argument("--filler-forms", type=int, default=2_000_000)
    parser.add_argument("--baseline-queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=42)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--keep", type=Path, help="build the artefact here and keep it")
    source.add_argument("--artefact", type=Path, help="time this existing artefact (no build)")
    parser.add_argument("--dump-links", default="", metavar="N,N", help="measure builds from dumps instead")
    parser.add_argument("--dump-pages", type=int, default=200_000)
    args = parser.parse_args(argv)
    if args.dump_links:
        for links in [int(n) for n in args.dump_links.split(",")]:
            emit(measure_build(args.dump_pages, links, args.seed))
        return 0
    queries = yerd_queries()
    if not queries:
        sys.exit(f"bench_tagme: Y-ERD queries not found at {yerd_queries_file()} (set ELQUERY_DATA)")
    temporary = args.artefact is None and args.keep is None
    directory = args.artefact or args.keep or Path(tempfile.mkdtemp(prefix="bench-tagme-"))
    try:
        if args.artefact is None:
            directory.mkdir(parents=True, exist_ok=True)
            header = build(directory, queries, args)
        else:
            header = read_meta(directory)
        emit({"bench": "tagme", **header})
        for record in run(directory, queries, args.baseline_queries):
            emit(record)
    finally:
        if temporary:
            shutil.rmtree(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
