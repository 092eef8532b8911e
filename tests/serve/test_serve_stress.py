"""A bounded stress test of a real ``elquery serve`` on loopback (issue 31): some thousands of
malformed and valid requests interleaved over four kept-alive connections at once. Every valid
request gets the answer it got alone; every malformed one a 4xx in the error shape; no connection
is closed on the client; the worker's resident memory stays flat from the first thousand requests
to the last; the log holds no traceback."""

from __future__ import annotations

import json
import random
import threading
from urllib.parse import quote

from served_http import Connection, Served, served  # noqa: F401  # served: the fixture (tests/serve is on the path)

VALID = [
    ("GET", "/link?q=new+york+pizza+manhattan", None),
    ("GET", "/rank?q=obama+mother&k=5", None),
    ("POST", "/rank", b'{"queries": {"a": "rome", "b": "music man"}, "model": "bm25", "k": 3}'),
    ("POST", "/link", b'{"queries": ["the music man", "british airways flights"], "method": "cmns"}'),
    ("GET", "/spot?text=new+york+pizza", None),
    ("GET", "/entity/Manhattan", None),
]
BIG = b'{"q": "' + b"pizza " * 80_000 + b'"}'  # 480 kB: over the query length limit


def same(body: bytes) -> object:
    """An answer without what differs from one time to the next (TAGME's ``time`` and ``timestamp``)."""
    answer = json.loads(body)
    return {k: v for k, v in answer.items() if k not in ("time", "timestamp")} if isinstance(answer, dict) else answer


def malformed(chance: random.Random) -> tuple[str, str, bytes | None, bool]:
    """A malformed request: one of the kinds that crashed the worker or a path no door serves
    (each different), refused; or a random corruption of a valid body, which may still be valid
    (the last item: whether it must be refused)."""
    number = chance.randrange(10**9)
    kinds = [
        ("POST", "/rank", b'{"q": "obama", "k": NaN}'),
        ("POST", "/rank", b'{"q": "obama", "k": 1e400}'),
        ("POST", "/rank", b'{"q": "obama", "params": {"k1": 1}}'),
        ("POST", "/rank", b'{"q": "obama", "model": ["bm25"]}'),
        ("POST", "/link", b'{"q": "obama", "method": ["mlm"]}'),
        ("POST", "/link", b'{"q": "klm \\ud800"}'),
        ("POST", "/link", b"[" * 100_000),
        ("POST", "/link", b'{"q": "obama", "commonness_threshold": 2}'),
        ("POST", "/link", BIG),
        ("GET", f"/nope/{number}", None),
        ("DELETE", "/link", None),
        ("GET", f"/rank?q=obama&k={quote(str(chance.random()))}", None),
        ("GET", f"/entity/No_such_{number}", None),
    ]
    method, path, body = chance.choice(kinds)
    if chance.random() >= 0.3:
        return method, path, body, True  # a valid body cut or flipped somewhere
        _, path, body = chance.choice([v for v in VALID if v[2] is not None])
        assert body is not None
        cut = chance.randrange(1, len(body))
        body = body[:cut] if chance.random() < 0.5 else body[:cut] + bytes([chance.randrange(256)]) + body[cut + 1:]
    return "POST", path, body, False


def test_thousands_of_malformed_and_valid_requests(served: Served) -> None:
    first = Connection(served.port)
    expected = {}
    for method, path, body in VALID:
        answer = first.request(method, path, body)
        assert answer.status == 200, (path, answer)
        expected[(method, path, body)] = same(answer.body)
    first.close()
    rss: dict[str, int] = {}
    problems: list[str] = []
    rounds = 1_000  # per connection; 3 in 4 malformed

    def client(seed: int, barrier: threading.Barrier) -> None:
        chance, connection = random.Random(seed), Connection(served.port)
        try:
            for number in range(rounds):
                if number == rounds // 4:
                    barrier.wait()  # all clients past their first quarter: the baseline memory
                    if seed == 0:
                        rss["after a quarter"] = served.rss_kib()
                    barrier.wait()
                if number % 4 == 0:
                    request = chance.choice(VALID)
                    answer = connection.request(*request)
                    if same(answer.body) != expected[request]:
                        problems.append(f"{request}: {answer.status} {answer.body[:200]!r}")
                else:
                    method, path, body, refused = malformed(chance)
                    answer = connection.request(method, path, body)
                    error = json.loads(answer.body) if answer.body.startswith(b"{") else None
                    if answer.status < 300 and not refused:
                        continue
                    if not 400 <= answer.status < 500 or not isinstance(error, dict) or list(error) != ["error"]:
                        problems.append(f"{method} {path} {(body or b'')[:80]!r}: {answer.status} {answer.body[:200]!r}")
        except Exception as exc:  # a closed connection, a timeout
            problems.append(f"client {seed}: {exc!r}")
            barrier.abort()
        finally:
            connection.close()

    barrier = threading.Barrier(4)
    threads = [threading.Thread(target=client, args=(seed, barrier)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    rss["at the end"] = served.rss_kib()
    assert problems == []
    growth = rss["at the end"] - rss["after a quarter"]
    print(f"resident memory (KiB): {rss}")
    # KiB: flat, allowing for steps of the JIT's code and the allocator's arenas (up to 19 MB seen); one
    # request body kept per request would add hundreds of MB (750 of them are 480 kB)
    assert growth < 48 * 1024, rss
    log = served.log()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]
