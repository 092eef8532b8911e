"""A process and its descendants, read from /proc, for the benchmarks that run jobs in other
processes (worker pools, Spark's JVM and its Python workers).

Descendants are found by each process's parent id over all of /proc: a JVM starts its children
from threads other than its main one, which ``/proc/PID/task/PID/children`` does not list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcessStat:
    """One process as /proc/PID/stat and statm show it: its parent, its own CPU seconds, the CPU
    seconds of the children it has reaped, and its resident memory in bytes."""

    parent: int
    own_cpu: float
    reaped_cpu: float
    rss: int


def stat(pid: int) -> ProcessStat | None:
    """``pid``'s figures, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return ProcessStat(int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS,
                       (int(fields[13]) + int(fields[14])) / TICKS, pages * PAGE)


def _parents() -> dict[int, int]:
    """The parent of every process (read from /proc/PID/stat alone, the cheapest file)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def descendants(root: int) -> dict[int, ProcessStat]:
    """Every live descendant of ``root`` (not ``root`` itself) with its figures."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, ProcessStat] = {}
    stack = [root]
    while stack:
        for pid in children.get(stack.pop(), []):
            if (figures := stat(pid)) is not None:
                found[pid] = figures
            stack.append(pid)
    return found


def high_water_mark(pid: int) -> tuple[str, float] | None:
    """``pid``'s name and the kernel's high-water mark of its resident memory (VmHWM) in MB, or
    None once it is gone (or for a kernel thread, which has none)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if "VmHWM" not in fields:
        return None
    return fields["Name"].strip(), int(fields["VmHWM"].split()[0]) / 1024


def peak_rss_mb(pids: list[int]) -> dict[str, int]:
    """The high-water mark of resident memory (whole MB) of each live process, keyed ``name-pid``."""
    peaks = {}
    for pid in pids:
        if (mark := high_water_mark(pid)) is not None:
            peaks[f"{mark[0]}-{pid}"] = int(mark[1])
    return peaks


@dataclass
class TreeCpu:
    """CPU seconds of a process tree from samples: each process's own time and the time of the
    children it reaped, as last seen. A process that ended before its parent's last sample was
    reaped into that parent's children time and counts only there."""

    seen: dict[int, tuple[int, int, float, float]] = field(default_factory=dict)  # pid: parent, sample, own, reaped
    samples: int = 0

    def sample(self, root: int) -> dict[int, ProcessStat]:
        """Record ``root`` and its descendants; returns them with their figures."""
        self.samples += 1
        tree = descendants(root)
        if (figures := stat(root)) is not None:
            tree[root] = figures
        for pid, figures in tree.items():
            self.seen[pid] = (figures.parent, self.samples, figures.own_cpu, figures.reaped_cpu)
        return tree

    def total(self) -> float:
        return sum(own + reaped for pid, (parent, sample, own, reaped) in self.seen.items()
                   if not (parent in self.seen and sample < self.seen[parent][1]))
