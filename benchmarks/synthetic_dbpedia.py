"""Seeded synthetic DBpedia-shaped dumps (methods.md §2 inputs, at benchmark scale).

Writes ``.ttl.bz2`` files named and shaped like the DBpedia 2015-10 datasets, one triple per line,
for ``entities`` article entities:

- ``labels_en``: ``rdfs:label`` of every entity and of every redirect page;
- ``short_abstracts_en``: ``rdfs:comment`` for 97% of the entities (the rest are not indexable,
  like DBpedia's stubs), 15-60 words drawn from a Zipfian vocabulary, occasionally with
  ``\\"quotes\\"``, ``\\\\`` and ``\\uXXXX`` escapes;
- ``transitive_redirects_en``: 0, 1 or 2 redirect pages per entity (50/30/20%);
- ``mappingbased_objects_en``: ~2.5 ``dbo:`` object properties per entity, objects drawn Zipfian
  over the entities (popular entities are linked often), 10% to resources that have no label;
- ``mappingbased_literals_en``: ~2.5 literal properties (dates, integers, doubles, ``@en``
  strings, some with ``\\n``), and ``foaf:name`` for 5% of the non-person entities;
- ``instance_types_en``: the most specific ``dbo:`` class (a ``dbo:`` local name);
- ``article_categories_en``: 1 + ~2 ``dct:subject`` links to ``Category:`` resources (no labels);
- ``persondata_en``: for the 20% person entities: ``foaf:name`` (sometimes with a middle
  initial, so it differs from the label), given name, surname, ``rdf:type foaf:Person``,
  ``dc:description``, birth date;
- optional (``extras=True`` / ``--extras``), for the linking benchmarks: ``page_links_en`` (~12
  links per entity, Zipfian targets), ``anchor_text_en`` (~4 anchors per entity: the target's label,
  a redirect label, or the first title word) and ``freebase_links_en`` (95% of the entities).

Titles are a bijection of the entity number onto pairs of vocabulary words (``Kalomi_vetra``;
persons ``Kalomi_Vetra``), so they are unique and recomputable (``GeneratedDumps.title(i)``);
entities ``10k+7 .. 10k+9`` share the base name of entity ``10k`` with a qualifier
(``_(film)``, ``_(album)``, ``_(band)``) for ambiguous names; a few titles hold a colon
(``Kalomi:_vetra``), a percent-escaped quote (``Kalomi_%22vetra%22``) or non-ASCII letters.

The work is split into chunks of entities, each generated from its own seed (so the output does
not depend on the number of processes) and bz2-compressed (level 1) in a worker process; the
chunks of a file are concatenated bz2 streams (which every bz2 reader, Python's included, reads
as one file). A manifest ``synthetic_dbpedia.json`` records the parameters, so an existing
output is reused when asked with ``reuse=True``.

Usage: ``python benchmarks/synthetic_dbpedia.py --entities N --out DIR [--seed S] [--extras]
[--processes P]``; prints one JSON line describing what it wrote.
"""

from __future__ import annotations

import argparse
import bz2
import functools
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from elquery.workers import ordered_map

MANIFEST = "synthetic_dbpedia.json"
GENERATOR_VERSION = 1
CHUNK = 5_000
VOCABULARY_SIZE = 40_000
ZIPF_EXPONENT = 1.07

RESOURCE = "http://dbpedia.org/resource/"
ONTOLOGY = "http://dbpedia.org/ontology/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
REDIRECTS = ONTOLOGY + "wikiPageRedirects"
DCT_SUBJECT = "http://purl.org/dc/terms/subject"
FOAF = "http://xmlns.com/foaf/0.1/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PAGE_LINK = ONTOLOGY + "wikiPageWikiLink"
ANCHOR = ONTOLOGY + "wikiPageWikiLinkText"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
FREEBASE = "http://rdf.freebase.com/ns/"

CORE_DATASETS = (
    "labels_en",
    "short_abstracts_en",
    "transitive_redirects_en",
    "mappingbased_objects_en",
    "mappingbased_literals_en",
    "instance_types_en",
    "article_categories_en",
    "persondata_en",
)
EXTRA_DATASETS = ("page_links_en", "anchor_text_en", "freebase_links_en")

