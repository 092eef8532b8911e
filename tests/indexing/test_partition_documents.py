"""The count and write phases in Java (org.elquery.index.PartitionDocuments behind
entity_documents.count_predicates / partition_documents) against the Python code they replaced
(python_documents_reference): the same predicate counts, the same documents text for text (ids in
the same order, names, content, relations, the LTR fields and counts), and the same sub-index (ids,
exact lengths, counts, terms and postings), on the real DBpedia sample and on generated dumps with escapes, tabs and line ends in
values, non-ASCII and supplementary characters (whose order differs between code points and UTF-16
units), percent-encoded IRIs, Wikipedia namespaces, redirects, labels that differ from the URI
title, empty labels, labels of one subject in two files, IRIs other than DBpedia resources, and wiki
page links both in a file read whole and in one read for its links only."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from elquery.indexing.entity_documents import (
    LABELS_FILE,
    count_predicates,
    document_texts,
    is_link_dataset,
    is_skipped_dataset,
    load_labels,
    partition_documents,
    spill,
    title_text,
    top_predicates,
)
from elquery.kb.index_format import ENTITY_COUNTS, RELATIONS_FIELD, TEXT_FIELDS, TYPED_RELATIONS_FIELD
from elquery.kb.jvm import java_class
from elquery.indexing.lucene_writer import EntityIndexWriter
from elquery.indexing.ntriples import dump_files
from python_documents_reference import (  # tests/indexing, on the path as pytest loads it
    python_build_documents,
    python_count_predicates,
    python_field_texts,
    read_labels,
)
from test_dump_spiller import generated_dump

R = "http://dbpedia.org/resource/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
REDIRECTS = "http://dbpedia.org/ontology/wikiPageRedirects"
WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink"

_TITLES = ["Alpha", "A", "AB", "A!", "B_b", "Caf%C3%A9", "Caf\u00e9", "Caf%c3%a9_x", "%e2%82%ac", "%C3%28", "%F0%9F%98",
           "A%20B", "a%5Fb", "Int%27l_(x)", "Category:Cats", "File:X.png", "Draft:D", "Foo:Bar", "\U0001f600_x",
           "X\ue000", "X\U0001f600", "X\uffff", "\u00e9%C3%A9\u00e9", "Caf%E9"]
_OTHER_IRIS = ["http://example.org/a/b#frag", "http://example.org/path/", "http://example.org/x%C3%A9_y#",
               "http://dbpedia.org/ontology/Thing", "http://example.org/Category:Z", "http://example.org/#/#", "urn:x"]
_VALUES = ["plain", "caf\u00e9", "\U0001f600", "\ue000", "tab\there", "two\nlines", "cr\rlf\r\n", "back\\slash",
           "\\t not a tab", 'say "hi"', "", " ", "\u2028sep\u0085", "X\U0001f600", "X\ue000", "Alpha", "\t"]
_PREDICATES = [COMMENT, FOAF_NAME, "http://dbpedia.org/ontology/abstract", "http://dbpedia.org/ontology/p",
               "http://example.org/p\ue000", "http://example.org/p\U0001f600", "http://purl.org/dc/terms/subject", WIKI_LINK]


def _literal(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + escaped.replace("\t", "\\t") + '"'


def tricky_dump(seed: int, subjects: int = 40, lines: int = 1500) -> str:
    """Well-formed statements about a few subjects (so that each has many), with every case the
    module docstring names."""
    rng = random.Random(seed)
    titles = [rng.choice(_TITLES) + (f"_{k}" if rng.random() < 0.7 else "") for k in range(subjects)]
    iris = [R + t for t in titles]
    out = []
    for _ in range(lines):
        subject = rng.choice(iris)
        roll = rng.random()
        if roll < 0.15:
            label = rng.choice([title_text(subject), "", rng.choice(_VALUES), f"Label of {subject[len(R):]}"])
            out.append(f"<{subject}> <{LABEL}> {_literal(label)}{rng.choice(['', '@en'])} .")
        elif roll < 0.25:
            page = R + rng.choice(_TITLES) + f"_r{rng.randrange(30)}"
            out.append(f"<{page}> <{REDIRECTS}> <{subject}> .")
        elif roll < 0.55:
            out.append(f"<{subject}> <{rng.choice(_PREDICATES)}> {_literal(rng.choice(_VALUES))} .")
        else:
            target = rng.choice(iris) if rng.random() < 0.6 else rng.choice(_OTHER_IRIS)
            if rng.random() < 0.2:
                target = R + rng.choice(_TITLES) + f"_r{rng.randrange(30)}"  # a redirect page
            out.append(f"<{subject}> <{rng.choice(_PREDICATES[2:])}> <{target}> .")
    return "\n".join(out) + "\n"


def spilled(files: list[Path], work: Path, partitions: int,
            links_only: tuple[Path, ...] = ()) -> tuple[list[list[Path]], list[Path]]:
    """Each file spilled on its own (as the build does): the partition files, the labels files."""
    dirs = [work / f"f{k}" for k in range(len(files))]
    labels_files = [spill([f], d, partitions, links_only=links_only).labels_file for f, d in zip(files, dirs)]
    return [[d / f"part-{p:04d}.tsv" for d in dirs] for p in range(partitions)], labels_files


def assert_same_documents(parts: list[list[Path]], labels_files: list[Path]) -> int:
    """Counts and documents, Java vs Python, for all predicates and for the top few, with and
    without relations, with and without the LTR fields; returns the number of documents compared."""
    labels = read_labels(labels_files)
    compared = 0
    counts = python_count_predicates([f for p in parts for f in p])
    for files in parts:
        assert count_predicates(files) == python_count_predicates(files)
        for predicates in (frozenset(counts), frozenset(top_predicates(counts, 3))):
            for relations in (False, True):
                for ltr in (False, True):
                    java = document_texts(files, labels_files, predicates, relations=relations, ltr=ltr)
                    assert java == python_field_texts(files, labels, predicates, relations=relations, ltr=ltr)
                    compared += len(java)
    return compared


@pytest.mark.parametrize("partitions", [1, 4])
def test_sample_documents_equal_the_python_documents(dbpedia_sample: Path, tmp_path: Path, partitions: int) -> None:
    links = tuple(f for f in dump_files([dbpedia_sample]) if is_link_dataset(f))
    files = [f for f in dump_files([dbpedia_sample]) if not is_skipped_dataset(f)] + list(links)
    parts, labels_files = spilled(files, tmp_path, partitions, links)
    assert assert_same_documents(parts, labels_files) == 8 * 97
    documents = [d for p in parts for d in document_texts(p, labels_files, [], ltr=True)]
    assert all(d.links > 0 and d.wiki_links and d.long_abstract for d in documents)


@pytest.mark.parametrize("seed", range(4))
def test_tricky_documents_equal_the_python_documents(tmp_path: Path, seed: int) -> None:
    files = []
    for k in range(3):
        files.append(tmp_path / f"d{k}.ttl")
        files[-1].write_text(tricky_dump(seed * 3 + k), encoding="utf-8")
    parts, labels_files = spilled(files, tmp_path / "spill", 3, links_only=(files[2],))
    assert assert_same_documents(parts, labels_files) > 8 * 20
    # the dumps hold what they are meant to test
    labels = read_labels(labels_files)
    assert "" in labels.values() and any(v.startswith("Label of") for v in labels.values())
    texts = [d for p in parts for d in document_texts(p, labels_files, python_count_predicates(p), relations=True)]
    assert any("\U0001f600" in d.entity for d in texts) and any("\ue000" in d.entity for d in texts)
    assert any(d.relations for d in texts) and any("tab here" in d.content for d in texts)
    ltr = [d for p in parts for d in document_texts(p, labels_files, python_count_predicates(p), ltr=True)]
    assert any(d.redirects > 1 for d in ltr) and any(d.links > 1 for d in ltr) and any(d.categories for d in ltr)
    assert any("\n" in d.title for d in ltr) and any(d.long_abstract for d in ltr)


@pytest.mark.parametrize("seed", range(3))
def test_generated_dump_documents_equal_the_python_documents(tmp_path: Path, seed: int) -> None:
    """The spill tests' dumps (malformed lines, raw bytes, escapes of every kind)."""
    files = []
    for k in range(2):
        files.append(tmp_path / f"g{k}.ttl")
        files[-1].write_bytes(generated_dump(seed * 10 + k, 4000))
    parts, labels_files = spilled(files, tmp_path / "spill", 2)
    assert assert_same_documents(parts, labels_files) > 0


