"""The numba kernels of the compiled forest engine (:class:`elquery.linking.ltr.forest.CompiledEngine`).

Binned rows. Per feature, the forest's thresholds for it (each the largest float32 not above the
float64 threshold, which decides ``float32(x) <= t`` exactly) sorted and distinct: a row's value x
becomes its bin, the number of those thresholds below x (all of them for NaN), so that
``x <= thresholds[j]`` iff ``bin <= j``: a split compares small integers exactly as scikit-learn
compares the floats (:func:`bin_rows`, a search among every 16th threshold, then among 16). The
bins are int16 when no feature has more than 32,767 distinct thresholds (the full-scale
benchmark's forest), else int32.

Nodes. One uint64 word per split, no word for a leaf (:func:`compact`): the feature (:data:`FEATURE_BITS`),
whether the left and the right child are leaves, the threshold's number j among the feature's
(:data:`BIN_BITS`), then the right child (:data:`RIGHT_BITS`: its offset from the split, or, for a
leaf, the number of its value among the forest's distinct leaf values) and the left child's value
number when it is a leaf (:data:`SLOT_BITS`). Splits are in depth-first order, a split's left child
(when a split) the next word. A 1,000-tree forest of 1.86M splits takes 14.9 MB.

Walk (:func:`walk`). Node-major over rows: a block of trees at a time for up to :data:`LANE_ROWS`
rows, every (split, rows reaching it) pair of a level of the block's trees is one entry, the rows a
bit mask; a split's comparison is one vector compare of the rows' bins (``bins <= j`` for 64
rows, or for 32 when a group has no more: half the bytes read and compared), its rows split into the left and right masks; a child split with rows becomes an entry of
the next level (its node prefetched), a leaf child writes its value number for its rows (one
vector blend). The rows of a query travel together (a 51-row query visits about 200 splits a tree
where its rows take 1,100 steps), so a split's work is shared by all the rows that reach it. A
single row (a batch of one, or a last group of one) walks the block's trees in lockstep instead,
a scalar compare a step. Leaf values are then added tree by tree, in order (scikit-learn's sum).
The walk is bound by its instructions, not by memory: at 1M (51 rows, 210,000 entries a query, 43%
of them of one row) a tree takes 1.47 us walked once in the forest's order and 1.41 us with its
nodes in the caches; walking single rows' entries as scalar walks instead gave no gain.

Two threads (:func:`walk_front`, :func:`walk_back`): the blocks of trees of one batch taken one at a
time with a compare-and-swap on one word, the caller's from the front (added in order as they
come), the other thread's from the back (value numbers kept per tree, added by the caller after
its own, in order), so that neither waits for the other but at the end, for one block at most.

LLVM's x86 pass that turns a conditional move on a loop's critical path back into a branch is
switched off here on x86 (``--x86-cmov-converter=false``, a code-generation heuristic of this
process: it changes no result), as it would put mispredicted branches into the searches of
:func:`bin_rows`.
"""

from __future__ import annotations

import platform
from typing import Any

import llvmlite.binding
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from elquery.linking.ltr.forest import LANE_ROWS  # rows walked together: a 64-bit mask

if platform.machine().lower() in ("x86_64", "amd64"):  # an option LLVM knows on x86 only
    llvmlite.binding.set_option("elquery", "--x86-cmov-converter=false")

FEATURE_BITS, BIN_BITS, RIGHT_BITS, SLOT_BITS = 6, 20, 20, 16
"""A split's fields, in this order from the low bits, after the feature: two leaf flags."""
LEFT_LEAF, RIGHT_LEAF = FEATURE_BITS, FEATURE_BITS + 1
BIN_SHIFT = FEATURE_BITS + 2
RIGHT_SHIFT = BIN_SHIFT + BIN_BITS
SLOT_SHIFT = RIGHT_SHIFT + RIGHT_BITS
FENCE = 16
""":func:`bin_rows` searches every FENCE-th threshold of a feature first."""
assert SLOT_SHIFT + SLOT_BITS == 64

_U = np.uint64
_ZERO, _ONE, _TWO, _SIX = _U(0), _U(1), _U(2), _U(6)
_FEATURE = _U((1 << FEATURE_BITS) - 1)
_BIN = _U((1 << BIN_BITS) - 1)
_RIGHT = _U((1 << RIGHT_BITS) - 1)
_LEFT_LEAF, _RIGHT_LEAF = _U(LEFT_LEAF), _U(RIGHT_LEAF)
_BIN_SHIFT, _RIGHT_SHIFT, _SLOT_SHIFT = _U(BIN_SHIFT), _U(RIGHT_SHIFT), _U(SLOT_SHIFT)
_LOW = _U(0xFFFFFFFF)
_TREE_SHIFT = _U(32)
assert LANE_ROWS == 1 << 6  # _SIX
HALF_ROWS = LANE_ROWS // 2


