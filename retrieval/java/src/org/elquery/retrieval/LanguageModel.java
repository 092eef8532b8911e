package org.elquery.retrieval;

import java.io.IOException;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;

/**
 * A query under a fielded language model (methods.md section 4): the mixture of language models
 * (MLM, Eq. 12-13) with per-field Jelinek-Mercer or Dirichlet smoothing, and the normalized query
 * likelihood (Eq. 16, Kraaij and Spitters).
 *
 * <p>For field f with weight mu_f: JM: p_f(t|e) = (1 - lambda_f) n(t,e_f)/|e_f| + lambda_f P(t|C_f)
 * (an empty field gives lambda_f P(t|C_f), its smoothing term only); Dirichlet: p_f(t|e) =
 * (n(t,e_f) + m_f P(t|C_f)) / (|e_f| + m_f). P(t|theta_e) = sum_f mu_f p_f(t|e), P(t|C_f) =
 * cf(t,f)/|C_f|, P(t|C) = sum_f mu_f P(t|C_f). log score(e,q) = sum over distinct terms t with
 * P(t|C) > 0 of P(t|q) [log P(t|theta_e) - log P(t|C)], P(t|q) = n(t,q)/|q|, |q| counting every
 * analyzed query term (also those absent from the collection).
 *
 * <p>When every weighted field is Jelinek-Mercer smoothed, P(t|theta_e) = c_t + g_t(e) with the
 * background c_t = sum_f mu_f lambda_f P(t|C_f) and the foreground g_t(e) = sum_f mu_f (1 -
 * lambda_f) n(t,e_f)/|e_f|, so log score(e,q) = B + sum over the terms e holds of P(t|q) [log(c_t +
 * g_t(e)) - log c_t], B = sum_t P(t|q) [log c_t - log P(t|C)] being the score of an entity without
 * any query term; scores are computed in that form (ranking and candidate scoring alike, so both
 * give the same numbers).
 *
 * <p>PRMS (Kim, Xue and Croft 2009) replaces the fixed weights mu_f by the mapping probability of
 * each term: mu_f(t) = P(f|t) = P(t|C_f) P(f) / sum_f' P(t|C_f') P(f'), with the field prior P(f)
 * = the share of entities with a non-empty field f among the request's fields (its weights in the
 * request are then ignored); everything above holds with mu_f(t) in place of mu_f.
 *
 * <p>The request is text, one item per line, tab separated (analyzed terms never hold a tab or a
 * newline; the term is the last item of its line): {@code field NAME WEIGHT jm|dirichlet PARAM},
 * optionally {@code prms},
 * {@code length |q|}, {@code term COUNT TERM}, and optionally {@code k K} (ranking) and {@code
 * docids BASE64} (little-endian int32 docids, ascending; candidate scoring). Parsed with an
 * analyzer, a request may give the query as {@code text TEXT} instead of its length and terms:
 * the text's tokens under the analyzer, each distinct term with its count in order of first
 * occurrence.
 */
final class LanguageModel {
  final String[] fields;
  /** mu_f of each known term, [term][field] (the same row for every term unless PRMS). */
  private final double[][] fieldWeights;
  final boolean[] dirichlet;
  final double[] smoothing;
  /** Known terms (P(t|C) > 0), in request order. */
  final String[] terms;
  /** P(t|q) = n(t,q)/|q| of each known term: its count n(t,q), and |q|. */
  final double[] queryWeights;
  final int[] queryCounts;
  final int queryLength;
  /** P(t|C_f), [term][field]. */
  final double[][] collection;
  /** log P(t|C) of each known term. */
  final double[] logCollection;
  final int k;
  final int[] docids;
  private final boolean jelinekMercer;
  /** JM: mu_f (1 - lambda_f), [term][field]. */
  private final double[][] foregroundWeights;
  /** JM: c_t and log c_t per known term. */
  private final double[] background;
  private final double[] logBackground;
  /** JM: B, the score of an entity holding no query term. */
  final double baseline;

