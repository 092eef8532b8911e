"""The compiled loops of the surface-form build give what the Python they replace gives:
``partitions_of`` the CRC-32 partition of ``partition_of`` (zlib) for each form, ASCII or not,
empty, on a slice and on a large-string array; ``arrow_mid_codes`` the codes of ``mid_codes``, and
None as soon as one id is not a canonical mid; ``sum_pairs`` the sums per (form, entity) and source
of a sort of the packed keys, for forms with a few rows and with many; ``rows_by_partition`` the
rows of a stable sort by partition, strings included; ``sort_by_entity`` numpy's sort of (entity,
form) keys that come in form order, or in runs of rising forms."""

from __future__ import annotations

import random
import zlib

import numpy as np
import pyarrow as pa
import pytest

from elquery.indexing.surface_forms.aggregate import SOURCE_ANCHORS, SOURCE_FACC, SOURCE_KB, partition_of, partitions_of
from elquery.indexing.surface_forms.kernels import rows_by_partition, sort_by_entity, sum_pairs
from elquery.indexing.surface_forms.mid_numbers import MAX_CODE_CHARS, arrow_mid_codes, mid_codes


def _forms() -> list[str]:
    rng = random.Random(11)
    alphabet = "ab z09é東ß\x00\x7f"
    return ["", "a", "new york", "東京", *("".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(3000))]


@pytest.mark.parametrize("partitions", [1, 2, 27, 61, 65_536])
def test_partitions_as_zlib(partitions: int) -> None:
    forms = _forms()
    expected = [zlib.crc32(form.encode("utf-8")) % partitions for form in forms]
    assert expected == [partition_of(form, partitions) for form in forms]
    assert partitions_of(pa.array(forms, pa.string()), partitions).tolist() == expected
    assert partitions_of(pa.array(forms, pa.large_string()), partitions).tolist() == expected
    assert partitions_of(pa.array(forms, pa.string()).slice(7, 100), partitions).tolist() == expected[7:107]
    assert partitions_of(pa.array([], pa.string()), partitions).tolist() == []


def test_mid_codes_from_buffers() -> None:
    rng = random.Random(5)
    chars = "0123456789abcdefghijklmnopqrstuvwxyz_"
    mids = ["/m/0", "/m/_", "/m/" + "z" * MAX_CODE_CHARS,
            *("/m/" + "".join(rng.choice(chars) for _ in range(rng.randint(1, MAX_CODE_CHARS))) for _ in range(2000))]
    codes = arrow_mid_codes(pa.array(mids, pa.string()))
    assert codes is not None and codes.tolist() == mid_codes(mids).tolist()
    assert len(np.unique(codes)) == len(set(mids))
    sliced = arrow_mid_codes(pa.array(mids, pa.string()).slice(3, 50))
    assert sliced is not None and sliced.tolist() == mid_codes(mids[3:53]).tolist()
    assert arrow_mid_codes(pa.array([], pa.string())).tolist() == []
    for bad in ("/m/", "/m/" + "a" * (MAX_CODE_CHARS + 1), "/m/0A", "/m/0-", "m.0abc", "/n/0abc", "/m/é", "", None):
        assert arrow_mid_codes(pa.array(["/m/0abc", bad], pa.string())) is None, bad


@pytest.mark.parametrize("form_count", [1, 30, 5_000])
def test_sum_pairs_as_a_sort(form_count: int) -> None:
    rng = np.random.default_rng(form_count)
    rows = 20_000
    forms = rng.integers(0, form_count, rows)
    forms[:form_count] = np.arange(form_count)  # every form has a row
    entities = rng.integers(0, 60, rows)
    sources = rng.choice([SOURCE_FACC, SOURCE_ANCHORS, SOURCE_KB], rows).astype(np.int8)
    counts = rng.integers(1, 1_000, rows)
    keys = (forms << 32 | entities) << 2 | sources
    distinct, where = np.unique(keys, return_inverse=True)
    sums = np.bincount(where, weights=counts).astype(np.int64)
    pairs = np.unique(distinct >> 2)
    expected = {source: np.zeros(len(pairs), np.int64) for source in (SOURCE_FACC, SOURCE_ANCHORS, SOURCE_KB)}
    for key, total in zip(distinct.tolist(), sums.tolist()):
        expected[key & 3][np.searchsorted(pairs, key >> 2)] = total
    got = sum_pairs(forms, entities, sources, counts, form_count, SOURCE_FACC, SOURCE_ANCHORS)
    assert got[0].tolist() == (pairs >> 32).tolist() and got[1].tolist() == (pairs & 0xFFFFFFFF).tolist()
    for array, source in zip(got[2:], (SOURCE_FACC, SOURCE_ANCHORS, SOURCE_KB)):
        assert array.tolist() == expected[source].tolist()


@pytest.mark.parametrize("partitions", [1, 5, 300])
def test_rows_by_partition_as_a_stable_sort(partitions: int) -> None:
    forms = pa.array(_forms(), pa.string()).slice(2)
    rng = np.random.default_rng(partitions)
    row_partitions = rng.integers(0, partitions, len(forms))
    entities, counts = rng.integers(0, 1000, len(forms)), rng.integers(1, 50, len(forms))
    offsets = np.frombuffer(forms.buffers()[1], np.int32, len(forms) + 1, forms.offset * 4)
    starts, moved, data, moved_entities, moved_counts = rows_by_partition(
        offsets, np.frombuffer(forms.buffers()[2], np.uint8), row_partitions, partitions, entities, counts)
    order = np.argsort(row_partitions, kind="stable")
    assert starts.tolist() == np.searchsorted(row_partitions[order], np.arange(partitions + 1)).tolist()
    texts = forms.to_pylist()
    assert [bytes(data[a:b]).decode() for a, b in zip(moved[:-1], moved[1:])] == [texts[i] for i in order.tolist()]
    assert moved_entities.tolist() == entities[order].tolist() and moved_counts.tolist() == counts[order].tolist()


@pytest.mark.parametrize("entity_span", [1, 7, 100_000])
def test_sort_by_entity_as_numpy(entity_span: int) -> None:
    rng = np.random.default_rng(entity_span)
    first = 5_000
    # a shard's pairs: forms ascending, several entities a form (each once), in no entity order
    forms = np.sort(rng.integers(0, 3_000, 20_000))
    entities = rng.integers(first, first + entity_span, len(forms))
    keys = np.unique(entities.astype(np.uint64) << np.uint64(32) | forms.astype(np.uint64))
    in_form_order = keys[np.lexsort((keys >> np.uint64(32), keys & np.uint64(0xFFFFFFFF)))]
    assert sort_by_entity(in_form_order, first, first + entity_span).tolist() == np.sort(keys).tolist()
    # runs of shards, each sorted by (entity, form), the forms of each run above those of the runs before
    runs = [np.sort(rng.integers(first, first + entity_span, 500).astype(np.uint64) << np.uint64(32)
                    | rng.integers(0, 1_000, 500).astype(np.uint64) + np.uint64(1_000 * run)) for run in range(4)]
    joined = np.concatenate(runs)
    assert sort_by_entity(joined, first, first + entity_span).tolist() == np.sort(joined).tolist()
    assert sort_by_entity(np.zeros(0, np.uint64), first, first + 1).tolist() == []
