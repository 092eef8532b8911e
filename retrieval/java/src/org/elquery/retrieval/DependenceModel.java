package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.search.DocIdSetIterator;

/**
 * The sequential dependence model (SDM, Metzler and Croft 2005) and its fielded form (FSDM,
 * Zhiltsov, Kotov and Nikolaev 2015), scored exactly from positions (methods.md section 4).
 *
 * <p>For the analyzed query q_1 .. q_n and fields f with weights w_f^T, w_f^O, w_f^U and Dirichlet
 * priors m_f (by default the field's average length |C_f| / N, at least 1): score(e, q) = lambda_T sum_i f_T(q_i, e) + lambda_O sum_i f_O(q_i, q_i+1, e) +
 * lambda_U sum_i f_U(q_i, q_i+1, e), each f_X(x, e) = log sum_f w_f^X (n_X(x, e_f) + m_f
 * cf_X(x, f) / |C_f|) / (|e_f| + m_f). n_T is the term frequency; n_O counts the ordered window
 * #1: q_i at position p and q_i+1 at p + g, g the position step between the two terms in the
 * analyzed query (1, or more when stop words were removed between them); n_U counts the unordered
 * window #uwW: pairs of occurrences of q_i and q_i+1 at distinct positions p, p' with |p - p'| <
 * W (an unordered pair when q_i = q_i+1). A window never spans two values of a field: the index
 * leaves a position gap between values ({@code gap G} line, see {@code org.elquery.index.ValueGap}),
 * or, for an index without one, the value boundaries come from the stored text ({@link
 * FieldValues}). cf_X sums n_X over every entity; a component with sum_f w_f^X cf_X = 0 is the
 * same for every entity and is left out. SDM is FSDM over one field with weight 1.
 *
 * <p>Ranking scores every entity holding a query term in a weighted field; candidate scoring the
 * given docids (ascending). Request lines (tab separated): {@code field NAME W_T W_O W_U MU|average}, {@code lambda
 * L_T L_O L_U}, {@code window W}, {@code token STEP TERM} (in query order), {@code gap G}, {@code k K}, {@code
 * docids BASE64}. The answer is that of {@link EntityScores}, the known-term count being the number
 * of query tokens found in a weighted field.
 */
final class DependenceModel {
  private final String[] fields;
  /** [component T, O, U][field]. */
  private final double[][] weights = new double[3][];
  private final double[] mu;
  private final double[] lambda = new double[3];
  private final int window;
  /** The index's position gap between the values of a field (0: none). */
  final int gap;
  private final String[] tokens;
  private final int[] steps;
  final int k;
  final int[] docids;

  private DependenceModel(List<String[]> fieldLines, List<String[]> tokenLines, String[] lambdaLine, int window, int gap,
      int k, int[] docids) {
    int nf = fieldLines.size();
    fields = new String[nf];
    mu = new double[nf];
    for (int c = 0; c < 3; c++) {
      weights[c] = new double[nf];
      lambda[c] = Double.parseDouble(lambdaLine[c + 1]);
    }
    for (int f = 0; f < nf; f++) {
      String[] line = fieldLines.get(f);
      fields[f] = line[1];
      for (int c = 0; c < 3; c++) {
        weights[c][f] = Double.parseDouble(line[2 + c]);
      }
      mu[f] = line[5].equals("average") ? -1 : Double.parseDouble(line[5]);
    }
    tokens = new String[tokenLines.size()];
    steps = new int[tokens.length];
    for (int i = 0; i < tokens.length; i++) {
      steps[i] = Integer.parseInt(tokenLines.get(i)[1]);
      tokens[i] = tokenLines.get(i)[2];
    }
    this.window = window;
    this.gap = gap;
    this.k = k;
    this.docids = docids;
  }

  String[] fields() {
    return fields;
  }

  /** Whether the index's position gap alone keeps every window within a value: a pair of
   * positions in two values is more than the gap apart, so the unordered window (|p - q| < W)
   * and every ordered step must not exceed gap + 1 and gap. */
  boolean gapSeparatesValues() {
    if (gap <= 0) {
      return false;
    }
    if (window > gap + 1) {
      throw new IllegalStateException("the unordered window " + window + " is wider than the index's gap between"
          + " values allows (at most " + (gap + 1) + ")");
    }
    for (int step : steps) {
      if (step > gap) {
        throw new IllegalStateException("two query terms are " + step + " positions apart, more than the index's"
            + " gap between values (" + gap + ")");
      }
    }
    return true;
  }

