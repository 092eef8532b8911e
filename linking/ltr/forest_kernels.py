"""The numba kernels of the compiled forest engine (:class:`elquery.linking.ltr.forest.CompiledEngine`).

Compact layout, two uint32 words per node in depth-first order (a split's left child is the next
node), in one flat array ``words``: for a split, ``words[2i]`` the bits of its float32 threshold
and ``words[2i + 1]`` = (offset of the right child) << 8 | feature; for a leaf, ``words[2i]`` a
quiet NaN whose payload is the number of its value in ``values`` (the forest's distinct leaf
values: a fully grown forest over 0/1 labels has few) and ``words[2i + 1]`` = 0. Since
``x <= NaN`` is false for every x, one step of the walk, ``node + 1`` if ``x[feature] <= threshold``
else ``node + offset``, leaves a (tree, row) pair that has reached its leaf where it is (offset 0):
the walk takes :data:`STEPS` steps without testing for leaves, and the comparison's outcome only
selects the next node (a conditional move, no branch to mispredict). After each step the next
node's memory is prefetched, so the reads of the pairs walked in lockstep overlap.

LLVM's x86 pass that turns a conditional move on a loop's critical path back into a branch is
switched off here on x86 (``--x86-cmov-converter=false``, a code-generation heuristic of this process:
it changes no result), as it would put that mispredicted branch back; it more than halves the
walk's time.
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

if platform.machine().lower() in ("x86_64", "amd64"):  # an option LLVM knows on x86 only
    llvmlite.binding.set_option("elquery", "--x86-cmov-converter=false")

LEAF_NAN = 0x7FC00000
"""A leaf's first word: this quiet NaN's bits, or'ed with the number of its value."""
SLOT_BITS = 22
"""A leaf value's number takes the NaN's low 22 bits: at most 2**22 distinct leaf values."""
STEPS = 4
"""Steps every walking pair takes before the walk sets aside the pairs at a leaf."""
_ONE, _TWO, _EIGHT, _BYTE = np.uint64(1), np.uint64(2), np.uint64(8), np.uint64(255)
_SLOT = np.uint64((1 << SLOT_BITS) - 1)


