"""The anchor dictionary of TAGME (methods.md §6), aggregated in bounded memory.

Surface forms come from four sources, all normalized with :func:`elquery.kb.normalize.normalize`
(methods.md §3):

* anchors (DBpedia anchor_text, ``dbo:wikiPageWikiLinkText``; the subject is the link target and
  every line is one link occurrence): each occurrence counts 1 for (form, entity);
* titles (rdfs:label of a page that is not a redirect and not a "(disambiguation)" page), the
  title cut at its first "(" or ",", and the titles of redirect pages (pointing at their target):
  a (form, entity) pair named by any of these counts 1 more, once, as if it were one more link.

link(e, m) is the count of (m, e) and link(m) the sum over entities. Dropped: forms of one
character, forms made of digits only (spaces aside), forms longer than ``max_tokens`` tokens
(never a query span) and forms with link(m) < ``min_link``. Note that DBpedia's anchor_text has
no source page, so link(m) counts link occurrences, not the pages holding them.

Every (form, node, kind) record is *spilled* to one of P partition files by a stable hash of the
form, so each partition can be aggregated in memory on its own.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from elquery.kb.normalize import normalize

_ANCHOR, _KB = "A", "K"
_TITLE_CUT = re.compile(r"[(,]")


def surface_form(text: str, max_tokens: int) -> str | None:
    """The normalized form of ``text``, or None if methods.md §6 drops it (empty, one character,
    all digits, more than ``max_tokens`` tokens)."""
    form = normalize(text)
    if len(form) <= 1 or form.replace(" ", "").isdigit() or form.count(" ") >= max_tokens:
        return None
    return form


def title_variants(title: str) -> tuple[str, ...]:
    """A title and, if different and not empty, the title cut at its first "(" or ","
    (``"Jacksonville, Florida"`` -> ``"Jacksonville"``)."""
    cut = _TITLE_CUT.split(title, maxsplit=1)[0].strip()
    return (title, cut) if cut and cut != title.strip() else (title,)


class FormSpill:
    """Appends ``form<TAB>node<TAB>kind`` records to ``partitions`` files under ``directory``."""

    def __init__(self, directory: Path, partitions: int, max_tokens: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.paths = [directory / f"forms-{p:04d}.tsv" for p in range(partitions)]
        self._handles = [open(path, "w", encoding="utf-8") for path in self.paths]
        self._max_tokens = max_tokens

    def _add(self, text: str, node: int, kind: str) -> None:
        form = surface_form(text, self._max_tokens)
        if form is not None:
            handle = self._handles[zlib.crc32(form.encode("utf-8")) % len(self._handles)]
            handle.write(f"{form}\t{node}\t{kind}\n")

    def anchor(self, text: str, node: int) -> None:
        """One link occurrence with anchor ``text`` to ``node``."""
        self._add(text, node, _ANCHOR)

    def title(self, text: str, node: int) -> None:
        """A title, title variant or redirect title of ``node`` (counted once per form)."""
        self._add(text, node, _KB)

    def close(self) -> None:
        for handle in self._handles:
            handle.close()


@dataclass(frozen=True)
class FormEntry:
    """One dictionary form: link(m) and link(e, m) per entity node (by node)."""

    form: str
    link: int
    counts: tuple[tuple[int, int], ...]


def aggregate(partition: Path, min_link: int) -> Iterator[FormEntry]:
    """The forms of one spill partition with link(m) >= ``min_link``, sorted by form."""
    anchors: Counter[tuple[str, int]] = Counter()
    titles: set[tuple[str, int]] = set()
    with open(partition, encoding="utf-8") as handle:
        for line in handle:
            form, node, kind = line.rstrip("\n").split("\t")
            key = (form, int(node))
            if kind == _ANCHOR:
                anchors[key] += 1
            else:
                titles.add(key)
    by_form: dict[str, dict[int, int]] = {}
    for key in anchors.keys() | titles:
        by_form.setdefault(key[0], {})[key[1]] = anchors[key] + (key in titles)
    for form in sorted(by_form):
        counts = by_form[form]
        link = sum(counts.values())
        if link >= min_link:
            yield FormEntry(form, link, tuple(sorted(counts.items())))
