"""Raw FACC1 annotations -> commonness counts ``form<TAB>Freebase mid<TAB>count`` (methods.md §3).

FACC1 (Freebase Annotations of the ClueWeb Corpora, v1; lemurproject.org/clueweb09/FACC1 and
clueweb12/FACC1) is published as one line per annotation, eight tab-separated columns::

    clueweb09-en0000-00-04720  UTF-8  Food and Drug Administration  21312  21340  0.9998256  0.00057182228  /m/032mx

the ClueWeb document id, the document's encoding, the mention as it appears in the page, its
begin and end byte offsets in the page, the posterior probability of the annotation given the
mention and its context, the probability of the entity given the context alone, and the Freebase
mid. The files come plain, ``.gz`` or ``.bz2``, and inside ``.tar``/``.tar.gz``/``.tgz``
archives (the form the collections are distributed in); directories are searched recursively.

Counting: each (normalized mention, mid) pair is counted once per annotation; with
``min_posterior`` > 0, only annotations whose posterior (column 6) is at least that value. The
mention goes through the store's one normalization (:func:`elquery.indexing.normalize.normalize`);
a mention that normalizes to nothing is counted as ``empty_form`` and dropped. A line is
*malformed* when it does not have eight columns, its offsets are not digits, its posterior is not
a number in [0, 1], its mid is not ``/m/[0-9a-z_]+``, or its mention is not UTF-8; malformed
lines are counted per file and the first few are quoted.

Memory is bounded whatever the input size: each worker (one per file, ``workers`` at a time)
counts raw (mention, mid) byte pairs in a dictionary of at most ``memory_mb`` (estimated at
:data:`BYTES_PER_PAIR` per distinct pair); when it is full, the distinct mentions are normalized,
the pairs summed and written sorted to a run file, and the dictionary is emptied. The runs of
every file are merged (k-way, :func:`heapq.merge`) into the output, sorted by line.
"""

from __future__ import annotations

import gzip
import bz2
import heapq
import os
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tqdm import tqdm

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.indexing.normalize import normalize
from elquery.workers import process_pool

ANNOTATION_SUFFIXES = (".tsv", ".gz", ".bz2", ".tar", ".tgz")
COLUMNS = 8
BYTES_PER_PAIR = 200
"""Estimated memory of one distinct raw pair in a worker's dictionary (key tuple, two byte
strings, the count and the dictionary slot)."""
DEFAULT_MEMORY_MB = 512
MAX_EXAMPLES = 5
_READ_BYTES = 1 << 22
_MID = re.compile(rb"/m/[0-9a-z_]+")


@dataclass
class FileCounts:
    """What one annotation file held."""

    path: str
    lines: int = 0
    counted: int = 0
    below_posterior: int = 0
    empty_form: int = 0
    malformed: int = 0
    examples: list[str] = field(default_factory=list)

    def malformed_line(self, number: int, line: bytes) -> None:
        self.malformed += 1
        self._example(f"line {number}: {line[:200].decode('utf-8', 'replace')!r}")

    def malformed_pair(self, mention: bytes, mid: bytes, count: int) -> None:
        """``count`` counted lines of one (mention, mid) turn out malformed when their run is written."""
        self.malformed += count
        self.counted -= count
        self._example(f"{count} line(s) with mention {mention[:200]!r} and mid {mid[:100]!r}")

    def _example(self, text: str) -> None:
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(text)


@dataclass
class CountReport:
    """Totals over the files, with each file's counts."""

    files: list[FileCounts] = field(default_factory=list)
    pairs: int = 0

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    def summary_lines(self) -> list[str]:
        lines = [f"{f.path}: {f.malformed} malformed line(s); {'; '.join(f.examples)}"
                 for f in self.files if f.malformed]
        lines.append(f"facc annotations: {len(self.files)} file(s), {self.total('lines')} lines, "
                     f"{self.total('counted')} counted, {self.total('below_posterior')} below --min-posterior, "
                     f"{self.total('empty_form')} with an empty form, {self.total('malformed')} malformed; "
                     f"{self.pairs} (form, mid) pairs")
        return lines


