package org.elquery.retrieval;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;

/** The best k entities offered so far, ordered by score descending, then entity id: a bounded
 * heap whose root is the worst entity kept. */
final class TopEntities {
  private final int capacity;
  private final IntBuffer idRank;
  private final int[] docs;
  private final double[] scores;
  private int size;

  TopEntities(int capacity, IntBuffer idRank) {
    this.capacity = capacity;
    this.idRank = idRank;
    this.docs = new int[capacity];
    this.scores = new double[capacity];
  }

  boolean full() {
    return size == capacity;
  }

  double worstScore() {
    return scores[0];
  }

  /** Whether entity a ranks below entity b. */
  private boolean worse(double scoreA, int docA, double scoreB, int docB) {
    return scoreA < scoreB || (scoreA == scoreB && idRank.get(docA) > idRank.get(docB));
  }

  /** Keeps (doc, score) if it ranks among the best k so far; returns whether it was kept. */
  boolean offer(int doc, double score) {
    if (size < capacity) {
      int slot = size++;
      while (slot > 0 && worse(score, doc, scores[(slot - 1) / 2], docs[(slot - 1) / 2])) {
        docs[slot] = docs[(slot - 1) / 2];
        scores[slot] = scores[(slot - 1) / 2];
        slot = (slot - 1) / 2;
      }
      docs[slot] = doc;
      scores[slot] = score;
      return true;
    }
    if (capacity > 0 && worse(scores[0], docs[0], score, doc)) {
      replaceRoot(doc, score);
      return true;
    }
    return false;
  }

  private void replaceRoot(int doc, double score) {
    int slot = 0;
    while (2 * slot + 1 < size) {
      int child = 2 * slot + 1;
      if (child + 1 < size && worse(scores[child + 1], docs[child + 1], scores[child], docs[child])) {
        child++;
      }
      if (!worse(scores[child], docs[child], score, doc)) {
        break;
      }
      docs[slot] = docs[child];
      scores[slot] = scores[child];
      slot = child;
    }
    docs[slot] = doc;
    scores[slot] = score;
  }

  /** Empties the heap into bytes: int32 known-term count, int32 n, n float64 scores, n int32
   * docids, best first. */
  byte[] toBytes(int knownTerms) {
    int n = size;
    int[] rankedDocs = new int[n];
    double[] rankedScores = new double[n];
    for (int i = n - 1; i >= 0; i--) {
      rankedDocs[i] = docs[0];
      rankedScores[i] = scores[0];
      size--;
      if (size > 0) {
        replaceRoot(docs[size], scores[size]);
      }
    }
    ByteBuffer out = EntityScores.buffer(8 + 12 * n);
    out.putInt(knownTerms).putInt(n);
    for (double score : rankedScores) {
      out.putDouble(score);
    }
    for (int doc : rankedDocs) {
      out.putInt(doc);
    }
    return out.array();
  }
}
