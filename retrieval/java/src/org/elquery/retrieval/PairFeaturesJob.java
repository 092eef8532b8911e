package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.LeafReader;

/**
 * {@link PairFeatures#features}'s answer computed in two parts that two threads may run at once
 * (methods.md section 9): part 0 scores the first {@link #SPLIT} models of the request (their own
 * {@link ScoreGrid}: the query's scores of each candidate, and each row's mention's under those of
 * them that are single-field), part 1 the others and the string tests. Each part works on objects
 * of its own and publishes its result once, so a part run twice (by a thread that started it late
 * and by the caller that did not wait for it) gives the same result, kept once; {@link #answer}
 * runs any part not run yet and puts the results in {@link PairFeatures#features}'s layout, the
 * same bytes.
 */
public final class PairFeaturesJob {
  /** The models of part 0: title, short abstract, long abstract and wiki links of the features'
   * seven (their postings are about half of a query's reads, measured at 1M entities). */
  static final int SPLIT = 4;
  private final LeafReader leaf;
  private final Analyzer analyzer;
  private final String[] models;
  private final String[] lmTexts;
  private final String query;
  private final String[] texts;
  private final int[] ints;
  private final int columns;
  private final int rows;
  private final int single;
  private final AtomicReferenceArray<Part> parts = new AtomicReferenceArray<>(2);

  /** A part's result: per model of the part, the query's log scores of the columns and its known
   * terms; per row, its mention's log score under each single-field model of the part; the string
   * tests (part 1). */
  private static final class Part {
    final double[] queryScores;
    final int[] known;
    final double[] mentionScores;
    final byte[] strings;

    Part(double[] queryScores, int[] known, double[] mentionScores, byte[] strings) {
      this.queryScores = queryScores;
      this.known = known;
      this.mentionScores = mentionScores;
      this.strings = strings;
    }
  }

  private PairFeaturesJob(LeafReader leaf, Analyzer analyzer, String[] models, String[] lmTexts, String query,
      String layout, String[] texts) {
    this.leaf = leaf;
    this.analyzer = analyzer;
    this.models = models;
    this.lmTexts = lmTexts;
    this.query = query;
    this.texts = texts;
    ints = LanguageModel.ints(layout);
    columns = ints[1];
    rows = ints[2];
    single = ints[5];
  }

  /** A job for {@link PairFeatures#features}'s arguments; nothing is computed yet. */
  public static PairFeaturesJob of(LeafReader leaf, Analyzer analyzer, String[] models, String[] lmTexts,
      String query, String layout, String[] texts) {
    return new PairFeaturesJob(leaf, analyzer, models, lmTexts, query, layout, texts);
  }

  /** Part {@code part} (0 or 1), unless it has been run. */
  public void run(int part) throws IOException {
    if (parts.get(part) == null) {
      parts.compareAndSet(part, null, part == 0 ? scores(0, Math.min(SPLIT, models.length), null)
          : scores(Math.min(SPLIT, models.length), models.length, strings()));
    }
  }

  /** {@link PairFeatures#features}'s answer: the parts not run yet run here. */
  public byte[] answer() throws IOException {
    run(0);
    run(1);
    Part first = parts.get(0);
    Part second = parts.get(1);
    int scored = Math.min(single, SPLIT);
    ByteBuffer out = EntityScores.buffer(models.length * (8 * columns + 4) + 8 * single * rows + second.strings.length);
    for (Part part : new Part[] {first, second}) {
      for (double score : part.queryScores) {
        out.putDouble(score);
      }
    }
    for (Part part : new Part[] {first, second}) {
      for (int known : part.known) {
        out.putInt(known);
      }
    }
    for (int r = 0; r < rows; r++) {
      for (int m = 0; m < scored; m++) {
        out.putDouble(first.mentionScores[r * scored + m]);
      }
      for (int m = 0; m < single - scored; m++) {
        out.putDouble(second.mentionScores[r * (single - scored) + m]);
      }
    }
    out.put(second.strings);
    return out.array();
  }

  /** Models {@code from} to {@code to} of the request scored in a grid of their own. */
  private Part scores(int from, int to, byte[] strings) throws IOException {
    int[] docids = Arrays.copyOfRange(ints, 6 + 2 * ints[0], 6 + 2 * ints[0] + columns);
    String[] own = Arrays.copyOfRange(models, from, to);
    ScoreGrid grid = new ScoreGrid(leaf, analyzer, EntityScores.lengths(leaf), own, lmTexts, docids);
    ByteBuffer scores = EntityScores.buffer(8 * columns * own.length);
    int[] known = new int[own.length];
    for (int m = 0; m < own.length; m++) {
      grid.score(m, 0, scores);
      known[m] = grid.model(m, 0).terms.length;
    }
    double[] queryScores = new double[columns * own.length];
    scores.flip();
    scores.asDoubleBuffer().get(queryScores);
    int scored = Math.max(0, Math.min(single, to) - from);
    double[] mentionScores = new double[rows * scored];
    int rowsAt = 6 + 2 * ints[0] + ints[4];
    for (int r = 0; r < rows; r++) {
      for (int m = 0; m < scored; m++) {
        mentionScores[r * scored + m] = grid.score(m, 1 + ints[rowsAt + 2 * r], ints[rowsAt + 2 * r + 1]);
      }
    }
    return new Part(queryScores, known, mentionScores, strings);
  }

  /** The string tests of {@link PairFeatures#features}: its answer for no model. */
  private byte[] strings() throws IOException {
    int[] none = ints.clone();
    none[5] = 0;  // no mention scored
    return PairFeatures.features(leaf, analyzer, new String[0], new String[0], query, none, texts);
  }
}
