"""The numba kernels of the compiled forest engine (:class:`elquery.linking.ltr.forest.CompiledEngine`).

Compact layout, one int32 pair per node in depth-first order (a split's left child is the next
node): ``nodes[i, 0]`` the bits of the float32 threshold, ``nodes[i, 1]`` = (offset of the right
child) << 8 | feature; a leaf has :data:`LEAF` in ``nodes[i, 1]`` and in ``nodes[i, 0]`` the
number of its value in ``values``, the forest's distinct leaf values (a fully grown forest over
0/1 labels has few), so reaching a leaf reads no other memory than its node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

LEAF = 255


@njit(cache=True, nogil=True)
def compact(roots, features, threshold_bits, true_ids, true_leaf, false_ids, false_leaf, leaf_slots):
    """The compact layout of a forest given as ONNX TreeEnsemble arrays, ``leaf_slots`` the number
    of each leaf's value among the distinct values: (nodes, the position of each tree's root)."""
    total = 2 * features.shape[0] + roots.shape[0]  # a tree of s splits has s + 1 leaves (a leaf may be two children)
    nodes = np.zeros((total, 2), dtype=np.int32)
    positions = np.empty(roots.shape[0], dtype=np.int32)
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
                nodes[at, 0] = leaf_slots[node]
                nodes[at, 1] = LEAF
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
    return nodes[:at].copy(), positions


@njit(cache=True, nogil=True)
def predict(nodes, thresholds, values, roots, rows, lanes):
    """Mean over the trees of each row's leaf value, trees summed in order as scikit-learn does
    (``thresholds`` is ``nodes`` viewed as float32; ``rows`` float32). The trees are taken in
    blocks of about ``lanes`` / rows trees; in a block every (tree, row) pair not yet at a leaf
    steps one level per pass, so their memory reads overlap even for a query of a few rows."""
    count = rows.shape[0]
    trees = roots.shape[0]
    block = max(1, min(trees, lanes // count))
    total = np.zeros(count, dtype=np.float64)
    current = np.empty(block * count, dtype=np.int64)
    active = np.empty(block * count, dtype=np.int64)
    reached = np.empty(block * count, dtype=np.float64)
    lane_row = np.empty(block * count, dtype=np.int64)
    for lane in range(block * count):
        lane_row[lane] = lane % count
    for first in range(0, trees, block):
        size = min(block, trees - first)
        moving = size * count
        for lane in range(moving):
            current[lane] = roots[first + lane // count]
            active[lane] = lane
        while moving > 0:
            kept = 0
            for at in range(moving):
                lane = active[at]
                node = current[lane]
                packed = nodes[node, 1]
                feature = packed & 255
                if feature == LEAF:
                    reached[lane] = values[nodes[node, 0]]
                else:
                    if rows[lane_row[lane], feature] <= thresholds[node, 0]:
                        current[lane] = node + 1
                    else:
                        current[lane] = node + (packed >> 8)
                    active[kept] = lane
                    kept += 1
            moving = kept
        for lane in range(size * count):  # tree by tree, in order
            total[lane_row[lane]] += reached[lane]
    return total / trees
