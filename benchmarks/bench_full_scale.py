"""Full-scale budget (not in CI): generated data of the size and shape of DBpedia 2015-10 English
plus FACC counts and anchors, built with `elquery build`, then linked. JSON lines.

Data (seeded, cached in ``--work``): ``benchmarks/synthetic_dbpedia.py`` dumps with their extras
(page links, anchor texts, Freebase links) for ``--entities`` article entities (default 4.6M, the
indexed entities of DBpedia 2015-10 English), and ``--facc-pairs`` FACC count rows
``form<TAB>mid<TAB>count`` (default 30M) over the generated entities' Freebase ids: the label in
three case variants, a title word, and noise forms shared by many entities, with Zipfian counts.

Reported per stage of `elquery build` (index, surface-forms, tagme): wall time, CPU seconds (all
processes), peak RSS (the sum over the build's process tree, sampled every 0.5 s) and peak disk
used under the artefacts folder (the finished artefacts and the builders' work folders). Then a
linking process over the artefacts (its own process): load time, RSS, and GIF-MLMcg p50 / p99
latency, warm, over queries made of KB titles (``bench_linking.kb_queries``). Targets of the
full-scale issue, printed beside the figures: whole build <= 2 h, peak RSS <= 12 GB, linker
<= 2 GB RSS, load <= 5 s, p50 <= 0.5 ms, p99 <= 5 ms.

Usage: ``python benchmarks/bench_full_scale.py [--entities 4600000] [--facc-pairs 30000000]
[--work /tmp/elquery-full-scale] [--workers 2] [--memory 512]``; FACC1 at real size (hundreds of
millions of pairs) is ``benchmarks/bench_facc_scale.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from harness import TreeSampler, emit  # noqa: E402

STAGE_START = re.compile(r"^([\w-]+): building")
STAGE_END = re.compile(r"^([\w-]+): (built in|up to date)")
TARGETS = {"build_wall_s": 7200, "build_peak_rss_mb": 12 * 1024, "linker_rss_mb": 2048, "linker_load_s": 5.0,
           "p50_ms": 0.5, "p99_ms": 5.0}


def facc_counts(dumps: object, path: Path, pairs: int, seed: int = 0) -> Path:
    """``pairs`` FACC count rows over the Freebase ids of the generated entities (reused)."""
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    entities = dumps.entities  # type: ignore[attr-defined]
    temporary = path.with_suffix(".partial")
    with open(temporary, "w", encoding="utf-8") as out:
        written = 0
        while written < pairs:
            size = min(1_000_000, pairs - written)
            chosen = rng.integers(0, entities, size)
            kinds = rng.choice(4, size, p=[0.55, 0.2, 0.15, 0.1])
            counts = np.minimum(1 + rng.zipf(2.0, size), 100_000)
            rows = []
            for i, kind, count in zip(chosen.tolist(), kinds.tolist(), counts.tolist()):
                if i % 20 == 19:  # no Freebase link (as in the generated freebase_links)
                    continue
                label = dumps.label(i)  # type: ignore[attr-defined]
                form = (label.lower(), label, label.split()[0], f"{label.split()[0]} {i % 97}")[kind]
                rows.append(f"{form}\t/m/0{i:x}\t{count}\n")
            out.writelines(rows)
            written += size
    temporary.replace(path)
    return path


def long_abstracts(data: Path) -> None:
    """``long_abstracts_en`` (TAGME's document frequencies) from the generated short abstracts:
    each abstract three times over as ``dbo:abstract`` (real long abstracts are several times
    longer than the short ones). Reused when present."""
    import bz2

    target = data / "long_abstracts_en.ttl.bz2"
    if target.exists():
        return
    comment = "<http://www.w3.org/2000/01/rdf-schema#comment>"
    temporary = data / ".long_abstracts_en.partial"
    with bz2.open(data / "short_abstracts_en.ttl.bz2", "rt", encoding="utf-8") as short, \
            bz2.open(temporary, "wt", encoding="utf-8", compresslevel=1) as out:
        for line in short:
            subject, predicate, rest = line.split(" ", 2)
            if predicate != comment:
                continue
            text, _, tail = rest.rpartition('"')
            out.write(f'{subject} <http://dbpedia.org/ontology/abstract> "{text[1:]} {text[1:]} {text[1:]}"{tail}')
    temporary.replace(target)


def build(data: Path, facc: Path, out: Path, workers: int, memory: int) -> None:
    command = [sys.executable, "-m", "elquery", "build", "--data", str(data), "--facc", str(facc),
               "--out", str(out), "--workers", str(workers), "--memory", str(memory)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(process.pid, 0.5, out).start()
    began, stages, started, lines = time.monotonic(), {}, {}, []
    assert process.stderr is not None
    for line in process.stderr:
        now = time.monotonic()
        lines = [*lines[-19:], line]
        if match := STAGE_START.match(line):
            started[match.group(1)] = now
        elif match := STAGE_END.match(line):
            stages[match.group(1)] = (started.get(match.group(1), now), now)
    process.wait()
    sampler.stop()
    if process.returncode:
        raise SystemExit(f"elquery build failed (exit {process.returncode}):\n{''.join(lines)}")
    for name, (start, end) in stages.items():
        emit({"bench": "full_scale_stage", "stage": name, **sampler.window(start, end)})
    whole = sampler.window(began, time.monotonic())
    emit({"bench": "full_scale_build", **whole,
          "targets": {"wall_s": TARGETS["build_wall_s"], "peak_rss_mb": TARGETS["build_peak_rss_mb"]},
          "met": whole["wall_s"] <= TARGETS["build_wall_s"] and whole["peak_rss_mb"] <= TARGETS["build_peak_rss_mb"]})


LINKER = """
import resource, sys, time
sys.path.insert(0, sys.argv[3])
from bench_linking import kb_queries, latencies, summary
from harness import emit
from pathlib import Path
from elquery.linking.linker import Linker
started = time.perf_counter()
linker = Linker(sys.argv[1], sys.argv[2])
linker.result("warm up")
load = time.perf_counter() - started
queries = kb_queries(Path(sys.argv[1]), 5000, seed=0)
times = summary(latencies(linker.result, queries))
rss = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
emit({"load_s": round(load, 2), "rss_mb": round(rss, 1), **times})
"""


def link(out: Path) -> None:
    done = subprocess.run([sys.executable, "-c", LINKER, str(out / "index"), str(out / "surface-forms.db"),
                           str(REPO / "benchmarks")], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    emit({"bench": "full_scale_linker", **figures,
          "targets": {k: TARGETS[k] for k in ("linker_rss_mb", "linker_load_s", "p50_ms", "p99_ms")}})


def main() -> int:
    import synthetic_dbpedia

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=4_600_000)
    parser.add_argument("--facc-pairs", type=int, default=30_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-full-scale"))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--memory", type=int, default=512, help="the build's --memory (MB per process)")
    args = parser.parse_args()
    started = time.monotonic()
    dumps = synthetic_dbpedia.generate(args.work / f"dumps-{args.entities}", args.entities, extras=True, reuse=True)
    facc = facc_counts(dumps, args.work / f"facc-{args.entities}-{args.facc_pairs}.tsv", args.facc_pairs)
    data = args.work / f"dumps-{args.entities}"
    long_abstracts(data)
    emit({"bench": "full_scale_data", "entities": args.entities, "facc_rows": args.facc_pairs,
          "dumps_gb": round(sum(p.stat().st_size for p in data.iterdir()) / 2**30, 2),
          "facc_gb": round(facc.stat().st_size / 2**30, 2), "triples": dumps.triples,
          "seconds": round(time.monotonic() - started, 1)})
    out = args.work / f"artefacts-{args.entities}"
    build(data, facc, out, args.workers, args.memory)
    link(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