# The head of the Zipfian vocabulary: English function words (most are analyzer stopwords).
FUNCTION_WORDS = (
    "the", "of", "and", "in", "a", "is", "to", "was", "for", "by", "on", "as", "with", "from",
    "at", "an", "which", "it", "his", "that", "be", "are", "also", "its", "first", "or", "has",
    "who", "their", "this", "after", "were", "new", "one", "known",
)
QUALIFIERS = ("film", "album", "band")
OBJECT_PREDICATES = tuple(
    ONTOLOGY + p
    for p in (
        "country", "location", "birthPlace", "genre", "team", "city", "isPartOf", "occupation",
        "starring", "recordLabel", "writer", "artist", "producer", "director", "region", "party",
        "associatedBand", "nationality", "deathPlace", "league", "state", "hometown", "language",
        "family", "order", "kingdom", "education", "employer", "owner", "parentCompany",
        "headquarter", "ground", "religion", "capital", "successor", "predecessor", "musicalBand",
        "publisher", "developer", "distributor",
    )
)
CLASSES = (
    "Place", "PopulatedPlace", "Settlement", "Village", "Town", "City", "Organisation", "Company",
    "Band", "SportsTeam", "SoccerClub", "School", "University", "Work", "Film", "Album", "Single",
    "Book", "TelevisionShow", "VideoGame", "Software", "Species", "Animal", "Insect", "Plant",
    "Building", "Church", "Station", "Airport", "River", "Mountain", "Lake", "Island",
    "MilitaryUnit", "Event", "SportsEvent", "MilitaryConflict", "Election", "Award", "Ship",
    "Aircraft", "Automobile", "Weapon", "Language", "Disease", "Drug", "ChemicalCompound",
    "Newspaper", "Magazine", "RadioStation", "Road", "Bridge", "Stadium", "Museum", "Park",
    "ProtectedArea", "Genre", "MusicGenre", "Company", "Legislature",
)
PERSON_CLASSES = ("Person", "Athlete", "SoccerPlayer", "Politician", "Artist", "MusicalArtist",
                  "Writer", "Scientist", "Actor", "OfficeHolder")
OCCUPATIONS = ("politician", "footballer", "writer", "actor", "singer", "painter", "scientist",
               "composer", "journalist", "cricketer", "architect", "bishop")
_CONSONANTS = "bcdfghklmnprstvz"
_ONSETS = [c for c in _CONSONANTS] + ["br", "tr", "st", "ch", "sh", "kr", "pl", "gr", "th"]
_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o", "ou", "ai", "é", "ü", "ø"]
_CODAS = ["", "", "", "n", "r", "s", "l", "m", "t", "k"]


def _mix(seed: int, values: np.ndarray | int) -> np.ndarray:
    """splitmix64 of ``seed * 2^32 + value``: per-entity decisions that need no RNG stream."""
    with np.errstate(over="ignore"):
        x = np.asarray(values, dtype=np.uint64) + np.uint64((seed & 0xFFFFFFFF) << 32)
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


_M64 = (1 << 64) - 1


def _mix_int(seed: int, value: int) -> int:
    """:func:`_mix` of one value, in plain Python (much faster than a numpy scalar)."""
    x = (value + ((seed & 0xFFFFFFFF) << 32) + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _salted(seed: int, salt: int) -> int:
    return (seed * 1_000_003 + salt) & 0xFFFFFFFF


@functools.lru_cache(maxsize=4)
def make_vocabulary(seed: int, size: int = VOCABULARY_SIZE) -> tuple[str, ...]:
    """Function words followed by ``size`` unique pseudo-words, in Zipf rank order (the most
    frequent first). Some words carry non-ASCII letters (é, ü, ø)."""
    rng = np.random.default_rng([seed, 1])
    words: list[str] = []
    seen = set(FUNCTION_WORDS)
    while len(words) < size:
        batch = size
        syllables = rng.integers(2, 4, batch).tolist()
        onsets = rng.integers(0, len(_ONSETS), (batch, 3)).tolist()
        vowels = rng.integers(0, len(_VOWELS), (batch, 3)).tolist()
        codas = rng.integers(0, len(_CODAS), (batch, 3)).tolist()
        for count, on, vo, co in zip(syllables, onsets, vowels, codas):
            word = "".join(_ONSETS[on[k]] + _VOWELS[vo[k]] + _CODAS[co[k]] for k in range(count))
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return FUNCTION_WORDS + tuple(words)


def _zipf_cdf(support: int, exponent: float = ZIPF_EXPONENT) -> np.ndarray:
    weights = np.cumsum(1.0 / np.arange(1, support + 1, dtype=np.float64) ** exponent)
    return weights / weights[-1]


def _zipf(rng: np.random.Generator, cdf: np.ndarray, size: int) -> np.ndarray:
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), len(cdf) - 1)


