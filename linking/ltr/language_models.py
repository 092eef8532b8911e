"""The language-model features of LTR (methods.md §9): Eq. 16 computed with numpy from the counts
of one :func:`~elquery.linking.ltr.statistics.query_statistics` call.

For a text x (the query, or a mention's characters in it) with analyzed terms, field weights
mu_f and Jelinek-Mercer lambda (Eq. 12-13):

    P(t|theta_e) = sum_f mu_f [(1 - lambda) n(t, e_f)/|e_f| + lambda P(t|C_f)],  P(t|C_f) = cf(t, f)/|C_f|,
    log score(e, x) = sum_{t in x, P(t|C) > 0} n(t, x)/|x| [log P(t|theta_e) - log P(t|C)],
    P(t|C) = sum_f mu_f P(t|C_f),

|x| counting every analyzed term (also those absent from the collection) and an empty field
contributing its smoothing term only; the feature is exp(log score), and 0 for a text with no
term in the collection (as :mod:`elquery.retrieval.scoring` defines Eq. 16). A single-field
feature (``mtitle``, ``qcats``, ...) has mu = 1 on its field; ``mlm-tc`` is MLM's names 0.2 /
content 0.8.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from elquery.linking.ltr.statistics import QueryStatistics

LAMBDA = 0.1
"""Jelinek-Mercer lambda of every LTR language-model feature (methods.md §9)."""


def exp_scores(statistics: QueryStatistics, lengths: np.ndarray, text: int, weights: Sequence[float],
               lambda_: float = LAMBDA) -> np.ndarray:
    """exp(log score(e, x)) (Eq. 16) of text number ``text`` for every docid of the statistics,
    under the mixture with ``weights`` mu_f over the statistics' fields; ``lengths[f, d]`` is
    |e_f| of the d-th docid."""
    tokens = statistics.texts[text]
    size = len(tokens)
    docs = lengths.shape[1]
    terms, counts = np.unique(tokens, return_counts=True)
    mu = np.asarray(weights, dtype=np.float64)[:, None]
    totals = statistics.collection_lengths.astype(np.float64)[:, None]
    frequencies = statistics.collection_frequencies[:, terms].astype(np.float64)
    field_collection = np.divide(frequencies, totals, out=np.zeros_like(frequencies), where=totals > 0)
    collection = (mu * field_collection).sum(axis=0)
    known = collection > 0
    if size == 0 or not known.any():
        return np.zeros(docs)
    terms, counts = terms[known], counts[known]
    field_collection, collection = field_collection[:, known], collection[known]
    tf = statistics.term_frequencies[:, terms, :].astype(np.float64)
    field_lengths = np.broadcast_to(lengths[:, None, :].astype(np.float64), tf.shape)
    foreground = np.divide(tf, field_lengths, out=np.zeros_like(tf), where=field_lengths > 0)
    theta = (mu[:, :, None] * ((1 - lambda_) * foreground + lambda_ * field_collection[:, :, None])).sum(axis=0)
    log_score = ((counts / size)[:, None] * (np.log(theta) - np.log(collection)[:, None])).sum(axis=0)
    return np.exp(log_score)