def _item_pointer(context: Any, builder: Any, array_type: Any, array: Any, index: Any) -> Any:
    return cgutils.get_item_pointer(context, builder, array_type, context.make_array(array_type)(context, builder, array),
                                    [index])


def _splat(builder: Any, value: Any, count: int) -> Any:
    vector_type = ir.VectorType(value.type, count)
    first = builder.insert_element(ir.Constant(vector_type, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(first, ir.Constant(vector_type, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))


@intrinsic
def _prefetch(typingctx: Any, array: Any, index: Any) -> Any:
    """Ask the CPU to bring ``array[index]`` into the caches (LLVM's ``llvm.prefetch``; no effect
    on any result)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        pointer = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        byte_pointer = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        int32 = ir.IntType(32)
        name = "llvm.prefetch.p0" if getattr(byte_pointer.type, "is_opaque", False) else "llvm.prefetch.p0i8"
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer.type, int32, int32, int32]), name)
        builder.call(function, [byte_pointer, int32(0), int32(3), int32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.void(array, index), codegen


@intrinsic
def _at_most(typingctx: Any, bins: Any, offset: Any, bound: Any, lanes: Any) -> Any:
    """The mask of the lanes r < ``lanes`` (a constant: :data:`LANE_ROWS` or :data:`HALF_ROWS`) with
    ``bins[offset + r] <= bound`` (int16 or int32 bins): one vector compare."""
    count = getattr(lanes, "literal_value", None)
    if count not in (LANE_ROWS, HALF_ROWS):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        pointer = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        element = context.get_value_type(signature.args[0].dtype)
        vector_type = ir.VectorType(element, count)
        loaded = builder.load(builder.bitcast(pointer, vector_type.as_pointer()), align=element.width // 8)
        below = builder.icmp_signed("<=", loaded, _splat(builder, builder.trunc(args[2], element), count))
        return builder.zext(builder.bitcast(below, ir.IntType(count)), ir.IntType(64)) if count < 64 else \
            builder.bitcast(below, ir.IntType(64))

    return types.uint64(bins, offset, bound, lanes), codegen


@intrinsic
def _fill(typingctx: Any, slots: Any, offset: Any, leaves: Any, left: Any, left_value: Any, right_value: Any) -> Any:
    """For each bit r of the mask ``leaves``: ``slots[offset + r]`` = ``left_value`` if bit r of
    ``left`` is set, else ``right_value``; the other lanes keep theirs (a vector blend: read,
    select, write the :data:`LANE_ROWS` lanes)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        element = context.get_value_type(signature.args[0].dtype)
        pointer = builder.bitcast(_item_pointer(context, builder, signature.args[0], args[0], args[1]),
                                  ir.VectorType(element, LANE_ROWS).as_pointer())
        bits = ir.VectorType(ir.IntType(1), LANE_ROWS)
        value = builder.select(builder.bitcast(args[3], bits), _splat(builder, builder.trunc(args[4], element), LANE_ROWS),
                               _splat(builder, builder.trunc(args[5], element), LANE_ROWS))
        kept = builder.load(pointer, align=element.width // 8)
        builder.store(builder.select(builder.bitcast(args[2], bits), value, kept), pointer, align=element.width // 8)
        return context.get_dummy_value()

    return types.void(slots, offset, leaves, left, left_value, right_value), codegen


@intrinsic
def _compare_and_swap(typingctx: Any, array: Any, index: Any, expected: Any, wanted: Any) -> Any:
    """``array[index]`` (int64) set to ``wanted`` if it is ``expected``, atomically; its value
    before (LLVM's ``cmpxchg``, sequentially consistent)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        pointer = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        pair = builder.cmpxchg(pointer, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return types.int64(array, index, types.int64, types.int64), codegen


@intrinsic
def _load_acquire(typingctx: Any, array: Any, index: Any) -> Any:
    """``array[index]`` (int64) read atomically, with acquire ordering: what another thread wrote
    before its release store of this value is seen."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        pointer = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(pointer, "acquire", 8)

    return types.int64(array, index), codegen


@intrinsic
def _store_release(typingctx: Any, array: Any, index: Any, value: Any) -> Any:
    """``array[index]`` (int64) = ``value``, atomically, with release ordering."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        pointer = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store_atomic(context.cast(builder, args[2], signature.args[2], types.int64), pointer, "release", 8)
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


@intrinsic
def _cycles(typingctx: Any) -> Any:
    """The CPU's cycle counter (LLVM's ``llvm.readcyclecounter``: the time-stamp counter on x86;
    0 where the target has none)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                                  "llvm.readcyclecounter")
        return builder.call(function, [])

    return types.int64(), codegen


@njit(cache=True, nogil=True)
def compact(roots, features, bins, true_ids, true_leaf, false_ids, false_leaf, leaf_slots):
    """The splits of a forest given as ONNX TreeEnsemble arrays (``bins``: each split's threshold
    number among its feature's, ``leaf_slots``: each leaf's value number) in depth-first order,
    left first: per split its feature, bin, whether its left / right child is a leaf, its right
    field (the right child's offset, or its value number) and its left value number; and the
    position of each tree's root."""
    count = features.shape[0]
    feature = np.zeros(count, np.int64)
    threshold = np.zeros(count, np.int64)
    left_leaf = np.zeros(count, np.int64)
    right_leaf = np.zeros(count, np.int64)
    right = np.zeros(count, np.int64)
    left_slot = np.zeros(count, np.int64)
    positions = np.empty(roots.shape[0], np.int64)
    stack = np.empty(64, np.int64)
    parent = np.empty(64, np.int64)
    at = 0
    for tree in range(roots.shape[0]):
        positions[tree] = at
        stack[0], parent[0] = roots[tree], -1
        top = 1
        while top > 0:
            top -= 1
            node, up = stack[top], parent[top]
            if up >= 0:
                right[up] = at - up
            feature[at], threshold[at] = features[node], bins[node]
            if top + 2 > stack.shape[0]:  # depth-first: the stack grows with the depth only
                stack = np.concatenate((stack, np.empty_like(stack)))
                parent = np.concatenate((parent, np.empty_like(parent)))
            if false_leaf[node]:
                right_leaf[at], right[at] = 1, leaf_slots[false_ids[node]]
            else:
                stack[top], parent[top] = false_ids[node], at
                top += 1
            if true_leaf[node]:
                left_leaf[at], left_slot[at] = 1, leaf_slots[true_ids[node]]
            else:
                stack[top], parent[top] = true_ids[node], -1
                top += 1
            at += 1
    return feature[:at], threshold[:at], left_leaf[:at], right_leaf[:at], right[:at], left_slot[:at], positions


@njit(cache=True, nogil=True)
def _below(values, first, count, x):
    """How many of the sorted ``values[first:first + count]`` are below x."""
    if count == 0:
        return 0
    base, length = first, count
    while length > 1:
        half = length >> 1
        if values[base + half] < x:
            base += half
        length -= half
    return base - first + (1 if values[base] < x else 0)


@njit(cache=True, nogil=True)
def bin_rows(rows, thresholds, starts, fences, fence_starts, bins):
    """Each row's bin per feature into ``bins[(r // LANE_ROWS, feature, r % LANE_ROWS)]`` (flat
    int16 or int32): the number of the feature's thresholds (``thresholds[starts[f]:starts[f + 1]]``, sorted)
    below the value, all of them for NaN; ``fences`` every :data:`FENCE`-th of them."""
    count, width = rows.shape
    for feature in range(width):
        first, total = starts[feature], starts[feature + 1] - starts[feature]
        fence_first, fence_count = fence_starts[feature], fence_starts[feature + 1] - fence_starts[feature]
        last, last_bin = np.float32(np.nan), 0
        for row in range(count):
            x = rows[row, feature]
            if x == last:  # the rows of a query often share a value
                found = last_bin
            elif x != x:
                found = total
            else:
                blocks = _below(fences, fence_first, fence_count, x)  # blocks whose first threshold is below x
                found = 0
                if blocks > 0:
                    block = (blocks - 1) * FENCE
                    found = block + _below(thresholds, first + block, min(FENCE, total - block), x)
            bins[(row // LANE_ROWS * width + feature) * LANE_ROWS + row % LANE_ROWS] = found
            last, last_bin = x, found


@njit(cache=True, nogil=True)
def walk(nodes, roots, values, bins, width, first_row, count, tree_block, slots, totals):
    """Rows ``first_row`` to ``first_row + count`` (a multiple of :data:`LANE_ROWS` first) of the
    binned rows ``bins`` (``width`` features) through the trees of ``roots``: each row's leaf
    value added to ``totals[row - first_row]`` tree by tree, in order (scikit-learn's sum).
    ``slots`` (uint8 or uint16, ``tree_block * LANE_ROWS + 1``) holds the value numbers of a block
    (the last one written by the walks not at a leaf yet)."""
    entries, walks = _scratch(count, tree_block)
    no_trees = slots[:0].reshape((0, 0))  # no value numbers kept per tree: the values are added
    for first in range(0, roots.shape[0], tree_block):
        _walk_block(nodes, roots, values, bins, width, first_row, count, first, tree_block, slots, totals, no_trees,
                    False, entries, walks)


@njit(cache=True, nogil=True)
def walk_front(nodes, roots, values, bins, width, count, tree_block, slots, totals, per_tree, claims, done, patience):
    """The caller's side of a batch walked on two threads (rows 0 to ``count``), the trees in blocks
    of ``tree_block``, block b ``roots[b * tree_block:(b + 1) * tree_block]``. ``claims[0]``: the
    next block from the front (low 32 bits) and the end of those not taken from the back (high 32
    bits), set to (1, blocks) before either side starts: block 0 is the caller's. The caller takes
    blocks from the front, one compare-and-swap each, and adds their leaf values to ``totals`` tree
    by tree; :func:`walk_back`, on the other thread, takes them from the back, writes their value
    numbers to ``per_tree`` and sets ``done[b]``. Where the two meet, the caller adds the rest
    tree by tree from ``per_tree``, in order (scikit-learn's sum), waiting for a block the other
    thread has not done yet at most ``patience`` times its own time per block (time-stamp
    counter), then walking the block itself (the other thread lost its core). Returns the blocks
    the caller walked."""
    blocks = (roots.shape[0] + tree_block - 1) // tree_block
    entries, walks = _scratch(count, tree_block)
    start = _cycles()
    block, walked = 0, 0
    while block >= 0:
        _walk_block(nodes, roots, values, bins, width, 0, count, block * tree_block, tree_block, slots, totals,
                    per_tree, False, entries, walks)
        walked += 1
        block = _take(claims, True)
    wait = patience * (_cycles() - start) / walked
    met = _take(claims, True, True)
    for block in range(met, blocks):
        since = _cycles()
        while _load_acquire(done, block) == 0:
            if _cycles() - since > wait:
                _walk_block(nodes, roots, values, bins, width, 0, count, block * tree_block, tree_block, slots, totals,
                            per_tree, True, entries, walks)
                walked += 1
                break
        for tree in range(block * tree_block, min((block + 1) * tree_block, roots.shape[0])):
            for row in range(count):
                totals[row] += values[per_tree[tree, row]]
    return walked


@njit(cache=True, nogil=True)
def walk_back(nodes, roots, values, bins, width, count, tree_block, slots, per_tree, claims, done):
    """The other thread's side of :func:`walk_front`: blocks taken from the back until the two
    sides meet, each block's value numbers written to ``per_tree``, then ``done[block]`` set.
    Returns the blocks it walked."""
    entries, walks = _scratch(count, tree_block)
    no_totals = np.empty(0)
    walked = 0
    block = _take(claims, False)
    while block >= 0:
        _walk_block(nodes, roots, values, bins, width, 0, count, block * tree_block, tree_block, slots, no_totals,
                    per_tree, True, entries, walks)
        _store_release(done, block, 1)
        walked += 1
        block = _take(claims, False)
    return walked


@njit(cache=True, nogil=True)
def _take(claims, front, where=False):
    """The next block from the front or the back of ``claims[0]`` (:func:`walk_front`), -1 when
    the two sides have met; with ``where``, the block where they meet (nothing taken)."""
    while True:
        now = _load_acquire(claims, 0)
        first, end = now & 0xFFFFFFFF, now >> 32
        if where:
            return first
        if first >= end:
            return -1
        wanted = (first + 1) | (end << 32) if front else first | ((end - 1) << 32)
        if _compare_and_swap(claims, 0, now, wanted) == now:
            return first if front else end - 1


@njit(cache=True, nogil=True)
def _scratch(count, tree_block):
    """The level entries and the single walks of :func:`_walk_block` for ``count`` rows."""
    capacity = tree_block * min(count, LANE_ROWS) + 2  # a tree's entries of a level hold each row once at most
    return np.empty(4 * capacity, np.uint64), np.empty(capacity, np.uint64)


@njit(cache=True, nogil=True)
def _walk_block(nodes, roots, values, bins, width, first_row, count, first, tree_block, slots, totals, per_tree,
                write, entries, walks):
    """The trees ``first`` to ``first + tree_block`` of :func:`walk`, their value numbers written to
    ``per_tree`` if ``write``, else their values added to ``totals`` (``entries`` and ``walks``:
    :func:`_scratch`). Several rows go level by level, a vector compare a split; a single row (a
    batch or a last group of one) walks the block's trees in lockstep, a scalar compare a step."""
    block = min(tree_block, roots.shape[0] - first)
    chunks = (count + LANE_ROWS - 1) // LANE_ROWS
    capacity = walks.shape[0]
    nowhere = np.uint64(tree_block * LANE_ROWS)  # the slot a walk not yet at a leaf writes
    for chunk in range(chunks):
        lanes = min(LANE_ROWS, count - chunk * LANE_ROWS)
        offset = np.uint64((first_row // LANE_ROWS + chunk) * width * LANE_ROWS)
        every = ~_ZERO >> np.uint64(LANE_ROWS - lanes)
        half = lanes <= HALF_ROWS
        level, here, there, walking = _ZERO, _ZERO, np.uint64(2 * capacity), _ZERO
        for tree in range(block):
            key = np.uint64(roots[first + tree]) | (np.uint64(tree) << _TREE_SHIFT)
            if lanes == 1:
                walks[walking] = key
                walking += _ONE
            else:
                entries[_TWO * level], entries[_TWO * level + _ONE] = key, every
                level += _ONE
        while level > _ZERO:
            out = there
            for entry in range(level):
                at = here + _TWO * np.uint64(entry)
                key, rows = entries[at], entries[at + _ONE]
                node = key & _LOW
                word = nodes[node]
                at, bound = offset + ((word & _FEATURE) << _SIX), (word >> _BIN_SHIFT) & _BIN
                if half:  # the rows fit half a vector: half the bins read and compared
                    left = _at_most(bins, at, bound, HALF_ROWS) & rows
                else:
                    left = _at_most(bins, at, bound, LANE_ROWS) & rows
                right = rows ^ left
                right_field = (word >> _RIGHT_SHIFT) & _RIGHT
                right_leaf = (word >> _RIGHT_LEAF) & _ONE
                left_leaf = (word >> _LEFT_LEAF) & _ONE
                _fill(slots, (key >> _TREE_SHIFT) << _SIX, (right & (_ZERO - right_leaf)) | (left & (_ZERO - left_leaf)),
                      left, word >> _SLOT_SHIFT, right_field)
                entries[out], entries[out + _ONE] = key + right_field, right
                out += _TWO * (np.uint64(right != _ZERO) & (right_leaf ^ _ONE))
                entries[out], entries[out + _ONE] = key + _ONE, left
                out += _TWO * (np.uint64(left != _ZERO) & (left_leaf ^ _ONE))
                _prefetch(nodes, node + right_field)
                _prefetch(nodes, node + _ONE)
            level = (out - there) // _TWO
            here, there = there, here
        while walking > _ZERO:  # a single row: its walks in lockstep, those at a leaf dropped
            kept = _ZERO
            for at in range(walking):
                key = walks[at]
                node = key & _LOW
                word = nodes[node]
                right_field = (word >> _RIGHT_SHIFT) & _RIGHT
                if bins[offset + ((word & _FEATURE) << _SIX)] <= np.int32((word >> _BIN_SHIFT) & _BIN):
                    step, leaf, slot = _ONE, (word >> _LEFT_LEAF) & _ONE, word >> _SLOT_SHIFT
                else:
                    step, leaf, slot = right_field, (word >> _RIGHT_LEAF) & _ONE, right_field
                slots[((key >> _TREE_SHIFT) << _SIX) if leaf else nowhere] = slot
                walks[kept] = key + step
                kept += leaf ^ _ONE
                _prefetch(nodes, node + step)
            walking = kept
        base = chunk * LANE_ROWS
        for tree in range(block):  # tree by tree, in order
            lane_slots = slots[tree * LANE_ROWS:(tree + 1) * LANE_ROWS]
            if write:
                for lane in range(lanes):
                    per_tree[first + tree, base + lane] = lane_slots[lane]
            else:
                for lane in range(lanes):
                    totals[base + lane] += values[lane_slots[lane]]
