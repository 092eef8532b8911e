"""Compiled loops (numba) of the surface-form build, over the buffers of pyarrow string arrays
(``offsets``: int32 or int64, n + 1 of them; ``data``: the UTF-8 bytes) and numpy arrays, where the
same work done with numpy or pyarrow takes a pass over the data per step, and in Python a call
per row:

- :func:`crc32_partitions`: zlib's CRC-32 of each string modulo the partitions (the partition of
  a normalized form, :func:`elquery.indexing.surface_forms.aggregate.partition_of`);
- :func:`fold_ascii`: ``normalize`` of ASCII strings (lowercase a-z and 0-9, every run of other
  bytes one space, none at the ends), each string that holds a byte above 127 flagged instead;
- :func:`join_tokens`: the same for code points that are folded already (NFKC and casefolded
  in Python), letters and digits told by a table, the strings separated by newlines;
- :func:`splice_strings`: those strings put back in the places of the strings that were not ASCII;
- :func:`space_counts`: the spaces in each string (the tokens of a normalized form, less one);
- :func:`json_strings`: strings as the text of a JSON array, for SQLite's ``json_each``;
- :func:`fixed_decimals`: numbers as zero-padded decimal digits, for SQLite's ``substr``;
- :func:`mid_codes_of`: the base-38 code of each ``/m/…`` mid
  (:func:`elquery.indexing.surface_forms.mid_numbers.mid_codes`);
- :func:`find_codes`: the lookup of :class:`elquery.indexing.surface_forms.mid_table.MidTable`;
- :func:`fill_candidates`: the candidate blobs of
  :func:`elquery.indexing.surface_forms.store_writer.encode_candidates`;
- :func:`sort_by_entity`: the (entity, form) keys of the store writer's pair files in order, by a
  counting sort on the entity (the pairs come in form order, so no comparison sort is needed).

They are compiled once and cached beside this module (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def _crc_table() -> np.ndarray:
    """The table of the reflected CRC-32 polynomial 0xEDB88320 (zlib's), a byte at a time."""
    table = np.zeros(256, np.int64)
    for byte in range(256):
        value = byte
        for _ in range(8):
            value = (value >> 1) ^ (0xEDB88320 if value & 1 else 0)
        table[byte] = value
    return table


_CRC_TABLE = _crc_table()
_FOLD = np.zeros(256, np.uint8)  # byte -> lowercase letter or digit, 0 for any other byte
_FOLD[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", np.uint8)] = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", np.uint8)
_FOLD[np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", np.uint8)] = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8)
_MID_DIGITS = np.zeros(256, np.int64)  # byte -> base-38 digit of a mid, 0 for a byte no mid holds
for _value, _char in enumerate(b"0123456789abcdefghijklmnopqrstuvwxyz_", 1):
    _MID_DIGITS[_char] = _value
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def crc32_partitions(offsets, data, partitions):
    """``zlib.crc32(string) % partitions`` of each string (int64)."""
    count = offsets.shape[0] - 1
    out = np.empty(count, np.int64)
    for row in range(count):
        crc = np.int64(0xFFFFFFFF)
        for at in range(offsets[row], offsets[row + 1]):
            crc = _CRC_TABLE[(crc ^ data[at]) & 0xFF] ^ (crc >> 8)
        out[row] = (crc ^ 0xFFFFFFFF) % partitions
    return out


@njit(cache=True, nogil=True)
def fold_ascii(offsets, data):
    """``normalize`` of each ASCII string: (the new offsets (int32), the bytes, whether each
    string holds a byte above 127: those are left empty, for ``normalize`` to do)."""
    count = offsets.shape[0] - 1
    out = np.empty(offsets[count] - offsets[0], np.uint8)
    ends = np.zeros(count + 1, np.int32)
    other = np.zeros(count, np.bool_)
    size = 0
    for row in range(count):
        start, stop = offsets[row], offsets[row + 1]
        first = size
        gap = False
        for at in range(start, stop):
            byte = data[at]
            if byte > 127:
                other[row] = True
                break
            kept = _FOLD[byte]
            if kept == 0:
                gap = True
            else:
                if gap and size > first:
                    out[size] = 32
                    size += 1
                out[size] = kept
                size += 1
                gap = False
        if other[row]:
            size = first
        ends[row + 1] = size
    return ends, out[:size], other


@njit(cache=True, nogil=True)
def join_tokens(points, ascii_alnum, others, others_alnum, count):
    """The tokens (runs of letters and digits) of each of ``count`` strings of code points
    (uint32), separated by newlines (10), joined by single spaces: (``count`` + 1 offsets (int64),
    the UTF-8 bytes). A code point below 128 is a letter or digit if ``ascii_alnum`` says so,
    another if it is one of ``others`` (sorted) whose ``others_alnum`` says so. None if the
    newlines are not ``count`` - 1."""
    out = np.empty(4 * points.shape[0], np.uint8)
    ends = np.zeros(count + 1, np.int64)
    size = 0
    string = 0
    started = gap = False
    for at in range(points.shape[0]):
        point = points[at]
        if point == 10:
            string += 1
            if string >= count:
                return None
            ends[string] = size
            started = gap = False
            continue
        if point < 128:
            alnum = ascii_alnum[point]
        else:
            slot = np.searchsorted(others, point)
            alnum = slot < others.shape[0] and others[slot] == point and others_alnum[slot]
        if not alnum:
            gap = True
            continue
        if gap and started:
            out[size] = 32
            size += 1
        started, gap = True, False
        if point < 0x80:
            out[size] = point
            size += 1
        elif point < 0x800:
            out[size] = 0xC0 | (point >> 6)
            out[size + 1] = 0x80 | (point & 0x3F)
            size += 2
        elif point < 0x10000:
            out[size] = 0xE0 | (point >> 12)
            out[size + 1] = 0x80 | ((point >> 6) & 0x3F)
            out[size + 2] = 0x80 | (point & 0x3F)
            size += 3
        else:
            out[size] = 0xF0 | (point >> 18)
            out[size + 1] = 0x80 | ((point >> 12) & 0x3F)
            out[size + 2] = 0x80 | ((point >> 6) & 0x3F)
            out[size + 3] = 0x80 | (point & 0x3F)
            size += 4
    if string != count - 1:
        return None
    ends[count] = size
    return ends, out[:size]


@njit(cache=True, nogil=True)
def splice_strings(offsets, data, replaced, new_offsets, new_data):
    """Strings ``offsets``/``data`` with the i-th of those flagged in ``replaced`` (in order) taken
    from ``new_offsets``/``new_data`` instead: (n + 1 offsets (int64), the bytes)."""
    count = replaced.shape[0]
    total = 0
    taken = 0
    for row in range(count):
        if replaced[row]:
            total += new_offsets[taken + 1] - new_offsets[taken]
            taken += 1
        else:
            total += offsets[row + 1] - offsets[row]
    out = np.empty(total, np.uint8)
    ends = np.zeros(count + 1, np.int64)
    size = 0
    taken = 0
    for row in range(count):
        if replaced[row]:
            for at in range(new_offsets[taken], new_offsets[taken + 1]):
                out[size] = new_data[at]
                size += 1
            taken += 1
        else:
            for at in range(offsets[row], offsets[row + 1]):
                out[size] = data[at]
                size += 1
        ends[row + 1] = size
    return ends, out


@njit(cache=True, nogil=True)
def space_counts(offsets, data):
    """The number of spaces (byte 32) in each string (int64)."""
    count = offsets.shape[0] - 1
    out = np.zeros(count, np.int64)
    for row in range(count):
        for at in range(offsets[row], offsets[row + 1]):
            if data[at] == 32:
                out[row] += 1
    return out


@njit(cache=True, nogil=True)
def json_strings(offsets, data):
    """The UTF-8 text of the JSON array of the strings ``data[offsets[i]:offsets[i + 1]]``
    (``["a","b"]``), or None if one holds a byte that JSON escapes (``"``, ``\\``, below 32)."""
    count = offsets.shape[0] - 1
    out = np.empty(offsets[count] - offsets[0] + 3 * count + 2, np.uint8)
    out[0] = 91
    size = 1
    for row in range(count):
        if row:
            out[size] = 44
            size += 1
        out[size] = 34
        size += 1
        for at in range(offsets[row], offsets[row + 1]):
            byte = data[at]
            if byte == 34 or byte == 92 or byte < 32:
                return None
            out[size] = byte
            size += 1
        out[size] = 34
        size += 1
    out[size] = 93
    return out[:size + 1]


@njit(cache=True, nogil=True)
def fixed_decimals(values, digits):
    """Each of ``values`` (below 10^digits, not negative) as ``digits`` ASCII digits, zero-padded,
    one after the other."""
    out = np.empty(values.shape[0] * digits, np.uint8)
    for row in range(values.shape[0]):
        value = values[row]
        for at in range((row + 1) * digits - 1, row * digits - 1, -1):
            out[at] = 48 + value % 10
            value //= 10
    return out


@njit(cache=True, nogil=True)
def mid_codes_of(offsets, data, prefix, most):
    """The code of each ``prefix`` + 1 to ``most`` characters of ``[0-9a-z_]`` (base 38, the
    characters' digits 1 to 37), or None if any string is not one."""
    count = offsets.shape[0] - 1
    width = prefix.shape[0]
    codes = np.empty(count, np.int64)
    for row in range(count):
        start, stop = offsets[row], offsets[row + 1]
        length = stop - start - width
        if length < 1 or length > most:
            return None
        for at in range(width):
            if data[start + at] != prefix[at]:
                return None
        code = np.int64(0)
        for at in range(start + width, stop):
            digit = _MID_DIGITS[data[at]]
            if digit == 0:
                return None
            code = code * 38 + digit
        for _ in range(most - length):
            code *= 38
        codes[row] = code
    return codes


@njit(cache=True, nogil=True)
def find_codes(codes, keys, values, bits):
    """The value of each code in the open-addressing table (``keys``, ``values``; 2^bits slots,
    empty slots -1, linear probing from the top bits of ``code * 2^64 / phi``), -1 where absent."""
    found = np.full(codes.shape[0], -1, np.int64)
    mask = keys.shape[0] - 1
    for row in range(codes.shape[0]):
        code = codes[row]
        if code < 0:
            continue
        slot = 0 if bits == 0 else np.int64((np.uint64(code) * _GOLDEN) >> np.uint64(64 - bits))
        while True:
            key = keys[slot]
            if key == code:
                found[row] = values[slot]
                break
            if key == -1:
                break
            slot = (slot + 1) & mask
    return found


@njit(cache=True, nogil=True)
def fill_candidates(out, begins, starts, words, facc, anchors, facc_widths, anchor_widths):
    """Write each form's candidates (its pairs ``starts[f]:starts[f + 1]``) from ``out[begins[f] + 1]``:
    the entity words (4 bytes each), then the FACC counts, then the anchor counts, little-endian
    in the form's widths (bytes); the header byte is the caller's."""
    for form in range(starts.shape[0] - 1):
        first, last = starts[form], starts[form + 1]
        size = last - first
        at = begins[form] + 1
        fw, aw = facc_widths[form], anchor_widths[form]
        for pair in range(first, last):
            rank = pair - first
            word = words[pair]  # int64
            base = at + 4 * rank
            for byte in range(4):
                out[base + byte] = (word >> (8 * byte)) & 255
            value = facc[pair]
            base = at + 4 * size + fw * rank
            for byte in range(fw):
                out[base + byte] = (value >> (8 * byte)) & 255
            value = anchors[pair]
            base = at + (4 + fw) * size + aw * rank
            for byte in range(aw):
                out[base + byte] = (value >> (8 * byte)) & 255


@njit(cache=True, nogil=True)
def _sort_run(keys, values, first, last):
    """Sort ``keys[first:last]`` in place, ``values`` along (insertion sort for a few, else argsort)."""
    if last - first > 16:
        order = np.argsort(keys[first:last]) + first
        keys[first:last], values[first:last] = keys[order], values[order]
        return
    for at in range(first + 1, last):
        key, value = keys[at], values[at]
        before = at - 1
        while before >= first and keys[before] > key:
            keys[before + 1], values[before + 1] = keys[before], values[before]
            before -= 1
        keys[before + 1], values[before + 1] = key, value


@njit(cache=True, nogil=True)
def sum_pairs(forms, entities, sources, counts, form_count, facc_source, anchor_source):
    """Rows (form number below ``form_count``, entity, source below 4, count) summed per (form,
    entity) and source: the pairs in (form, entity) order and, per pair, the sum of its FACC
    rows, of its anchor rows and of its other (KB) rows. The rows are put in form order by a
    counting sort (as ``entity << 2 | source`` keys and counts) and each form's rows sorted."""
    size = forms.shape[0]
    starts = np.zeros(form_count + 1, np.int64)
    for row in range(size):
        starts[forms[row] + 1] += 1
    for form in range(form_count):
        starts[form + 1] += starts[form]
    free = starts[:-1].copy()
    keys = np.empty(size, np.int64)
    values = np.empty(size, np.int64)
    for row in range(size):
        at = free[forms[row]]
        keys[at], values[at] = entities[row] << 2 | sources[row], counts[row]
        free[forms[row]] = at + 1
    pair_forms = np.empty(size, np.int64)
    pair_entities = np.empty(size, np.int64)
    facc = np.zeros(size, np.int64)
    anchors = np.zeros(size, np.int64)
    kb = np.zeros(size, np.int64)
    pairs = 0
    for form in range(form_count):
        first, last = starts[form], starts[form + 1]
        _sort_run(keys, values, first, last)
        entity = -1
        for at in range(first, last):
            if keys[at] >> 2 != entity:
                entity = keys[at] >> 2
                pair_forms[pairs], pair_entities[pairs] = form, entity
                pairs += 1
            source = keys[at] & 3
            if source == facc_source:
                facc[pairs - 1] += values[at]
            elif source == anchor_source:
                anchors[pairs - 1] += values[at]
            else:
                kb[pairs - 1] += values[at]
    return pair_forms[:pairs], pair_entities[:pairs], facc[:pairs], anchors[:pairs], kb[:pairs]


@njit(cache=True, nogil=True)
def candidate_order_of(forms, counts, ranks):
    """The order of pairs by form (``forms`` ascending), then count descending, then rank (each
    (form, rank) once): each form's pairs sorted where they stand (insertion sort for a few, else
    a sort by rank and a stable one by count)."""
    size = forms.shape[0]
    order = np.arange(size)
    first = 0
    while first < size:
        last = first + 1
        while last < size and forms[last] == forms[first]:
            last += 1
        if last - first > 16:
            group = order[first:last]
            group = group[np.argsort(ranks[group], kind="mergesort")]
            group = group[np.argsort(-counts[group], kind="mergesort")]
            order[first:last] = group
        else:
            for at in range(first + 1, last):
                pair = order[at]
                count, rank = counts[pair], ranks[pair]
                before = at - 1
                while before >= first and (counts[order[before]] < count
                                           or (counts[order[before]] == count and ranks[order[before]] > rank)):
                    order[before + 1] = order[before]
                    before -= 1
                order[before + 1] = pair
        first = last
    return order


@njit(cache=True, nogil=True)
def rows_by_partition(offsets, data, row_partitions, partitions, entities, counts):
    """The rows (strings, entities, counts) put in partition order, row order kept within a
    partition (a counting sort): (where each partition's rows start, n + 1 offsets (int64)
    into the strings' bytes as moved, those bytes, the entities, the counts)."""
    count = row_partitions.shape[0]
    row_starts = np.zeros(partitions + 1, np.int64)
    byte_starts = np.zeros(partitions + 1, np.int64)
    for row in range(count):
        row_starts[row_partitions[row] + 1] += 1
        byte_starts[row_partitions[row] + 1] += offsets[row + 1] - offsets[row]
    for partition in range(partitions):
        row_starts[partition + 1] += row_starts[partition]
        byte_starts[partition + 1] += byte_starts[partition]
    next_row, next_byte = row_starts[:-1].copy(), byte_starts[:-1].copy()
    ends = np.empty(count, np.int64)
    out = np.empty(byte_starts[partitions], np.uint8)
    out_entities = np.empty(count, entities.dtype)
    out_counts = np.empty(count, counts.dtype)
    for row in range(count):
        partition = row_partitions[row]
        at, start = next_row[partition], next_byte[partition]
        for byte in range(offsets[row], offsets[row + 1]):
            out[start] = data[byte]
            start += 1
        ends[at], out_entities[at], out_counts[at] = start, entities[row], counts[row]
        next_row[partition], next_byte[partition] = at + 1, start
    moved = np.empty(count + 1, np.int64)
    moved[0] = 0
    moved[1:] = ends  # partitions are contiguous: one's last end is the next one's start
    return row_starts, moved, out, out_entities, out_counts


@njit(cache=True, nogil=True)
def sort_by_entity(keys, first, end):
    """``np.sort(keys)`` of keys ``entity << 32 | form`` (uint64) whose entities are ``first`` to
    ``end - 1`` and whose forms ascend among the keys of each entity (keys in form order, or runs
    in that order whose forms are above those of the runs before): a stable counting sort on the
    entity, one pass to count and one to place."""
    starts = np.zeros(end - first + 1, np.int64)
    for at in range(keys.shape[0]):
        starts[np.int64(keys[at] >> np.uint64(32)) - first + 1] += 1
    for entity in range(end - first):
        starts[entity + 1] += starts[entity]
    out = np.empty_like(keys)
    for at in range(keys.shape[0]):
        slot = np.int64(keys[at] >> np.uint64(32)) - first
        out[starts[slot]] = keys[at]
        starts[slot] += 1
    return out


def warm_kernels() -> None:
    """Set numba up in this process (its first call costs about half a second of CPU: a worker
    pays it while it would otherwise wait) and load one loop from the cache."""
    crc32_partitions(np.zeros(2, np.int32), np.zeros(1, np.uint8), 2)


@njit(cache=True, nogil=True)
def positive_counts(offsets, data, most_digits):
    """The value of each string if every one is 1 to ``most_digits`` ASCII digits and not 0
    (int64), else None."""
    count = offsets.shape[0] - 1
    values = np.empty(count, np.int64)
    for row in range(count):
        start, stop = offsets[row], offsets[row + 1]
        if stop - start < 1 or stop - start > most_digits:
            return None
        value = np.int64(0)
        for at in range(start, stop):
            digit = np.int64(data[at]) - 48
            if digit < 0 or digit > 9:
                return None
            value = value * 10 + digit
        if value == 0:
            return None
        values[row] = value
    return values
