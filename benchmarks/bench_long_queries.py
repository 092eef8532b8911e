"""Work per query grows linearly with its length: time and peak RSS of linking one query of 10,
100, 1,000 and 10,000 tokens (GIF over CMNS and MLMcg on the demo knowledge base), each size in a
fresh child process so that its peak RSS is its own. JSON lines; each record carries the ratios to
the 10-token query of the same run (time per token and RSS).

Usage: ``python benchmarks/bench_long_queries.py [--sizes 10 100 1000 10000] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time

from harness import emit, max_rss_mb


def _child(tokens: int, method: str, repeats: int) -> dict[str, float]:
    from elquery.indexing.demo import demo_artefacts
    from elquery.linking.linker import Linker

    index, surface_forms = demo_artefacts()
    words = "new york pizza manhattan the music man barack obama mother jacksonville fl city of".split()
    query = " ".join(random.Random(tokens).choice(words) for _ in range(tokens))
    with Linker(index, surface_forms, method, demo_defaults=True,
                max_query_tokens=max(tokens, 1)) as linker:
        linker.link("warm up")
        rss_before = max_rss_mb()
        started = time.perf_counter()
        for _ in range(repeats):
            linker.result(query)
        seconds = (time.perf_counter() - started) / repeats
    peak = max_rss_mb()
    return {"seconds": seconds, "peak_rss_mb": peak, "rss_growth_mb": peak - rss_before}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--methods", nargs="+", default=["cmns", "mlmcg"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        emit(_child(int(args.child[0]), args.child[1], args.repeats))
        return
    for method in args.methods:
        baseline: dict[str, float] | None = None
        for size in sorted(args.sizes):
            out = subprocess.run([sys.executable, __file__, "--child", str(size), method, "--repeats", str(args.repeats)],
                                 check=True, capture_output=True, text=True).stdout
            figures = json.loads(out.strip().splitlines()[-1])
            baseline = baseline or {"size": size, **figures}
            emit({
                "benchmark": "long_queries", "method": method, "tokens": size, **figures,
                "ms_per_token": 1000 * figures["seconds"] / size,
                "time_per_token_vs_smallest": (figures["seconds"] / size) / (baseline["seconds"] / baseline["size"]),
                "rss_growth_vs_smallest_mb": figures["rss_growth_mb"] - baseline["rss_growth_mb"],
            })


if __name__ == "__main__":
    main()