  private LanguageModel(Statistics statistics, ModelLines model, int length, List<String[]> termLines, int k,
      int[] docids) throws IOException {
    boolean prms = model.prms;
    int nf = model.fields.size();
    fields = new String[nf];
    double[] weights = new double[nf];
    dirichlet = new boolean[nf];
    smoothing = new double[nf];
    double[] collectionLength = new double[nf];
    double[] prior = new double[nf];
    double entities = 0;
    for (int f = 0; f < nf; f++) {
      fields[f] = model.fields.get(f);
      weights[f] = model.weights.get(f);
      dirichlet[f] = model.dirichlet.get(f);
      smoothing[f] = model.smoothing.get(f);
      collectionLength[f] = statistics.collectionLength(fields[f]);
      prior[f] = statistics.docCount(fields[f]);
      entities += prior[f];
    }
    List<Integer> known = new ArrayList<>();
    List<double[]> probabilities = new ArrayList<>();
    List<double[]> termWeights = new ArrayList<>();
    for (int t = 0; t < termLines.size(); t++) {
      double[] p = new double[nf];
      double mixture = 0;
      for (int f = 0; f < nf; f++) {
        if (collectionLength[f] > 0) {
          p[f] = statistics.totalTermFreq(fields[f], termLines.get(t)[2]) / collectionLength[f];
        }
        mixture += (prms ? prior[f] / entities : weights[f]) * p[f];
      }
      if (mixture > 0) {
        known.add(t);
        probabilities.add(p);
        double[] w = weights;
        if (prms) { // P(f|t) = P(t|C_f) P(f) / sum_f' P(t|C_f') P(f')
          w = new double[nf];
          for (int f = 0; f < nf; f++) {
            w[f] = prior[f] / entities * p[f] / mixture;
          }
        }
        termWeights.add(w);
      }
    }
    terms = new String[known.size()];
    queryWeights = new double[known.size()];
    queryCounts = new int[known.size()];
    queryLength = length;
    collection = new double[known.size()][];
    logCollection = new double[known.size()];
    fieldWeights = termWeights.toArray(new double[0][]);
    for (int i = 0; i < terms.length; i++) {
      String[] line = termLines.get(known.get(i));
      terms[i] = line[2];
      queryCounts[i] = Integer.parseInt(line[1]);
      queryWeights[i] = queryCounts[i] / (double) length;
      collection[i] = probabilities.get(i);
      double mixture = 0;
      for (int f = 0; f < nf; f++) {
        mixture += fieldWeights[i][f] * collection[i][f];
      }
      logCollection[i] = Math.log(mixture);
    }
    this.k = k;
    this.docids = docids;
    boolean allJm = true;
    foregroundWeights = new double[terms.length][nf];
    for (int t = 0; t < terms.length; t++) {
      for (int f = 0; f < nf; f++) {
        allJm &= !dirichlet[f] || fieldWeights[t][f] == 0;
        foregroundWeights[t][f] = dirichlet[f] ? 0 : fieldWeights[t][f] * (1 - smoothing[f]);
      }
    }
    jelinekMercer = allJm;
    background = new double[terms.length];
    logBackground = new double[terms.length];
    double b = 0;
    for (int t = 0; t < terms.length; t++) {
      for (int f = 0; f < nf; f++) {
        background[t] += dirichlet[f] ? 0 : fieldWeights[t][f] * smoothing[f] * collection[t][f];
      }
      logBackground[t] = Math.log(background[t]);
      b += queryWeights[t] * (logBackground[t] - logCollection[t]);
    }
    baseline = b;
  }

  /** The model of another text under {@code query}'s model lines, every known term of it being
   * a known term of {@code query}'s: each term's statistics and the numbers made of them alone
   * taken from {@code query}, the rest computed as the main constructor computes it, so the same
   * model to the bit without reading the statistics again. */
  private LanguageModel(LanguageModel query, int length, List<String[]> termLines, int count) {
    fields = query.fields;
    dirichlet = query.dirichlet;
    smoothing = query.smoothing;
    k = 0;
    docids = query.docids;
    int n = count;
    terms = new String[n];
    queryWeights = new double[n];
    queryCounts = new int[n];
    queryLength = length;
    collection = new double[n][];
    logCollection = new double[n];
    fieldWeights = new double[n][];
    foregroundWeights = new double[n][];
    background = new double[n];
    logBackground = new double[n];
    int i = 0;
    for (String[] line : termLines) {
      Integer at = query.termIndex().get(line[2]);
      if (at == null) {
        continue; // not in the collection
      }
      terms[i] = line[2];
      queryCounts[i] = Integer.parseInt(line[1]);
      queryWeights[i] = queryCounts[i] / (double) length;
      collection[i] = query.collection[at];
      logCollection[i] = query.logCollection[at];
      fieldWeights[i] = query.fieldWeights[at];
      foregroundWeights[i] = query.foregroundWeights[at];
      background[i] = query.background[at];
      logBackground[i] = query.logBackground[at];
      i++;
    }
    boolean allJm = true;
    double b = 0;
    for (int t = 0; t < n; t++) {
      for (int f = 0; f < fields.length; f++) {
        allJm &= !dirichlet[f] || fieldWeights[t][f] == 0;
      }
      b += queryWeights[t] * (logBackground[t] - logCollection[t]);
    }
    jelinekMercer = allJm;
    baseline = b;
  }

  private Map<String, Integer> termIndex;

  /** Each known term's number. */
  private Map<String, Integer> termIndex() {
    if (termIndex == null) {
      termIndex = new java.util.HashMap<>();
      for (int t = 0; t < terms.length; t++) {
        termIndex.put(terms[t], t);
      }
    }
    return termIndex;
  }