def _escape(text: str) -> str:
    """An N-Triples string literal body (quotes, backslashes and line breaks escaped)."""
    if "\\" in text or '"' in text or "\n" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return text


class _Names:
    """The title and label scheme shared by the generator and :class:`GeneratedDumps`."""

    def __init__(self, seed: int, entities: int, vocabulary: tuple[str, ...]) -> None:
        self.seed = seed
        self.entities = entities
        self.vocabulary = vocabulary
        self.title_words = vocabulary[len(FUNCTION_WORDS):]
        self.capitalized = [w[0].upper() + w[1:] for w in self.title_words]
        self._person_seed = _salted(seed, 2)
        self._indexable_seed = _salted(seed, 3)

    def is_person(self, i: int) -> bool:
        return _mix_int(self._person_seed, i) % 100 < 20

    def is_indexable(self, i: int) -> bool:
        """Whether entity ``i`` has a short abstract (so the entity index holds it)."""
        return _mix_int(self._indexable_seed, i) % 100 >= 3

    def _pair_indexes(self, j: int) -> tuple[int, int]:
        v = len(self.title_words)
        a = j % v
        return a, (j // v + a * 7919) % v

    def _pair(self, j: int) -> tuple[str, str]:
        a, b = self._pair_indexes(j)
        return self.title_words[a], self.title_words[b]

    def _base(self, j: int) -> tuple[str, str]:
        """(title, label) of base name ``j``."""
        a, b = self._pair_indexes(j)
        head = self.capitalized[a]
        second = self.capitalized[b] if self.is_person(j) else self.title_words[b]
        if j % 997 == 3:
            return f"{head}:_{second}", f"{head}: {second}"
        if j % 991 == 5:
            return f"{head}_%22{second}%22", f'{head} "{second}"'
        return f"{head}_{second}", f"{head} {second}"

    def title_label(self, i: int) -> tuple[str, str]:
        q = i % 10
        if q >= 7 and i - q >= 0:
            title, label = self._base(i - q)
            qualifier = QUALIFIERS[q - 7]
            return f"{title}_({qualifier})", f"{label} ({qualifier})"
        return self._base(i)

    def redirect_title_labels(self, i: int, count: int) -> list[tuple[str, str]]:
        """The redirect pages of entity ``i``: ``Second,_First`` and ``First-second`` shapes."""
        if not count:
            return []
        a, b = self._pair_indexes(i)
        first, second = self.title_words[a], self.title_words[b]
        head, second_head = self.capitalized[a], self.capitalized[b]
        suffix_t = suffix_l = ""
        if i % 10 >= 7:
            suffix_t, suffix_l = f"_({QUALIFIERS[i % 10 - 7]})", f" ({QUALIFIERS[i % 10 - 7]})"
        shapes = [
            (f"{second_head},_{first}{suffix_t}", f"{second_head}, {first}{suffix_l}"),
            (f"{head}-{second}{suffix_t}", f"{head}-{second}{suffix_l}"),
        ]
        return shapes[:count]


@dataclass(frozen=True)
class GeneratedDumps:
    """What :func:`generate` wrote, and the naming scheme to find entities in it."""

    out_dir: Path
    seed: int
    entities: int
    indexable: int
    redirects: int
    files: dict[str, Path]
    triples: dict[str, int]
    vocabulary: tuple[str, ...] = field(repr=False)
    seconds: float = 0.0

    @functools.cached_property
    def _names(self) -> _Names:
        return _Names(self.seed, self.entities, self.vocabulary)

    @property
    def dumps(self) -> list[Path]:
        """The dump files, core datasets first (sorted within each group)."""
        return [self.files[name] for name in (*CORE_DATASETS, *EXTRA_DATASETS) if name in self.files]

    @property
    def core_dumps(self) -> list[Path]:
        return [self.files[name] for name in CORE_DATASETS]

    def title(self, i: int) -> str:
        """DBpedia title of entity ``i`` (as in its URI)."""
        return self._names.title_label(i)[0]

    def label(self, i: int) -> str:
        return self._names.title_label(i)[1]

    def entity_id(self, i: int) -> str:
        return f"<dbpedia:{self.title(i)}>"

    def is_indexable(self, i: int) -> bool:
        return self._names.is_indexable(i)

    def is_person(self, i: int) -> bool:
        return self._names.is_person(i)

    def to_json(self) -> dict[str, object]:
        return {
            "generator": GENERATOR_VERSION,
            "out_dir": str(self.out_dir),
            "seed": self.seed,
            "entities": self.entities,
            "indexable": self.indexable,
            "redirects": self.redirects,
            "files": {k: str(v) for k, v in self.files.items()},
            "triples": self.triples,
            "vocabulary_size": len(self.vocabulary),
            "bytes": sum(p.stat().st_size for p in self.files.values()),
            "seconds": round(self.seconds, 2),
        }


# --- generation of one chunk ---------------------------------------------------------------------


def _chunk(args: tuple[int, int, int, int, bool]) -> tuple[dict[str, bytes], dict[str, int], int, int]:
    """Generate entities ``start .. stop-1``; returns compressed bytes and triple counts per dataset,
    the number of indexable entities and of redirects."""
    seed, entities, start, stop, extras = args
    vocabulary = make_vocabulary(seed)
    names = _Names(seed, entities, vocabulary)
    n = stop - start
    rng = np.random.default_rng([seed, 2, start])
    ids = np.arange(start, stop, dtype=np.uint64)
    person = (_mix(_salted(seed, 2), ids) % np.uint64(100) < np.uint64(20)).tolist()
    indexable = (_mix(_salted(seed, 3), ids) % np.uint64(100) >= np.uint64(3)).tolist()
    word_cdf = _zipf_cdf(len(vocabulary))
    entity_cdf = _zipf_cdf(entities, 1.0)
    # Popularity rank -> entity: a fixed stride permutation (gcd(stride, entities) == 1 not needed,
    # collisions only make some entities a little more popular).
    stride = 2_654_435_761 % max(entities, 1) or 1

    def popular(size: int) -> list[int]:
        return ((_zipf(rng, entity_cdf, size).astype(np.int64) * stride) % entities).tolist()

    words = vocabulary
    title_words = names.title_words
    out: dict[str, list[str]] = {name: [] for name in (*CORE_DATASETS, *(EXTRA_DATASETS if extras else ()))}
    labels_out, abstracts_out = out["labels_en"], out["short_abstracts_en"]
    redirects_out, objects_out = out["transitive_redirects_en"], out["mappingbased_objects_en"]
    literals_out, types_out = out["mappingbased_literals_en"], out["instance_types_en"]
    categories_out, persons_out = out["article_categories_en"], out["persondata_en"]

    abstract_lengths = rng.integers(15, 61, n)
    abstract_words = _zipf(rng, word_cdf, int(abstract_lengths.sum())).tolist()
    redirect_counts = np.searchsorted([0.5, 0.8], rng.random(n), side="right").tolist()
    object_counts = np.minimum(rng.poisson(2.5, n), 8).tolist()
    literal_counts = np.minimum(rng.poisson(2.5, n), 8).tolist()
    category_counts = (1 + np.minimum(rng.poisson(2.0, n), 8)).tolist()
    total_objects = sum(object_counts)
    object_predicates = _zipf(rng, _zipf_cdf(len(OBJECT_PREDICATES)), total_objects).tolist()
    object_targets = popular(total_objects)
    dangling = (rng.random(total_objects) < 0.1).tolist()
    dangling_words = rng.integers(0, len(title_words), (total_objects, 3)).tolist()
    total_literals = sum(literal_counts)
    literal_kinds = rng.integers(0, 6, total_literals).tolist()
    literal_numbers = rng.integers(1, 2_000_000, total_literals).tolist()
    literal_words = _zipf(rng, word_cdf, total_literals * 3).tolist()
    classes = _zipf(rng, _zipf_cdf(len(CLASSES)), n).tolist()
    person_classes = rng.integers(0, len(PERSON_CLASSES), n).tolist()
    total_categories = sum(category_counts)
    category_cdf = _zipf_cdf(max(entities // 15, 10), 1.0)
    categories = _zipf(rng, category_cdf, total_categories).tolist()
    years = rng.integers(1800, 2015, n).tolist()
    months = rng.integers(1, 13, n).tolist()
    days = rng.integers(1, 29, n).tolist()
    initials = rng.integers(0, 26, n).tolist()
    occupations = rng.integers(0, len(OCCUPATIONS), n).tolist()
    if extras:
        link_counts = np.minimum(rng.poisson(12, n), 60).tolist()
        link_targets = popular(sum(link_counts))
        anchor_counts = np.minimum(rng.poisson(4, n), 20).tolist()
        anchor_targets = popular(sum(anchor_counts))
        anchor_kinds = rng.integers(0, 10, sum(anchor_counts)).tolist()

    word_at = object_at = literal_at = category_at = link_at = anchor_at = 0
    indexable_count = redirect_count = 0
    label_cache: dict[int, tuple[str, str]] = {}

    def title_label(j: int) -> tuple[str, str]:
        value = label_cache.get(j)
        if value is None:
            if len(label_cache) > 200_000:
                label_cache.clear()
            value = label_cache[j] = names.title_label(j)
        return value

    for k in range(n):
        i = start + k
        title, label = title_label(i)
        s = f"<{RESOURCE}{title}>"
        labels_out.append(f'{s} <{RDFS_LABEL}> "{_escape(label)}"@en .\n')
        redirects = names.redirect_title_labels(i, redirect_counts[k])
        for r_title, r_label in redirects:
            labels_out.append(f'<{RESOURCE}{r_title}> <{RDFS_LABEL}> "{_escape(r_label)}"@en .\n')
            redirects_out.append(f"<{RESOURCE}{r_title}> <{REDIRECTS}> {s} .\n")
        redirect_count += len(redirects)
        # short abstract
        length = abstract_lengths[k]
        body = " ".join([words[w] for w in abstract_words[word_at : word_at + length]])
        word_at += length
        if i % 53 == 0:
            body += ' (also \\"' + words[abstract_words[word_at - 1]] + '\\")'
        if i % 89 == 0:
            body += " caf\\u00E9 \\\\ d\\U0001D49C"
        if indexable[k]:
            indexable_count += 1
            abstracts_out.append(f'{s} <{RDFS_COMMENT}> "{_escape(label)} is a {body}."@en .\n')
        # object properties
        for _ in range(object_counts[k]):
            predicate = OBJECT_PREDICATES[object_predicates[object_at]]
            if dangling[object_at]:
                a, b, c = dangling_words[object_at]
                target = f"{title_words[a].capitalize()}_{title_words[b]}_{title_words[c]}"
            else:
                target = title_label(object_targets[object_at])[0]
            objects_out.append(f"{s} <{predicate}> <{RESOURCE}{target}> .\n")
            object_at += 1
        # literal properties
        for _ in range(literal_counts[k]):
            kind, number = literal_kinds[literal_at], literal_numbers[literal_at]
            w0, w1, w2 = (words[w] for w in literal_words[3 * literal_at : 3 * literal_at + 3])
            literal_at += 1
            if kind == 0:
                literals_out.append(f'{s} <{ONTOLOGY}populationTotal> "{number}"^^<{XSD}nonNegativeInteger> .\n')
            elif kind == 1:
                literals_out.append(f'{s} <{ONTOLOGY}areaTotal> "{number / 7:.3f}"^^<{XSD}double> .\n')
            elif kind == 2:
                literals_out.append(
                    f'{s} <{ONTOLOGY}foundingDate> "{years[k]}-{months[k]:02d}-{days[k]:02d}"^^<{XSD}date> .\n'
                )
            elif kind == 3:
                literals_out.append(f'{s} <{ONTOLOGY}motto> "{w0} {w1} {w2}"@en .\n')
            elif kind == 4:
                literals_out.append(f'{s} <{ONTOLOGY}code> "{w0[:3].upper()}{number % 100}".\n')
            else:
                literals_out.append(f'{s} <{ONTOLOGY}description> "{w0} {w1}\\n{w2}"@en .\n')
        # type
        if person[k]:
            types_out.append(f"{s} <{RDF_TYPE}> <{ONTOLOGY}{PERSON_CLASSES[person_classes[k]]}> .\n")
        else:
            types_out.append(f"{s} <{RDF_TYPE}> <{ONTOLOGY}{CLASSES[classes[k]]}> .\n")
        # categories
        for _ in range(category_counts[k]):
            c = categories[category_at]
            category_at += 1
            a = title_words[c % len(title_words)]
            b = title_words[(c * 31 + 7) % len(title_words)]
            categories_out.append(f"{s} <{DCT_SUBJECT}> <{RESOURCE}Category:{a.capitalize()}_of_{b}> .\n")
        # persons
        if person[k]:
            first, second = names._pair(i - i % 10 if i % 10 >= 7 else i)
            given, surname = first.capitalize(), second.capitalize()
            name = f"{given} {chr(65 + initials[k])}. {surname}" if initials[k] < 8 else f"{given} {surname}"
            persons_out.append(f'{s} <{FOAF}name> "{name}"@en .\n')
            persons_out.append(f'{s} <{FOAF}givenName> "{given}"@en .\n')
            persons_out.append(f'{s} <{FOAF}surname> "{surname}"@en .\n')
            persons_out.append(f"{s} <{RDF_TYPE}> <{FOAF}Person> .\n")
            persons_out.append(f'{s} <http://purl.org/dc/elements/1.1/description> "{OCCUPATIONS[occupations[k]]}"@en .\n')
            persons_out.append(
                f'{s} <{ONTOLOGY}birthDate> "{years[k]}-{months[k]:02d}-{days[k]:02d}"^^<{XSD}date> .\n'
            )
        elif i % 20 == 1:
            literals_out.append(f'{s} <{FOAF}name> "{_escape(label)}"@en .\n')
        if extras:
            for _ in range(link_counts[k]):
                target = title_label(link_targets[link_at])[0]
                link_at += 1
                out["page_links_en"].append(f"{s} <{PAGE_LINK}> <{RESOURCE}{target}> .\n")
            for _ in range(anchor_counts[k]):
                j, kind = anchor_targets[anchor_at], anchor_kinds[anchor_at]
                anchor_at += 1
                t_title, t_label = title_label(j)
                if kind < 6:
                    anchor = t_label
                elif kind < 8:
                    anchor = names._pair(j)[0].capitalize()
                else:
                    first, second = names._pair(j)
                    anchor = f"{second.capitalize()}, {first}"
                out["anchor_text_en"].append(f'<{RESOURCE}{t_title}> <{ANCHOR}> "{_escape(anchor)}"@en .\n')
            if i % 20:
                out["freebase_links_en"].append(f"{s} <{SAME_AS}> <{FREEBASE}m.0{i:x}> .\n")

    compressed = {name: bz2.compress("".join(lines).encode("utf-8"), 1) for name, lines in out.items()}
    counts = {name: len(lines) for name, lines in out.items()}
    return compressed, counts, indexable_count, redirect_count


def _chunks(seed: int, entities: int, extras: bool) -> Iterator[tuple[int, int, int, int, bool]]:
    for start in range(0, entities, CHUNK):
        yield seed, entities, start, min(entities, start + CHUNK), extras


# --- public API ------------------------------------------------------------------------------------


def load(out_dir: Path | str) -> GeneratedDumps | None:
    """The dumps described by ``out_dir``'s manifest, or None if there is no complete output."""
    out_dir = Path(out_dir)
    manifest = out_dir / MANIFEST
    if not manifest.is_file():
        return None
    data = json.loads(manifest.read_text(encoding="utf-8"))
    if data.get("generator") != GENERATOR_VERSION:
        return None
    files = {k: Path(v) for k, v in data["files"].items()}
    if not all(p.is_file() for p in files.values()):
        return None
    return GeneratedDumps(
        out_dir=out_dir,
        seed=data["seed"],
        entities=data["entities"],
        indexable=data["indexable"],
        redirects=data["redirects"],
        files=files,
        triples=data["triples"],
        vocabulary=make_vocabulary(data["seed"]),
        seconds=data.get("seconds", 0.0),
    )


def generate(
    out_dir: Path | str,
    entities: int = 1_000_000,
    seed: int = 0,
    *,
    extras: bool = False,
    processes: int | None = None,
    reuse: bool = False,
) -> GeneratedDumps:
    """Write the synthetic dumps for ``entities`` entities into ``out_dir`` (deterministic in
    ``entities``, ``seed`` and ``extras``, whatever ``processes``). With ``reuse``, an existing
    output with the same parameters is returned as it is."""
    if entities < 1:
        raise ValueError("entities must be at least 1")
    if entities >= (VOCABULARY_SIZE) ** 2:
        raise ValueError(f"at most {VOCABULARY_SIZE ** 2 - 1} entities")
    out_dir = Path(out_dir)
    if reuse:
        existing = load(out_dir)
        if (
            existing is not None
            and existing.entities == entities
            and existing.seed == seed
            and (not extras or all(name in existing.files for name in EXTRA_DATASETS))
        ):
            return existing
    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    names = (*CORE_DATASETS, *(EXTRA_DATASETS if extras else ()))
    files = {name: out_dir / f"{name}.ttl.bz2" for name in names}
    for stale in EXTRA_DATASETS:
        if not extras:
            (out_dir / f"{stale}.ttl.bz2").unlink(missing_ok=True)
    triples = dict.fromkeys(names, 0)
    indexable = redirects = 0
    handles = {name: open(path, "wb") for name, path in files.items()}
    processes = processes or os.cpu_count() or 1
    try:
        for name, handle in handles.items():
            handle.write(bz2.compress(f"# started synthetic {name} seed={seed} entities={entities}\n".encode(), 1))
        # elquery's one pool: spawned workers (the caller may run a JVM) that die with this
        # process, a few chunks of compressed bytes held at a time; one process runs here.
        for compressed, counts, chunk_indexable, chunk_redirects in ordered_map(
                _chunk, ((task,) for task in _chunks(seed, entities, extras)), processes):
            for name, data in compressed.items():
                handles[name].write(data)
                triples[name] += counts[name]
            indexable += chunk_indexable
            redirects += chunk_redirects
        for name, handle in handles.items():
            handle.write(bz2.compress(f"# completed {name}\n".encode(), 1))
    finally:
        for handle in handles.values():
            handle.close()
    generated = GeneratedDumps(
        out_dir=out_dir,
        seed=seed,
        entities=entities,
        indexable=indexable,
        redirects=redirects,
        files=files,
        triples=triples,
        vocabulary=make_vocabulary(seed),
        seconds=time.monotonic() - started,
    )
    (out_dir / MANIFEST).write_text(json.dumps(generated.to_json(), indent=1), encoding="utf-8")
    return generated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=1_000_000, help="article entities (default 1,000,000)")
    parser.add_argument("--out", type=Path, required=True, help="directory for the .ttl.bz2 files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extras", action="store_true",
                        help="also write page_links_en, anchor_text_en and freebase_links_en")
    parser.add_argument("--processes", type=int, default=None, help="worker processes (default: cores)")
    parser.add_argument("--reuse", action="store_true", help="keep an existing output with the same parameters")
    args = parser.parse_args(argv)
    generated = generate(args.out, args.entities, args.seed, extras=args.extras, processes=args.processes,
                         reuse=args.reuse)
    print(json.dumps(generated.to_json()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