  static DependenceModel parse(String request) {
    List<String[]> fieldLines = new ArrayList<>();
    List<String[]> tokenLines = new ArrayList<>();
    String[] lambdaLine = null;
    int window = 8;
    int gap = 0;
    int k = 0;
    int[] docids = null;
    for (String line : request.split("\n")) {
      String[] items = line.split("\t", line.startsWith("token\t") ? 3 : -1);
      switch (items[0]) {
        case "field":
          fieldLines.add(items);
          break;
        case "lambda":
          lambdaLine = items;
          break;
        case "window":
          window = Integer.parseInt(items[1]);
          break;
        case "token":
          tokenLines.add(items);
          break;
        case "gap":
          gap = Integer.parseInt(items[1]);
          break;
        case "k":
          k = Integer.parseInt(items[1]);
          break;
        case "docids":
          docids = LanguageModel.ints(items.length > 1 ? items[1] : "");
          break;
        default:
          throw new IllegalArgumentException("unknown request line: " + line);
      }
    }
    if (lambdaLine == null) {
      throw new IllegalArgumentException("no lambda line");
    }
    return new DependenceModel(fieldLines, tokenLines, lambdaLine, window, gap, k, docids);
  }

  /** The terms of {@code text} under {@code analyzer}, in order (those of {@link #tokens}). */
  static String[] terms(Analyzer analyzer, String text) throws IOException {
    List<String> terms = new ArrayList<>();
    try (TokenStream stream = analyzer.tokenStream("", text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        terms.add(term.toString());
      }
      stream.end();
    }
    return terms.toArray(new String[0]);
  }