  /** The model of a text of {@code length} analyzed tokens with the terms of {@code termLines}
   * under {@code query}'s model lines, when each of its terms is one of {@code query}'s term
   * lines ({@code queryTerms}: all of them, known to the collection or not); else null. */
  static LanguageModel sharing(LanguageModel query, java.util.Set<String> queryTerms, int length,
      List<String[]> termLines) {
    int known = 0;
    for (String[] line : termLines) {
      if (!queryTerms.contains(line[2])) {
        return null;
      }
      if (query.termIndex().containsKey(line[2])) {
        known++;
      }
    }
    return new LanguageModel(query, length, termLines, known);
  }

  static LanguageModel parse(LeafReader leaf, String request) throws IOException {
    return parse(leaf, null, request);
  }

  /** The request's model and query; {@code analyzer} (may be null: no {@code text} line) the
   * index's, for a {@code text} line. */
  static LanguageModel parse(LeafReader leaf, Analyzer analyzer, String request) throws IOException {
    ModelLines model = new ModelLines();
    List<String[]> termLines = new ArrayList<>();
    int length = 0;
    int k = 0;
    int[] docids = null;
    for (String line : request.split("\n")) {
      String[] items = line.split("\t", line.startsWith("term\t") ? 3 : -1);
      switch (items[0]) {
        case "field":
        case "prms":
          model.add(items);
          break;
        case "length":
          length = Integer.parseInt(items[1]);
          break;
        case "term":
          termLines.add(items);
          break;
        case "text":
          if (analyzer == null) {
            throw new IllegalArgumentException("a text line needs an analyzer");
          }
          String[] tokens = line.substring(5).isEmpty() ? new String[0] : DependenceModel.terms(analyzer, line.substring(5));
          length = tokens.length;
          termLines.addAll(termLines(tokens));
          break;
        case "k":
          k = Integer.parseInt(items[1]);
          break;
        case "docids":
          docids = ints(items.length > 1 ? items[1] : "");
          break;
        default:
          throw new IllegalArgumentException("unknown request line: " + line);
      }
    }
    return new LanguageModel(Statistics.of(leaf), model, length, termLines, k, docids);
  }