def test_documents_come_in_code_point_order(tmp_path: Path) -> None:
    """Python orders U+1F600 after U+E000 (code points); Java's String.compareTo would not."""
    dump = tmp_path / "d.ttl"
    lines = []
    for title in ("X\U0001f600", "X\ue000", "X", "X!"):
        lines += [f'<{R}{title}> <{LABEL}> "{title}" .', f'<{R}{title}> <{COMMENT}> "c" .']
    lines += [f'<{R}X> <{FOAF_NAME}> "\U0001f600" .', f'<{R}X> <{FOAF_NAME}> "\ue000" .']
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parts, labels_files = spilled([dump], tmp_path / "spill", 1)
    documents = document_texts(parts[0], labels_files, [COMMENT])
    assert [d.entity for d in documents] == ["<dbpedia:X!>", "<dbpedia:X>", "<dbpedia:X\ue000>", "<dbpedia:X\U0001f600>"]
    assert documents[1].names == "X\n\ue000\n\U0001f600"


def test_labels_of_a_later_file_win_and_empty_labels_fall_back(tmp_path: Path) -> None:
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text(f"{R}A\tFirst\n{R}B\tOnly\\tfirst\n{R}C\t\n", encoding="utf-8")
    second.write_text(f"{R}A\tSecond\n", encoding="utf-8")
    assert read_labels([first, second]) == {f"{R}A": "Second", f"{R}B": "Only\tfirst", f"{R}C": ""}
    assert load_labels([first, second]).size() == 3
    dump = tmp_path / "d.ttl"
    dump.write_text(
        f'<{R}E> <{LABEL}> "E" .\n<{R}E> <{COMMENT}> "c" .\n'
        + "".join(f"<{R}E> <http://p> <{R}{t}> .\n" for t in "ABCD"), encoding="utf-8")
    spill([dump], tmp_path / "spill", 1)
    [document] = document_texts([tmp_path / "spill" / "part-0000.tsv"], [first, second], ["http://p"])
    assert document.content == "Second\nOnly first\nC\nD"