  /** The analyzed tokens of {@code text} as lines {@code STEP TERM}, STEP being the position
   * increment (stop words removed before a token make it larger than 1). */
  static String tokens(Analyzer analyzer, String text) throws IOException {
    StringBuilder out = new StringBuilder();
    try (TokenStream stream = analyzer.tokenStream("", text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      PositionIncrementAttribute step = stream.addAttribute(PositionIncrementAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        out.append(step.getPositionIncrement()).append('\t').append(term).append('\n');
      }
      stream.end();
    }
    return out.toString();
  }

  /** The window counts of one (pair, field): the entities holding both terms, ascending, with
   * their #1 and #uwW counts (either may be 0), and the collection sums. */
  private static final class Windows {
    int[] docs = new int[64];
    int[] ordered = new int[64];
    int[] unordered = new int[64];
    int size;
    long cfOrdered;
    long cfUnordered;
    /** The reading position of the scoring pass. */
    int next;

    void add(int doc, int o, int u) {
      if (size == docs.length) {
        docs = Arrays.copyOf(docs, 2 * size);
        ordered = Arrays.copyOf(ordered, 2 * size);
        unordered = Arrays.copyOf(unordered, 2 * size);
      }
      docs[size] = doc;
      ordered[size] = o;
      unordered[size++] = u;
      cfOrdered += o;
      cfUnordered += u;
    }

    /** The row of {@code doc} (visited in ascending order), or -1. */
    int find(int doc) {
      while (next < size && docs[next] < doc) {
        next++;
      }
      return next < size && docs[next] == doc ? next : -1;
    }
  }

  /**
   * The answer for the request: the top k of every entity holding a query term in a weighted
   * field (no docids), or the scores of the given docids (ascending), in their order. First the
   * window counts of every adjacent pair in every field (over all entities holding both terms:
   * the collection sums need them all), then one document-at-a-time pass over the terms'
   * postings that scores each entity.
   */
  byte[] run(LeafReader leaf, IntBuffer[] lengths, FieldValues[] values, IntBuffer idRank) throws IOException {
    int nf = fields.length;
    int n = tokens.length;
    double[] collectionLength = new double[nf];
    for (int f = 0; f < nf; f++) {
      Terms terms = leaf.terms(fields[f]);
      collectionLength[f] = terms == null ? 0 : terms.getSumTotalTermFreq();
      if (mu[f] < 0) { // the field's average length |C_f| / N, at least 1
        mu[f] = Math.max(1, collectionLength[f] / Math.max(1, leaf.maxDoc()));
      }
    }
    Map<String, Integer> distinct = new LinkedHashMap<>();
    int[] termOf = new int[n];
    for (int i = 0; i < n; i++) {
      termOf[i] = distinct.computeIfAbsent(tokens[i], t -> distinct.size());
    }
    String[] terms = distinct.keySet().toArray(new String[0]);
    int nt = terms.length;
    // unigram statistics and postings of the (term, field) pairs of weighted fields
    double[][] cfT = new double[nt][nf];
    PostingsEnum[] postings = new PostingsEnum[nt * nf];
    for (int t = 0; t < nt; t++) {
      for (int f = 0; f < nf; f++) {
        cfT[t][f] = leaf.totalTermFreq(new Term(fields[f], terms[t]));
        if (cfT[t][f] > 0 && (weights[0][f] > 0 || weights[1][f] > 0 || weights[2][f] > 0)) {
          postings[t * nf + f] = leaf.postings(new Term(fields[f], terms[t]), PostingsEnum.FREQS);
        }
      }
    }
    int known = 0;
    for (int i = 0; i < n; i++) {
      known += present(0, cfT[termOf[i]], collectionLength) ? 1 : 0;
    }
    int pairs = Math.max(0, n - 1);
    Windows[][] windows = new Windows[pairs][nf];
    boolean[] orderedUsed = new boolean[pairs];
    boolean[] unorderedUsed = new boolean[pairs];
    if (known > 0) {
      for (int i = 0; i < pairs; i++) {
        double[] cfO = new double[nf];
        double[] cfU = new double[nf];
        for (int f = 0; f < nf; f++) {
          if ((lambda[1] > 0 && weights[1][f] > 0) || (lambda[2] > 0 && weights[2][f] > 0)) {
            windows[i][f] = countWindows(leaf, fields[f], values[f], tokens[i], tokens[i + 1], steps[i + 1]);
            cfO[f] = windows[i][f].cfOrdered;
            cfU[f] = windows[i][f].cfUnordered;
          }
        }
        orderedUsed[i] = lambda[1] > 0 && present(1, cfO, collectionLength);
        unorderedUsed[i] = lambda[2] > 0 && present(2, cfU, collectionLength);
      }
    }
    // the background of each component in each field: mu_f cf_X / |C_f|
    double[][] backgroundT = new double[nt][nf];
    double[][][] backgroundW = new double[2][pairs][nf];
    for (int f = 0; f < nf; f++) {
      if (collectionLength[f] == 0) {
        continue;
      }
      for (int t = 0; t < nt; t++) {
        backgroundT[t][f] = mu[f] * cfT[t][f] / collectionLength[f];
      }
      for (int i = 0; i < pairs; i++) {
        if (windows[i][f] != null) {
          backgroundW[0][i][f] = mu[f] * windows[i][f].cfOrdered / collectionLength[f];
          backgroundW[1][i][f] = mu[f] * windows[i][f].cfUnordered / collectionLength[f];
        }
      }
    }
    TopEntities top = docids == null ? new TopEntities(known > 0 ? Math.min(k, leaf.maxDoc()) : 0, idRank) : null;
    ByteBuffer out = null;
    if (docids != null) {
      out = EntityScores.buffer(8 + 8 * docids.length);
      out.putInt(known).putInt(docids.length);
    }
    int[] current = new int[postings.length];
    for (int j = 0; j < postings.length; j++) {
      current[j] = postings[j] == null || (docids == null && known == 0) ? DocIdSetIterator.NO_MORE_DOCS
          : postings[j].nextDoc();
    }
    int[] freqs = new int[postings.length];
    double[] denominator = new double[nf];
    boolean[] unigramUsed = new boolean[n];
    for (int i = 0; i < n; i++) {
      unigramUsed[i] = present(0, cfT[termOf[i]], collectionLength);
    }
    LogProduct product = new LogProduct();
    Bound bound = top != null && k > 0 && known > 0 && boundApplies(nf, mu) ? new Bound(termOf, unigramUsed,
        orderedUsed, unorderedUsed, backgroundT, backgroundW, windows) : null;
    SingleField single = nf == 1 ? new SingleField(termOf, cfT, collectionLength, backgroundT, backgroundW, orderedUsed,
        unorderedUsed) : null;
    for (int c = 0; ; c++) {
      int doc;
      if (docids != null) {
        if (c == docids.length) {
          break;
        }
        doc = docids[c];
      } else {
        doc = DocIdSetIterator.NO_MORE_DOCS;
        for (int cur : current) {
          doc = Math.min(doc, cur);
        }
        if (doc == DocIdSetIterator.NO_MORE_DOCS) {
          break;
        }
      }
      for (int j = 0; j < postings.length; j++) {
        if (current[j] < doc) {
          current[j] = postings[j].advance(doc);
        }
        freqs[j] = 0;
        if (current[j] == doc) {
          freqs[j] = postings[j].freq();
          current[j] = postings[j].nextDoc();
        }
      }
      if (bound != null && top.full() && bound.below(doc, freqs, lengths, top.worstScore())) {
        continue;
      }
      for (int f = 0; f < nf; f++) {
        denominator[f] = lengths[f].get(doc) + mu[f];
      }
      if (single != null) {
        double score = single.score(doc, freqs, windows, denominator[0]);
        if (top != null) {
          top.offer(doc, score);
        } else {
          out.putDouble(score);
        }
        continue;
      }
      // each component's log sum as the log of a product of its mixtures (3 logs per entity),
      // the product moved into the log before it could underflow
      product.clear();
      for (int i = 0; i < n; i++) {
        if (unigramUsed[i]) {
          int t = termOf[i];
          double mixture = 0;
          for (int f = 0; f < nf; f++) {
            if (weights[0][f] > 0) {
              mixture += weights[0][f] * (freqs[t * nf + f] + backgroundT[t][f]) / denominator[f];
            }
          }
          product.multiply(0, mixture);
        }
      }
      for (int i = 0; i < pairs; i++) {
        if (!orderedUsed[i] && !unorderedUsed[i]) {
          continue;
        }
        double ordered = 0;
        double unordered = 0;
        for (int f = 0; f < nf; f++) {
          Windows w = windows[i][f];
          int row = w == null ? -1 : w.find(doc);
          if (weights[1][f] > 0) {
            ordered += weights[1][f] * ((row < 0 ? 0 : w.ordered[row]) + backgroundW[0][i][f]) / denominator[f];
          }
          if (weights[2][f] > 0) {
            unordered += weights[2][f] * ((row < 0 ? 0 : w.unordered[row]) + backgroundW[1][i][f]) / denominator[f];
          }
        }
        if (orderedUsed[i]) {
          product.multiply(1, ordered);
        }
        if (unorderedUsed[i]) {
          product.multiply(2, unordered);
        }
      }
      double score = product.score(lambda);
      if (top != null) {
        top.offer(doc, score);
      } else {
        out.putDouble(score);
      }
    }
    return top != null ? top.toBytes(known) : out.array();
  }

  /**
   * One field (SDM): with weight 1, f_X(x, e) = log(n_X + m cf_X / |C|) - log(|e| + m), so an
   * entity costs one log for its length plus one per component it matches; the log of a
   * component's background (n_X = 0) is computed once per query.
   */
  private final class SingleField {
    private final int[] termOf;
    private final boolean[] unigramUsed;
    private final boolean[] orderedUsed;
    private final boolean[] unorderedUsed;
    private final double[] backgroundT;
    private final double[] logBackgroundT;
    private final double[][] backgroundW;
    private final double[][] logBackgroundW;
    /** The sum of the lambdas of the components used: the weight of -log(|e| + m). */
    private final double lengthWeight;

    SingleField(int[] termOf, double[][] cfT, double[] collectionLength, double[][] backgroundT,
        double[][][] backgroundW, boolean[] orderedUsed, boolean[] unorderedUsed) {
      this.termOf = termOf;
      this.orderedUsed = orderedUsed;
      this.unorderedUsed = unorderedUsed;
      int nt = backgroundT.length;
      this.backgroundT = new double[nt];
      logBackgroundT = new double[nt];
      unigramUsed = new boolean[termOf.length];
      double weight = 0;
      for (int t = 0; t < nt; t++) {
        this.backgroundT[t] = backgroundT[t][0];
        logBackgroundT[t] = Math.log(backgroundT[t][0]);
      }
      for (int i = 0; i < termOf.length; i++) {
        unigramUsed[i] = present(0, cfT[termOf[i]], collectionLength);
        weight += unigramUsed[i] ? lambda[0] : 0;
      }
      int pairs = orderedUsed.length;
      this.backgroundW = new double[2][pairs];
      logBackgroundW = new double[2][pairs];
      for (int i = 0; i < pairs; i++) {
        for (int c = 0; c < 2; c++) {
          this.backgroundW[c][i] = backgroundW[c][i][0];
          logBackgroundW[c][i] = Math.log(backgroundW[c][i][0]);
        }
        weight += (orderedUsed[i] ? lambda[1] : 0) + (unorderedUsed[i] ? lambda[2] : 0);
      }
      lengthWeight = weight;
    }

    double score(int doc, int[] freqs, Windows[][] windows, double denominator) {
      double score = 0;
      for (int i = 0; i < termOf.length; i++) {
        if (unigramUsed[i]) {
          int t = termOf[i];
          score += lambda[0] * (freqs[t] > 0 ? Math.log(freqs[t] + backgroundT[t]) : logBackgroundT[t]);
        }
      }
      for (int i = 0; i < orderedUsed.length; i++) {
        if (!orderedUsed[i] && !unorderedUsed[i]) {
          continue;
        }
        Windows w = windows[i][0];
        int row = w == null ? -1 : w.find(doc);
        if (orderedUsed[i]) {
          score += lambda[1] * (row >= 0 && w.ordered[row] > 0 ? Math.log(w.ordered[row] + backgroundW[0][i])
              : logBackgroundW[0][i]);
        }
        if (unorderedUsed[i]) {
          score += lambda[2] * (row >= 0 && w.unordered[row] > 0 ? Math.log(w.unordered[row] + backgroundW[1][i])
              : logBackgroundW[1][i]);
        }
      }
      return score - lengthWeight * Math.log(denominator);
    }
  }

  private static final int BUCKETS = 240;
  private static final int TABULATED = 64;

  /**
   * An upper bound of the score of an entity without any window row, costing no log and no
   * division, to pass over entities that cannot enter the top k. With m_X(e) a component's
   * mixture sum_f w_f^X (n_X + b_f) / (|e_f| + m_f), b_f = m_f cf_X / |C_f|, and m0_X(e) the same
   * with n_X = 0: score(e) = B(e) + lambda_T sum over the query terms i that e holds of log(m_i(e)
   * / m0_i(e)), B(e) = sum_X lambda_X log m0_X(e) being e's score without any query term. B falls
   * with every field length, so B(e) <= B at the lower ends of e's length buckets (a table filled
   * on demand, one or two fields); m_i / m0_i, a weighted mean of the fields' (n_f + b_f) / b_f,
   * is at most their maximum over the fields holding the term (logs tabulated for small n).
   */
  private final class Bound {
    private final int[] termOf;
    private final boolean[] unigramUsed;
    private final boolean[] orderedUsed;
    private final boolean[] unorderedUsed;
    private final double[][] backgroundT;
    private final double[][][] backgroundW;
    private final Windows[][] windows;
    /** B at the lower ends of the length buckets, NaN until computed. */
    private final double[] base;
    /** log((n + b) / b) of the (term, field) pairs in the unigram mixture, [t * nf + f][n], n < 64. */
    private final double[][] logRatio;
    private final int[] lowest;
    /** B at length 0 in every field: at least B of any entity. */
    private final double highest;
    /** The entities with a window row of a used pair, ascending, and the reading position. */
    private final int[] windowDocs;
    private int nextWindow;

    Bound(int[] termOf, boolean[] unigramUsed, boolean[] orderedUsed, boolean[] unorderedUsed,
        double[][] backgroundT, double[][][] backgroundW, Windows[][] windows) {
      this.termOf = termOf;
      this.unigramUsed = unigramUsed;
      this.orderedUsed = orderedUsed;
      this.unorderedUsed = unorderedUsed;
      this.backgroundT = backgroundT;
      this.backgroundW = backgroundW;
      this.windows = windows;
      int nf = fields.length;
      base = new double[nf == 1 ? BUCKETS : BUCKETS * BUCKETS];
      Arrays.fill(base, Double.NaN);
      lowest = new int[nf];
      logRatio = new double[backgroundT.length * nf][];
      for (int t = 0; t < backgroundT.length; t++) {
        for (int f = 0; f < nf; f++) {
          double b = backgroundT[t][f];
          if (weights[0][f] > 0 && b > 0) {
            double[] row = new double[TABULATED];
            for (int freq = 1; freq < TABULATED; freq++) {
              row[freq] = Math.log((freq + b) / b);
            }
            logRatio[t * nf + f] = row;
          }
        }
      }
      highest = base(0);
      int size = 0;
      for (int i = 0; i < orderedUsed.length; i++) {
        for (int f = 0; f < nf && (orderedUsed[i] || unorderedUsed[i]); f++) {
          size += windows[i][f] == null ? 0 : windows[i][f].size;
        }
      }
      int[] docs = new int[size];
      size = 0;
      for (int i = 0; i < orderedUsed.length; i++) {
        for (int f = 0; f < nf && (orderedUsed[i] || unorderedUsed[i]); f++) {
          if (windows[i][f] != null) {
            System.arraycopy(windows[i][f].docs, 0, docs, size, windows[i][f].size);
            size += windows[i][f].size;
          }
        }
      }
      Arrays.sort(docs);
      windowDocs = docs;
    }

    /** Whether e scores below {@code worst} by more than a margin (never for an entity with a window row;
     * entities come in ascending order): B at length 0 first, then B at e's length buckets. */
    boolean below(int doc, int[] freqs, IntBuffer[] lengths, double worst) {
      while (nextWindow < windowDocs.length && windowDocs[nextWindow] < doc) {
        nextWindow++;
      }
      if (nextWindow < windowDocs.length && windowDocs[nextWindow] == doc) {
        return false;
      }
      int nf = fields.length;
      double bonus = 0;
      for (int i = 0; i < termOf.length; i++) {
        if (!unigramUsed[i]) {
          continue;
        }
        int t = termOf[i];
        double best = 0;
        for (int f = 0; f < nf; f++) {
          int freq = freqs[t * nf + f];
          double[] row = logRatio[t * nf + f];
          if (freq > 0 && row != null) {
            double b = backgroundT[t][f];
            best = Math.max(best, freq < TABULATED ? row[freq] : Math.log((freq + b) / b));
          }
        }
        bonus += lambda[0] * best;
      }
      double margin = 1e-9 * (1 + Math.abs(worst));
      if (highest + bonus + margin < worst) {
        return true;
      }
      int key = bucket(lengths[0].get(doc));
      if (nf == 2) {
        key = key * BUCKETS + bucket(lengths[1].get(doc));
      }
      double base = this.base[key];
      if (base != base) {
        base = this.base[key] = base(key);
      }
      return base + bonus + margin < worst;
    }

    /** B at the lower ends of the buckets of {@code key}. */
    private double base(int key) {
      int nf = fields.length;
      lowest[nf - 1] = lowest(key % BUCKETS);
      if (nf == 2) {
        lowest[0] = lowest(key / BUCKETS);
      }
      double score = 0;
      for (int i = 0; i < termOf.length; i++) {
        if (unigramUsed[i]) {
          score += lambda[0] * Math.log(mixture(weights[0], backgroundT[termOf[i]]));
        }
      }
      for (int i = 0; i < orderedUsed.length; i++) {
        if (orderedUsed[i]) {
          score += lambda[1] * Math.log(mixture(weights[1], backgroundW[0][i]));
        }
        if (unorderedUsed[i]) {
          score += lambda[2] * Math.log(mixture(weights[2], backgroundW[1][i]));
        }
      }
      return score;
    }

    /** sum_f w_f b_f / (lowest_f + m_f). */
    private double mixture(double[] w, double[] background) {
      double sum = 0;
      for (int f = 0; f < fields.length; f++) {
        if (w[f] > 0) {
          sum += w[f] * background[f] / (lowest[f] + mu[f]);
        }
      }
      return sum;
    }
  }

  /** Whether {@link Bound} holds: one or two fields, every prior m_f positive (so b_f > 0 when cf_X > 0). */
  private static boolean boundApplies(int fields, double[] mu) {
    for (double m : mu) {
      if (!(m > 0)) {
        return false;
      }
    }
    return fields == 1 || fields == 2;
  }

  /** Length buckets of {@link Bound}: exact below 32, then 8 per power of 2. */
  private static int bucket(int length) {
    if (length < 32) {
      return length;
    }
    int e = 31 - Integer.numberOfLeadingZeros(length);
    return 32 + ((e - 5) << 3) + ((length >>> (e - 3)) & 7);
  }

  /** The smallest length of a bucket. */
  private static int lowest(int bucket) {
    if (bucket < 32) {
      return bucket;
    }
    return (8 + ((bucket - 32) & 7)) << (((bucket - 32) >>> 3) + 2);
  }

  /** Per component, a sum of logs kept as a log plus a product not yet taken the log of. */
  private static final class LogProduct {
    private static final double FLOOR = 1e-200;
    private final double[] products = new double[3];
    private final double[] logs = new double[3];

    void clear() {
      Arrays.fill(products, 1);
      Arrays.fill(logs, 0);
    }

    /** Adds log(x), x in (0, 1e100): the product stays above 1e-300. */
    void multiply(int c, double x) {
      products[c] *= x;
      if (products[c] < FLOOR) {
        logs[c] += Math.log(products[c]);
        products[c] = 1;
      }
    }

    /** sum_c lambda_c (the log sum of component c). */
    double score(double[] lambda) {
      double score = 0;
      for (int c = 0; c < 3; c++) {
        if (products[c] != 1 || logs[c] != 0) {
          score += lambda[c] * (logs[c] + Math.log(products[c]));
        }
      }
      return score;
    }
  }

  /** Whether sum_f w_f^X cf_X(x, f) / |C_f| > 0. */
  private boolean present(int c, double[] cf, double[] collectionLength) {
    for (int f = 0; f < fields.length; f++) {
      if (weights[c][f] > 0 && cf[f] > 0 && collectionLength[f] > 0) {
        return true;
      }
    }
    return false;
  }

  /** #1 (step g) and #uwW counts of (a, b) in every entity holding both in the field. */
  private Windows countWindows(LeafReader leaf, String field, FieldValues values, String a, String b, int step)
      throws IOException {
    Windows result = new Windows();
    PostingsEnum pa = leaf.postings(new Term(field, a), PostingsEnum.POSITIONS);
    PostingsEnum pb = a.equals(b) ? null : leaf.postings(new Term(field, b), PostingsEnum.POSITIONS);
    if (pa == null || (pb == null && !a.equals(b))) {
      return result;
    }
    int[] posA = new int[16];
    int[] posB = new int[16];
    int docA = pa.nextDoc();
    int docB = pb == null ? docA : pb.nextDoc();
    while (docA != DocIdSetIterator.NO_MORE_DOCS && docB != DocIdSetIterator.NO_MORE_DOCS) {
      if (docA < docB) {
        docA = pa.advance(docB);
        continue;
      }
      if (docB < docA) {
        docB = pb.advance(docA);
        continue;
      }
      int doc = docA;
      int na = pa.freq();
      posA = positions(pa, na, posA);
      int nb = na;
      if (pb != null) {
        nb = pb.freq();
        posB = positions(pb, nb, posB);
      } else {
        posB = posA;
      }
      int[] bounds = values.boundaries(doc);
      int o = 0;
      int u = 0;
      // #1: a at p, b at p + step, in one value
      for (int i = 0, j = 0; i < na; i++) {
        int target = posA[i] + step;
        while (j < nb && posB[j] < target) {
          j++;
        }
        if (j < nb && posB[j] == target && FieldValues.sameValue(bounds, posA[i], target)) {
          o++;
        }
      }
      // #uwW: occurrences at distinct positions less than W apart, in one value
      for (int i = 0, lo = 0; i < na; i++) {
        int p = posA[i];
        while (lo < nb && posB[lo] <= p - window) {
          lo++;
        }
        for (int j = lo; j < nb && posB[j] < p + window; j++) {
          int q = posB[j];
          if (q != p && (pb != null || q > p) && FieldValues.sameValue(bounds, p, q)) {
            u++;
          }
        }
      }
      if (o > 0 || u > 0) {
        result.add(doc, o, u);
      }
      docA = pa.nextDoc();
      docB = pb == null ? docA : pb.nextDoc();
    }
    return result;
  }

  private static int[] positions(PostingsEnum postings, int freq, int[] buffer) throws IOException {
    int[] out = buffer.length < freq ? new int[2 * freq] : buffer;
    for (int i = 0; i < freq; i++) {
      out[i] = postings.nextPosition();
    }
    return out;
  }
}