  /** The {@code term COUNT TERM} lines of analyzed tokens: each distinct term with its count, in
   * order of first occurrence. */
  static List<String[]> termLines(String[] tokens) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (String token : tokens) {
      counts.merge(token, 1, Integer::sum);
    }
    List<String[]> lines = new ArrayList<>(counts.size());
    for (Map.Entry<String, Integer> count : counts.entrySet()) {
      lines.add(new String[] {"term", count.getValue().toString(), count.getKey()});
    }
    return lines;
  }

  /** The model of {@code model} (as {@link #modelLines} reads it) for a query of {@code length}
   * analyzed tokens with the terms of {@code termLines} ({@link #termLines}), to score {@code
   * docids} (ascending). */
  static LanguageModel of(Statistics statistics, ModelLines model, int length, List<String[]> termLines,
      int[] docids) throws IOException {
    return new LanguageModel(statistics, model, length, termLines, 0, docids);
  }

  /** A model without a query, from its request's lines {@code field NAME WEIGHT jm|dirichlet
   * PARAM} (in order) and optionally {@code prms}. */
  static final class ModelLines {
    final List<String> fields = new ArrayList<>();
    final List<Double> weights = new ArrayList<>();
    final List<Boolean> dirichlet = new ArrayList<>();
    final List<Double> smoothing = new ArrayList<>();
    boolean prms;

    /** Reads a {@code field} or {@code prms} line (split at tabs). */
    void add(String[] items) {
      if (items[0].equals("prms")) {
        prms = true;
        return;
      }
      fields.add(items[1]);
      weights.add(Double.parseDouble(items[2]));
      dirichlet.add(items[3].equals("dirichlet"));
      smoothing.add(Double.parseDouble(items[4]));
    }
  }

  /** The model of a request holding only {@code field} and {@code prms} lines. */
  static ModelLines modelLines(String request) {
    ModelLines model = new ModelLines();
    for (String line : request.split("\n")) {
      String[] items = line.split("\t", -1);
      if (!items[0].equals("field") && !items[0].equals("prms")) {
        throw new IllegalArgumentException("not a model's request line: " + line);
      }
      model.add(items);
    }
    return model;
  }

  /** The collection statistics a model reads: |C_f|, the entities with a non-empty field f (PRMS's
   * field prior) and cf(t, f). */
  interface Statistics {
    long collectionLength(String field) throws IOException;

    int docCount(String field) throws IOException;

    long totalTermFreq(String field, String term) throws IOException;

    /** The statistics of an index segment, read at each call. */
    static Statistics of(LeafReader leaf) {
      return new Statistics() {
        @Override
        public long collectionLength(String field) throws IOException {
          Terms terms = leaf.terms(field);
          return terms == null ? 0 : terms.getSumTotalTermFreq();
        }

        @Override
        public int docCount(String field) throws IOException {
          Terms terms = leaf.terms(field);
          return terms == null ? 0 : terms.getDocCount();
        }

        @Override
        public long totalTermFreq(String field, String term) throws IOException {
          return leaf.totalTermFreq(new Term(field, term));
        }
      };
    }
  }

  static int[] ints(String base64) {
    byte[] bytes = Base64.getDecoder().decode(base64);
    int[] values = new int[bytes.length / 4];
    java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(values);
    return values;
  }

  /** Whether the model reads the (term, field) pair number {@code pair} = t * fields + f: mu_f(t)
   * > 0. Only the entities holding a query term in such a pair are ranked. */
  boolean reads(int pair) {
    return fieldWeights[pair / fields.length][pair % fields.length] > 0;
  }

  /** Whether every pair the model reads adds to the foreground (Jelinek-Mercer, lambda < 1): then
   * the entities to rank are those in the postings of the pairs with a foreground. */
  boolean termAtATime() {
    for (int t = 0; t < terms.length; t++) {
      for (int f = 0; f < fields.length; f++) {
        if (fieldWeights[t][f] > 0 && !hasForeground(t, f)) {
          return false;
        }
      }
    }
    return jelinekMercer;
  }

  /** Whether every weighted field is Jelinek-Mercer smoothed: scores in the form B + sum of
   * {@link #delta} over the terms an entity holds. */
  boolean jelinekMercer() {
    return jelinekMercer;
  }

  /** JM: whether field f can add to some term's foreground. */
  boolean hasForeground(int f) {
    for (int t = 0; t < terms.length; t++) {
      if (hasForeground(t, f)) {
        return true;
      }
    }
    return false;
  }

  /** JM: whether field f can add to term t's foreground (mu_f (1 - lambda_f) > 0). */
  boolean hasForeground(int t, int f) {
    return foregroundWeights[t][f] > 0;
  }

  /** JM: the part of g_t(e) from field f: mu_f (1 - lambda_f) n(t,e_f)/|e_f| (0 for an empty field). */
  double foreground(int t, int f, int freq, int length) {
    return length == 0 ? 0 : foregroundWeights[t][f] * freq / length;
  }

  /** JM: what a term the entity holds adds to the baseline: P(t|q) [log(c_t + g_t(e)) - log c_t]. */
  double delta(int t, double foreground) {
    return queryWeights[t] * (Math.log(background[t] + foreground) - logBackground[t]);
  }

  /** JM: c_t, the background of term t. */
  double background(int t) {
    return background[t];
  }

  /** JM: term t's factor of an entity's growth, (1 + g_t(e) / c_t)^n(t,q), from {@code ratio} =
   * g_t(e) / c_t: B + (1/|q|) log of the product of the factors over the terms is the log score. */
  double growth(int t, double ratio) {
    double factor = 1 + ratio;
    double growth = factor;
    for (int i = 1; i < queryCounts[t]; i++) {
      growth *= factor;
    }
    return growth;
  }

  /** log score(e, q) (Eq. 16) from the entity's term frequencies n(t, e_f) at {@code freqs[t *
   * fields + f]} and its field lengths {@code lengths[f].get(doc)}. */
  double score(int doc, int[] freqs, IntBuffer[] lengths) {
    int nf = fields.length;
    if (jelinekMercer) {
      double sum = 0;
      for (int t = 0; t < terms.length; t++) {
        double g = 0;
        for (int f = 0; f < nf; f++) {
          if (hasForeground(t, f) && freqs[t * nf + f] > 0) {
            g += foreground(t, f, freqs[t * nf + f], lengths[f].get(doc));
          }
        }
        if (g > 0) {
          sum += delta(t, g);
        }
      }
      return baseline + sum;
    }
    double score = 0;
    for (int t = 0; t < terms.length; t++) {
      double mixture = 0;
      for (int f = 0; f < nf; f++) {
        mixture += fieldWeights[t][f] * fieldProbability(t, f, freqs[t * nf + f], lengths[f].get(doc));
      }
      score += queryWeights[t] * (Math.log(mixture) - logCollection[t]);
    }
    return score;
  }

  /** p_f(t|e) (Eq. 12 with JM smoothing, or Dirichlet smoothing). */
  private double fieldProbability(int t, int f, int freq, int length) {
    double background = collection[t][f];
    if (dirichlet[f]) {
      return (freq + smoothing[f] * background) / (length + smoothing[f]);
    }
    double foreground = length == 0 ? 0 : freq / (double) length;
    return (1 - smoothing[f]) * foreground + smoothing[f] * background;
  }
}