def test_a_broken_partition_file_is_refused(tmp_path: Path) -> None:
    part = tmp_path / "part-0000.tsv"
    part.write_text(f"{R}A\tL\t{LABEL}\n", encoding="utf-8")
    (tmp_path / LABELS_FILE).write_text("", encoding="utf-8")
    with pytest.raises(Exception, match="not a spill line"):
        count_predicates([part])


def _index_digest(path: Path) -> str:
    """Every term of every field of a one-segment index with its postings (docids, positions),
    the stored fields and the length doc values."""
    directory = java_class("org.apache.lucene.store.FSDirectory").open(java_class("java.io.File")(str(path)).toPath())
    reader = java_class("org.apache.lucene.index.DirectoryReader").open(directory)
    no_more = java_class("org.apache.lucene.search.DocIdSetIterator").NO_MORE_DOCS
    positions_flag = java_class("org.apache.lucene.index.PostingsEnum").POSITIONS
    digest = hashlib.sha256()
    try:
        assert reader.leaves().size() == 1
        leaf = reader.leaves().get(0).reader()
        for field in (*TEXT_FIELDS, RELATIONS_FIELD, TYPED_RELATIONS_FIELD):
            walk = leaf.terms(field).iterator()
            while (term := walk.next()) is not None:
                enum = walk.postings(None, positions_flag)
                while (docid := enum.nextDoc()) != no_more:
                    positions = [enum.nextPosition() for _ in range(enum.freq())] if field in TEXT_FIELDS else []
                    digest.update(f"{field}\t{term.utf8ToString()}\t{docid}\t{positions}\n".encode())
        for name in (*(f"{f}_length" for f in (*TEXT_FIELDS, RELATIONS_FIELD)), *(f"{c}_count" for c in ENTITY_COUNTS)):
            values = leaf.getNumericDocValues(name)
            while (docid := values.nextDoc()) != no_more:
                digest.update(f"{name}\t{docid}\t{values.longValue()}\n".encode())
        stored = leaf.storedFields()
        for docid in range(reader.maxDoc()):
            document = stored.document(docid)
            digest.update(str([document.get(f) for f in ("id", *TEXT_FIELDS, RELATIONS_FIELD)]).encode())
    finally:
        reader.close()
    return digest.hexdigest()


@pytest.mark.parametrize("seed", range(2))
def test_written_partition_equals_the_python_documents_written(tmp_path: Path, seed: int) -> None:
    """One call per partition (ids, exact lengths and counts back in bulk) writes the index the
    Python documents written a batch at a time (the former write path) wrote, with the LTR fields."""
    dump = tmp_path / "d.ttl"
    dump.write_text(tricky_dump(100 + seed, subjects=120, lines=5000), encoding="utf-8")
    parts, labels_files = spilled([dump], tmp_path / "spill", 1)
    predicates = top_predicates(count_predicates(parts[0]), 4)
    java = EntityIndexWriter(tmp_path / "java", relations=True, ltr=True)
    java.add_partition(partition_documents(parts[0], load_labels(labels_files), predicates, relations=True, ltr=True))
    java.close(merge=True)
    python = EntityIndexWriter(tmp_path / "python", relations=True, ltr=True)
    python.add_all(python_build_documents(parts[0], read_labels(labels_files), frozenset(predicates), relations=True,
                                          ltr=True))
    python.close(merge=True)
    assert len(java.written.entities) > 50 and sum(java.written.counts["links"]) > 50
    assert set(java.written.lengths) == {*TEXT_FIELDS, RELATIONS_FIELD}
    assert java.written == python.written
    assert _index_digest(tmp_path / "java") == _index_digest(tmp_path / "python")


def test_a_writer_without_relations_refuses_documents_with_them(tmp_path: Path) -> None:
    dump = tmp_path / "d.ttl"
    dump.write_text(tricky_dump(7), encoding="utf-8")
    parts, labels_files = spilled([dump], tmp_path / "spill", 1)
    writer = EntityIndexWriter(tmp_path / "index")
    with pytest.raises(Exception, match="the writer takes 2 fields, the documents have 3"):
        writer.add_partition(partition_documents(parts[0], load_labels(labels_files), [COMMENT], relations=True))
    with pytest.raises(Exception, match="the writer takes 2 fields, the documents have 7"):
        writer.add_partition(partition_documents(parts[0], load_labels(labels_files), [COMMENT], ltr=True))
    writer.abort()
