package org.elquery.index;

import java.io.IOException;
import java.io.Reader;
import org.apache.lucene.analysis.CharFilter;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;

/**
 * A position gap between the values of a field (methods.md §2). A field's values are indexed as
 * one text, one value per line; without a gap the first token of a value would directly follow
 * the last token of the previous one, and a phrase or window (SDM/FSDM, span queries) could join
 * two values. {@link #reader} notes where the text's line ends are as the tokenizer reads it, and
 * {@link #filter} adds {@link #GAP} to the position increment of the first token after a line
 * end. Only positions change: the tokens, their number (the field length) and the norms do not.
 * The gap is recorded in the commit user data ({@link #COMMIT_KEY}) of every index written with it.
 */
public final class ValueGap {
  /** Positions left empty between two values: windows of up to GAP + 1 positions and phrase
   * steps of up to GAP never join two values. */
  public static final int GAP = 100;
  public static final String COMMIT_KEY = "value_position_gap";

  private ValueGap() {}

  /** The offsets of the line ends read so far, shared by a reader and its filter. */
  static final class LineEnds {
    private int[] offsets = new int[8];
    private int size;
    private int next;

    void reset() {
      size = 0;
      next = 0;
    }

    void add(int offset) {
      if (size == offsets.length) {
        offsets = java.util.Arrays.copyOf(offsets, 2 * size);
      }
      offsets[size++] = offset;
    }

    /** Whether a line end lies before {@code offset} that was not consumed yet (consumes them). */
    boolean crossed(int offset) {
      boolean crossed = false;
      while (next < size && offsets[next] < offset) {
        next++;
        crossed = true;
      }
      return crossed;
    }
  }

  /** Passes the text through, noting its line ends. */
  static Reader reader(Reader in, LineEnds ends) {
    ends.reset();
    return new CharFilter(in) {
      private int offset;

      @Override
      public int read(char[] buffer, int start, int length) throws IOException {
        int n = input.read(buffer, start, length);
        for (int i = 0; i < n; i++) {
          if (buffer[start + i] == '\n') {
            ends.add(offset + i);
          }
        }
        offset += Math.max(n, 0);
        return n;
      }

      @Override
      protected int correct(int currentOff) {
        return currentOff;
      }
    };
  }

  /** Adds the gap before the first token of every value but the first. */
  static TokenStream filter(TokenStream in, LineEnds ends) {
    return new TokenFilter(in) {
      private final OffsetAttribute offset = addAttribute(OffsetAttribute.class);
      private final PositionIncrementAttribute step = addAttribute(PositionIncrementAttribute.class);
      private boolean first;

      @Override
      public boolean incrementToken() throws IOException {
        if (!input.incrementToken()) {
          return false;
        }
        if (ends.crossed(offset.startOffset()) && !first) {
          step.setPositionIncrement(step.getPositionIncrement() + GAP);
        }
        first = false;
        return true;
      }

      @Override
      public void reset() throws IOException {
        super.reset();
        first = true;
      }
    };
  }
}
