"""The numba kernels of the compiled forest engine (:class:`elquery.linking.ltr.forest.CompiledEngine`).

Compact layout, one int32 pair per node in depth-first order (a split's left child is the next
node): ``nodes[i, 0]`` the bits of the float32 threshold, ``nodes[i, 1]`` = (offset of the right
child) << 8 | feature, or :data:`LEAF` for a leaf, whose value is ``values[i]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

LEAF = 255


@njit(cache=True, nogil=True)
def compact(roots, features, threshold_bits, true_ids, true_leaf, false_ids, false_leaf, leaf_values):
    """The compact layout of a forest given as ONNX TreeEnsemble arrays: (nodes, values, the
    position of each tree's root)."""
    total = 2 * features.shape[0] + roots.shape[0]  # a tree of s splits has s + 1 leaves (a leaf may be two children)
    nodes = np.zeros((total, 2), dtype=np.int32)
    values = np.zeros(total, dtype=np.float64)
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
                nodes[at, 1] = LEAF
                values[at] = leaf_values[node]
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
    return nodes, values, positions


@njit(cache=True, nogil=True)
def predict(nodes, thresholds, values, roots, rows):
    """Mean over the trees of each row's leaf value, trees summed in order as scikit-learn does
    (``thresholds`` is ``nodes`` viewed as float32; ``rows`` float32). Tree by tree, every row
    steps one level per pass, so the reads of the rows overlap."""
    count = rows.shape[0]
    total = np.zeros(count, dtype=np.float64)
    current = np.empty(count, dtype=np.int64)
    for tree in range(roots.shape[0]):
        for row in range(count):
            current[row] = roots[tree]
        moving = count
        while moving > 0:
            moving = 0
            for row in range(count):
                node = current[row]
                packed = nodes[node, 1]
                feature = packed & 255
                if feature != LEAF:
                    if rows[row, feature] <= thresholds[node, 0]:
                        current[row] = node + 1
                    else:
                        current[row] = node + (packed >> 8)
                    moving += 1
        for row in range(count):
            total[row] += values[current[row]]
    return total / roots.shape[0]
