package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
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
import org.apache.lucene.util.FixedBitSet;

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
 * W (an unordered pair when q_i = q_i+1). A window never spans two values of a field (see {@link
 * FieldValues}). cf_X sums n_X over every entity; a component with sum_f w_f^X cf_X = 0 is the
 * same for every entity and is left out. SDM is FSDM over one field with weight 1.
 *
 * <p>Ranking scores every entity holding a query term in a weighted field; candidate scoring the
 * given docids. Request lines (tab separated): {@code field NAME W_T W_O W_U MU|average}, {@code lambda
 * L_T L_O L_U}, {@code window W}, {@code token STEP TERM} (in query order), {@code k K}, {@code
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
  private final String[] tokens;
  private final int[] steps;
  final int k;
  final int[] docids;

  private DependenceModel(List<String[]> fieldLines, List<String[]> tokenLines, String[] lambdaLine, int window, int k,
      int[] docids) {
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
    this.k = k;
    this.docids = docids;
  }

  String[] fields() {
    return fields;
  }

  static DependenceModel parse(String request) {
    List<String[]> fieldLines = new ArrayList<>();
    List<String[]> tokenLines = new ArrayList<>();
    String[] lambdaLine = null;
    int window = 8;
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
    return new DependenceModel(fieldLines, tokenLines, lambdaLine, window, k, docids);
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

  /**
   * The answer for the request: the top k of every entity holding a query term (no docids), or
   * the scores of the given docids in request order.
   */
  byte[] run(LeafReader leaf, int[][] lengths, FieldValues[] values, int[] idRank) throws IOException {
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
    // distinct terms, the entities to score and their row in the count arrays
    Map<String, Integer> distinct = new LinkedHashMap<>();
    int[] termOf = new int[n];
    for (int i = 0; i < n; i++) {
      termOf[i] = distinct.computeIfAbsent(tokens[i], t -> distinct.size());
    }
    String[] terms = distinct.keySet().toArray(new String[0]);
    int[] scored = docids;
    if (scored == null) {
      FixedBitSet matched = new FixedBitSet(leaf.maxDoc());
      for (String term : terms) {
        for (int f = 0; f < nf; f++) {
          if (weights[0][f] > 0 || weights[1][f] > 0 || weights[2][f] > 0) {
            PostingsEnum p = leaf.postings(new Term(fields[f], term), PostingsEnum.NONE);
            if (p != null) {
              for (int doc = p.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = p.nextDoc()) {
                matched.set(doc);
              }
            }
          }
        }
      }
      scored = new int[matched.cardinality()];
      int i = 0;
      for (int doc = matched.nextSetBit(0); doc != DocIdSetIterator.NO_MORE_DOCS;
          doc = doc + 1 < matched.length() ? matched.nextSetBit(doc + 1) : DocIdSetIterator.NO_MORE_DOCS) {
        scored[i++] = doc;
      }
    }
    int[] sortedScored = scored;
    if (docids != null) {
      sortedScored = scored.clone();
      Arrays.sort(sortedScored);
    }
    // unigram counts [term][field][row of sortedScored] and collection frequencies
    int rows = sortedScored.length;
    int[][][] tf = new int[terms.length][nf][];
    double[][] cfT = new double[terms.length][nf];
    for (int t = 0; t < terms.length; t++) {
      for (int f = 0; f < nf; f++) {
        cfT[t][f] = leaf.totalTermFreq(new Term(fields[f], terms[t]));
        tf[t][f] = new int[rows];
        PostingsEnum p = cfT[t][f] > 0 ? leaf.postings(new Term(fields[f], terms[t]), PostingsEnum.FREQS) : null;
        advanceAll(p, sortedScored, tf[t][f]);
      }
    }
    // window counts [pair][field][row] and their collection frequencies, over all entities
    int pairs = Math.max(0, n - 1);
    int[][][] ordered = new int[pairs][nf][rows];
    int[][][] unordered = new int[pairs][nf][rows];
    double[][] cfO = new double[pairs][nf];
    double[][] cfU = new double[pairs][nf];
    if (lambda[1] != 0 || lambda[2] != 0) {
      for (int i = 0; i < pairs; i++) {
        for (int f = 0; f < nf; f++) {
          if (weights[1][f] > 0 || weights[2][f] > 0) {
            long[] cf = countWindows(leaf, fields[f], values[f], tokens[i], tokens[i + 1], steps[i + 1],
                sortedScored, ordered[i][f], unordered[i][f]);
            cfO[i][f] = cf[0];
            cfU[i][f] = cf[1];
          }
        }
      }
    }
    // the components' smoothing constants: sum_f w_f m_f cf / |C_f| / (|e_f| + m_f) needs cf / |C_f|
    int known = 0;
    for (int i = 0; i < n; i++) {
      if (present(0, cfT[termOf[i]], collectionLength)) {
        known++;
      }
    }
    double[] scores = new double[rows];
    for (int r = 0; r < rows; r++) {
      int doc = sortedScored[r];
      double score = 0;
      for (int i = 0; i < n; i++) {
        int t = termOf[i];
        if (present(0, cfT[t], collectionLength)) {
          score += lambda[0] * component(0, doc, r, tf[t], cfT[t], collectionLength, lengths);
        }
      }
      for (int i = 0; i < pairs; i++) {
        if (lambda[1] != 0 && present(1, cfO[i], collectionLength)) {
          score += lambda[1] * component(1, doc, r, ordered[i], cfO[i], collectionLength, lengths);
        }
        if (lambda[2] != 0 && present(2, cfU[i], collectionLength)) {
          score += lambda[2] * component(2, doc, r, unordered[i], cfU[i], collectionLength, lengths);
        }
      }
      scores[r] = score;
    }
    if (docids == null) {
      TopEntities top = new TopEntities(Math.min(k, rows), idRank);
      if (known > 0) {
        for (int r = 0; r < rows; r++) {
          top.offer(sortedScored[r], scores[r]);
        }
      }
      return top.toBytes(known);
    }
    ByteBuffer out = EntityScores.buffer(8 + 8 * docids.length);
    out.putInt(known).putInt(docids.length);
    for (int docid : docids) {
      out.putDouble(scores[Arrays.binarySearch(sortedScored, docid)]);
    }
    return out.array();
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

  /** f_X(x, e) = log sum_f w_f^X (n_X(x, e_f) + m_f cf_X / |C_f|) / (|e_f| + m_f). */
  private double component(int c, int doc, int row, int[][] counts, double[] cf, double[] collectionLength,
      int[][] lengths) {
    double mixture = 0;
    for (int f = 0; f < fields.length; f++) {
      if (weights[c][f] > 0) {
        double background = collectionLength[f] > 0 ? cf[f] / collectionLength[f] : 0;
        mixture += weights[c][f] * (counts[f][row] + mu[f] * background) / (lengths[f][doc] + mu[f]);
      }
    }
    return Math.log(mixture);
  }

  /** Puts the frequency of each of {@code docs} (ascending) found in {@code postings} at its row. */
  private static void advanceAll(PostingsEnum postings, int[] docs, int[] freqs) throws IOException {
    if (postings == null) {
      return;
    }
    int doc = -1;
    for (int r = 0; r < docs.length && doc != DocIdSetIterator.NO_MORE_DOCS; r++) {
      if (doc < docs[r]) {
        doc = postings.advance(docs[r]);
      }
      if (doc == docs[r]) {
        freqs[r] = postings.freq();
      }
    }
  }

  /**
   * #1 (step g) and #uwW counts of (a, b) in every entity holding both in the field: the counts of
   * the entities of {@code docs} (ascending) go to their rows; returns the collection sums.
   */
  private long[] countWindows(LeafReader leaf, String field, FieldValues values, String a, String b, int step,
      int[] docs, int[] ordered, int[] unordered) throws IOException {
    long[] cf = new long[2];
    PostingsEnum pa = leaf.postings(new Term(field, a), PostingsEnum.POSITIONS);
    PostingsEnum pb = a.equals(b) ? null : leaf.postings(new Term(field, b), PostingsEnum.POSITIONS);
    if (pa == null || (pb == null && !a.equals(b))) {
      return cf;
    }
    int[] posA = new int[16];
    int[] posB = new int[16];
    int row = 0;
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
      cf[0] += o;
      cf[1] += u;
      while (row < docs.length && docs[row] < doc) {
        row++;
      }
      if (row < docs.length && docs[row] == doc) {
        ordered[row] = o;
        unordered[row] = u;
      }
      docA = pa.nextDoc();
      docB = pb == null ? docA : pb.nextDoc();
    }
    return cf;
  }

  private static int[] positions(PostingsEnum postings, int freq, int[] buffer) throws IOException {
    int[] out = buffer.length < freq ? new int[2 * freq] : buffer;
    for (int i = 0; i < freq; i++) {
      out[i] = postings.nextPosition();
    }
    return out;
  }
}
