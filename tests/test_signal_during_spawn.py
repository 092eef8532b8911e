"""SIGTERM to ``elquery link --workers 2`` printed, once in CI, a worker's ``spawn_main``
traceback ("No such file or directory") after "elquery: interrupted": the signal came while the
pool was starting a worker, after the process was launched and before the pool knew it, so
nothing killed it, and the worker, still reading what its parent sent, found the parent's
semaphores gone. The signal is now taken after the worker is known to the pool, which kills it.

The race is made certain here: the parent signals itself right after launching its first worker, inside
the pool's start of that worker (a wrapped ``spawnv_passfds``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    import multiprocessing.util as util
    from elquery.base import sigterm_interrupts
    from elquery.workers import process_pool

    launch = util.spawnv_passfds
    def launch_then_signal(path, args, passfds):
        pid = launch(path, args, passfds)
        if not any(b"spawn_main" in os.fsencode(arg) for arg in args):  # the resource tracker
            return pid
        print(pid, flush=True)
        os.kill(os.getpid(), signal.SIG{name})
        time.sleep(0.05)  # the handler runs at the next bytecode: still inside the start
        return pid
    util.spawnv_passfds = launch_then_signal
    with sigterm_interrupts():
        try:
            with process_pool(2) as pool:
                pool.submit(time.sleep, 30).result()
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)
""")


def _run(name: str) -> tuple[int, str, list[int]]:
    process = subprocess.run([sys.executable, "-c", SCRIPT.format(name=name)], capture_output=True, text=True,
                             timeout=60)
    return process.returncode, process.stderr, [int(line) for line in process.stdout.split()]


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_sigterm_while_a_worker_starts_leaves_no_worker_and_no_traceback() -> None:
    status, stderr, workers = _run("TERM")
    assert status == 130
    assert stderr == "interrupted\n"
    assert workers and all(_gone(pid) for pid in workers)


def test_ctrl_c_while_a_worker_starts_leaves_no_worker_and_no_traceback() -> None:
    status, stderr, workers = _run("INT")
    assert status == 130
    assert stderr == "interrupted\n"
    assert workers and all(_gone(pid) for pid in workers)