def annotation_files(paths: Iterable[Path | str]) -> list[Path]:
    """The annotation files and archives under ``paths`` (directories searched recursively,
    sorted for a deterministic order); a missing path or a directory without any is an error."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(ANNOTATION_SUFFIXES))
            if not found:
                raise ElqueryError(f"{path}: no FACC1 annotation files ({', '.join(ANNOTATION_SUFFIXES)}) in this directory")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise ElqueryError(f"{path}: no such file or directory")
    return files


def _decompressed(name: str, raw: BinaryIO) -> BinaryIO:
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if name.endswith(".bz2"):
        return bz2.BZ2File(raw)  # type: ignore[return-value]
    return raw


def _streams(path: Path) -> Iterator[BinaryIO]:
    """The byte streams of an annotation file: itself, or each annotation member of an archive."""
    name = path.name
    if name.endswith((".tar", ".tgz", ".tar.gz", ".tar.bz2")):
        try:
            with tarfile.open(path, "r|*") as archive:
                for member in archive:
                    if member.isfile() and member.name.endswith((".tsv", ".gz", ".bz2")):
                        stream = archive.extractfile(member)
                        if stream is not None:
                            yield _decompressed(member.name, stream)  # type: ignore[arg-type]
        except tarfile.TarError as exc:
            raise ElqueryError(f"{path}: not a readable tar archive ({exc})") from None
        return
    with open(path, "rb") as raw:
        yield _decompressed(name, raw)


def _lines(path: Path) -> Iterator[bytes]:
    """The lines of every stream of ``path``, without line ends, read in large blocks."""
    for stream in _streams(path):
        rest = b""
        try:
            while block := stream.read(_READ_BYTES):
                lines = (rest + block).split(b"\n")
                rest = lines.pop()
                yield from lines
        except (OSError, EOFError) as exc:
            raise ElqueryError(f"{path}: cannot be read ({exc})") from None
        if rest:
            yield rest


def _spill(raw: dict[tuple[bytes, bytes], int], counts: FileCounts, directory: Path, forms: dict[bytes, str | None]) -> Path:
    """Normalize the distinct mentions of ``raw``, sum the pairs and write them sorted to a run
    file; pairs with a bad mid or a mention that is not UTF-8 are counted as malformed."""
    summed: dict[str, int] = {}
    for (mention, mid), count in raw.items():
        form = forms.get(mention, "")
        if form == "":
            try:
                form = forms[mention] = normalize(mention.decode("utf-8"))
            except UnicodeDecodeError:
                form = forms[mention] = None
        if form is None or not _MID.fullmatch(mid):
            counts.malformed_pair(mention, mid, count)
            continue
        if not form:
            counts.empty_form += count
            counts.counted -= count
            continue
        key = f"{form}\t{mid.decode('ascii')}"
        summed[key] = summed.get(key, 0) + count
    if len(forms) > len(raw):  # the mention cache never outgrows the pair budget
        forms.clear()
    handle, name = tempfile.mkstemp(prefix="run-", suffix=".tsv", dir=directory)
    with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as run:
        run.writelines(f"{key}\t{summed[key]}\n" for key in sorted(summed))
    raw.clear()
    return Path(name)


def count_file(path: Path, min_posterior: float, memory_mb: int, directory: Path) -> tuple[FileCounts, list[Path]]:
    """Count the (mention, mid) pairs of one annotation file into sorted run files in ``directory``."""
    counts = FileCounts(str(path))
    budget = max(1, memory_mb * 2**20 // BYTES_PER_PAIR)
    raw: dict[tuple[bytes, bytes], int] = {}
    forms: dict[bytes, str | None] = {}
    runs: list[Path] = []
    number = 0
    for number, line in enumerate(_lines(path), 1):
        parts = line.split(b"\t")
        if (len(parts) != COLUMNS or not parts[3].isdigit() or not parts[4].isdigit()
                or not parts[7].startswith(b"/m/")):
            counts.malformed_line(number, line)
            continue
        try:
            posterior = float(parts[5])
        except ValueError:
            counts.malformed_line(number, line)
            continue
        if not 0.0 <= posterior <= 1.0:
            counts.malformed_line(number, line)
            continue
        if posterior < min_posterior:
            counts.below_posterior += 1
            continue
        key = (parts[2], parts[7])
        raw[key] = raw.get(key, 0) + 1
        counts.counted += 1
        if len(raw) >= budget:
            runs.append(_spill(raw, counts, directory, forms))
    counts.lines = number
    if raw:
        runs.append(_spill(raw, counts, directory, forms))
    return counts, runs


def _merge(runs: list[Path], out: Path | str) -> int:
    """Merge sorted run files into ``out``, summing the counts of equal (form, mid); returns the
    number of pairs written."""
    files = [open(run, encoding="utf-8", newline="\n") for run in runs]
    pairs = 0
    try:
        with atomic_output(out) as sink:
            key, total = None, 0
            for line in heapq.merge(*files):
                cut = line.rindex("\t")
                if line[:cut] != key:
                    if key is not None:
                        sink.write(f"{key}\t{total}\n")
                        pairs += 1
                    key, total = line[:cut], 0
                total += int(line[cut + 1:])
            if key is not None:
                sink.write(f"{key}\t{total}\n")
                pairs += 1
    finally:
        for handle in files:
            handle.close()
    return pairs


def count_annotations(paths: Iterable[Path | str], out: Path | str, *, min_posterior: float = 0.0,
                      memory_mb: int = DEFAULT_MEMORY_MB, workers: int = os.cpu_count() or 1,
                      work: Path | str | None = None, progress: bool | None = None) -> CountReport:
    """Count the raw FACC1 annotations under ``paths`` into the counts file ``out`` (sorted
    ``form<TAB>mid<TAB>count`` lines, written atomically), with ``workers`` processes of at most
    ``memory_mb`` of pairs each; run files go to a temporary directory in ``work`` (default: beside
    ``out``) and are removed."""
    if not 0.0 <= min_posterior <= 1.0:
        raise ElqueryError(f"--min-posterior must be between 0 and 1, not {min_posterior:g}")
    if memory_mb < 1 or workers < 1:
        raise ElqueryError("--memory and --workers must be at least 1")
    files = annotation_files(paths)
    where = Path(work) if work is not None else Path(out).resolve().parent
    report = CountReport()
    with tempfile.TemporaryDirectory(prefix=".facc-counts-", dir=where) as directory:
        runs: list[Path] = []
        bar = tqdm(total=sum(f.stat().st_size for f in files), unit="B", unit_scale=True, desc="facc annotations",
                   disable=progress is False or (progress is None and not sys.stderr.isatty()), file=sys.stderr)
        with bar, process_pool(min(workers, len(files))) as pool:
            tasks = [pool.submit(count_file, f, min_posterior, memory_mb, Path(directory)) for f in files]
            for f, task in zip(files, tasks):
                counts, file_runs = task.result()
                report.files.append(counts)
                runs.extend(file_runs)
                bar.update(f.stat().st_size)
        report.pairs = _merge(runs, out)
    return report
