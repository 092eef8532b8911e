package org.elquery.retrieval;

import java.io.IOException;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.StoredFields;

/**
 * Where the values of a multi-valued field start, in the positions Lucene indexed, for an index
 * written without a position gap between values (indexes written since {@code
 * org.elquery.index.ValueGap} have one and need none of this: {@link #NONE}). Such an index joins
 * a field's values, one per line, into one text with no gap, so a window must not join the last
 * token of one value with the first of the next: these boundaries say which value a position
 * belongs to. They are read once per index and field from the stored text, re-analyzed with the
 * index's analyzer (the positions it gives are the indexed ones); an entity whose field has a
 * single value has none.
 */
final class FieldValues {
  /** Per docid: the positions of the first token of the second, third, ... value, or null. */
  private final int[][] boundaries;

  /** No boundaries: every position of a field may pair with every other. */
  static final FieldValues NONE = new FieldValues(null);

  private FieldValues(int[][] boundaries) {
    this.boundaries = boundaries;
  }

  /** Reads the boundaries from the stored text; a field holding tokens but no stored text is an
   * error (its values cannot be told apart). */
  static FieldValues read(LeafReader leaf, Analyzer analyzer, String field, IntBuffer lengths) throws IOException {
    int[][] boundaries = new int[leaf.maxDoc()][];
    StoredFields stored = leaf.storedFields();
    Set<String> only = Set.of(field);
    for (int doc = 0; doc < boundaries.length; doc++) {
      String text = stored.document(doc, only).get(field);
      if (text == null && lengths.get(doc) > 0) {
        throw new IllegalStateException("field " + field + " is not stored and its values are indexed with no "
            + "position gap, so windows cannot be kept within a value: rebuild the index with this version of elquery "
            + "(it leaves a gap between values)");
      }
      if (text != null && text.indexOf('\n') >= 0) {
        boundaries[doc] = boundaries(analyzer, field, text);
      }
    }
    return new FieldValues(boundaries);
  }

  /** The indexed position of the first token of every value after the first that has one. */
  static int[] boundaries(Analyzer analyzer, String field, String text) throws IOException {
    int[] out = new int[4];
    int size = 0;
    int value = 0;
    int valueEnd = text.indexOf('\n');
    int position = -1;
    try (TokenStream stream = analyzer.tokenStream(field, text)) {
      OffsetAttribute offset = stream.addAttribute(OffsetAttribute.class);
      PositionIncrementAttribute step = stream.addAttribute(PositionIncrementAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        position += step.getPositionIncrement();
        boolean next = false;
        while (valueEnd >= 0 && offset.startOffset() > valueEnd) {
          valueEnd = text.indexOf('\n', valueEnd + 1);
          value++;
          next = true;
        }
        if (next) {
          if (size == out.length) {
            out = Arrays.copyOf(out, 2 * size);
          }
          out[size++] = position;
        }
      }
      stream.end();
    }
    return Arrays.copyOf(out, size);
  }

  int[] boundaries(int doc) {
    return boundaries == null ? null : boundaries[doc];
  }

  /** Whether positions p and q lie in the same value, given a document's boundaries. */
  static boolean sameValue(int[] bounds, int p, int q) {
    if (bounds == null) {
      return true;
    }
    int lo = Math.min(p, q);
    int hi = Math.max(p, q);
    for (int bound : bounds) {
      if (bound > lo && bound <= hi) {
        return false;
      }
    }
    return true;
  }
}