@intrinsic
def _prefetch(typingctx: Any, array: Any, index: Any) -> Any:
    """Ask the CPU to bring ``array[index]`` into the caches (LLVM's ``llvm.prefetch``; no effect
    on any result)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        pointer = cgutils.get_item_pointer(context, builder, array_type,
                                           context.make_array(array_type)(context, builder, args[0]), [args[1]])
        byte_pointer = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        int32 = ir.IntType(32)
        name = "llvm.prefetch.p0" if getattr(byte_pointer.type, "is_opaque", False) else "llvm.prefetch.p0i8"
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer.type, int32, int32, int32]), name)
        builder.call(function, [byte_pointer, int32(0), int32(3), int32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(cache=True, nogil=True)
def compact(roots, features, threshold_bits, true_ids, true_leaf, false_ids, false_leaf, leaf_slots):
    """The compact layout of a forest given as ONNX TreeEnsemble arrays, ``leaf_slots`` the number
    of each leaf's value among the distinct values: (words, the node number of each tree's root)."""
    total = 2 * features.shape[0] + roots.shape[0]  # a tree of s splits has s + 1 leaves (a leaf may be two children)
    nodes = np.zeros((total, 2), dtype=np.int32)
    positions = np.empty(roots.shape[0], dtype=np.int64)
    stack_ids = np.empty(64, dtype=np.int64)
    stack_leaf = np.empty(64, dtype=np.bool_)
    stack_parent = np.empty(64, dtype=np.int64)
    at = 0
    for tree in range(roots.shape[0]):
        positions[tree] = at
        stack_ids[0], stack_leaf[0], stack_parent[0] = roots[tree], False, -1
        top = 1
        while top > 0:
            top -= 1
            node, leaf, parent = stack_ids[top], stack_leaf[top], stack_parent[top]
            if parent >= 0:
                offset = at - parent
                if offset >= 1 << 23:
                    raise ValueError("a tree is too large for the compact layout")
                nodes[parent, 1] |= offset << 8
            if leaf:
                nodes[at, 0] = LEAF_NAN | leaf_slots[node]
                nodes[at, 1] = 0
            else:
                if top + 2 > stack_ids.shape[0]:  # depth-first: the stack grows with the depth only
                    stack_ids = np.concatenate((stack_ids, np.empty_like(stack_ids)))
                    stack_leaf = np.concatenate((stack_leaf, np.empty_like(stack_leaf)))
                    stack_parent = np.concatenate((stack_parent, np.empty_like(stack_parent)))
                nodes[at, 0] = threshold_bits[node]
                nodes[at, 1] = features[node]
                stack_ids[top], stack_leaf[top], stack_parent[top] = false_ids[node], false_leaf[node], at
                stack_ids[top + 1], stack_leaf[top + 1], stack_parent[top + 1] = true_ids[node], true_leaf[node], -1
                top += 2
            at += 1
    return nodes[:at].copy().ravel().view(np.uint32), positions


@njit(cache=True, nogil=True)
def walk(words, thresholds, values, roots, rows, lanes, totals, per_tree):
    """Each row's leaf value in each tree of ``roots``: added to ``totals[row]`` tree by tree, in
    order (scikit-learn's sum), or, when ``per_tree`` has a row per tree, written to
    ``per_tree[tree, row]`` (``thresholds`` is ``words`` viewed as float32; ``rows`` float32).

    The (tree, row) pairs are walked in tiles of about ``lanes`` pairs, every pair of a tile in
    lockstep: blocks of ``lanes`` / rows trees with all the rows, or, for ``lanes`` rows or more,
    one tree with blocks of ``lanes`` rows (the tree's nodes stay in the caches for every block)."""
    count, width = rows.shape
    flat = rows.ravel()
    trees = roots.shape[0]
    if count < lanes:
        tree_block, row_block = max(1, min(trees, lanes // count)), count
    else:
        tree_block, row_block = 1, lanes
    size = tree_block * row_block
    current = np.empty(size, dtype=np.uint64)
    start = np.empty(size, dtype=np.uint64)
    lane_of = np.empty(size, dtype=np.int64)
    reached = np.empty(size, dtype=np.float64)
    write = per_tree.shape[0] > 0
    for first in range(0, trees, tree_block):
        block = min(tree_block, trees - first)
        for first_row in range(0, count, row_block):
            block_rows = min(row_block, count - first_row)
            moving = block * block_rows
            for lane in range(moving):
                current[lane] = np.uint64(roots[first + lane // block_rows])
                start[lane] = np.uint64((first_row + lane % block_rows) * width)
                lane_of[lane] = lane
            while moving > 0:
                for _ in range(STEPS):
                    for at in range(moving):
                        node = current[at]
                        packed = np.uint64(words[node * _TWO + _ONE])
                        left = flat[start[at] + (packed & _BYTE)] <= thresholds[node * _TWO]
                        following = node + _ONE if left else node + (packed >> _EIGHT)
                        current[at] = following
                        _prefetch(words, following * _TWO)
                kept = 0
                for at in range(moving):
                    node = current[at]
                    if words[node * _TWO + _ONE] == 0:
                        reached[lane_of[at]] = values[np.uint64(words[node * _TWO]) & _SLOT]
                    else:
                        current[kept], start[kept], lane_of[kept] = node, start[at], lane_of[at]
                        kept += 1
                moving = kept
            for lane in range(block * block_rows):  # tree by tree, in order
                if write:
                    per_tree[first + lane // block_rows, first_row + lane % block_rows] = reached[lane]
                else:
                    totals[first_row + lane % block_rows] += reached[lane]


@njit(cache=True, nogil=True)
def add_in_order(totals, per_tree):
    """``totals[row]`` += ``per_tree[tree, row]`` tree by tree, in order."""
    for tree in range(per_tree.shape[0]):
        for row in range(per_tree.shape[1]):
            totals[row] += per_tree[tree, row]
