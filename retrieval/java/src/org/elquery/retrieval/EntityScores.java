package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.Impact;
import org.apache.lucene.index.Impacts;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.sandbox.search.CombinedFieldQuery;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.queries.spans.SpanNearQuery;
import org.apache.lucene.queries.spans.SpanQuery;
import org.apache.lucene.queries.spans.SpanTermQuery;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.FixedBitSet;
import org.apache.lucene.util.SmallFloat;
import org.elquery.index.IndexAccess;

/**
 * Entry points for elquery's Python code (retrieval/java.py): one call per query instead of
 * one pyjnius call per posting. Results are little-endian bytes: int32 known-term count, int32 n,
 * n float64 scores, n int32 docids (ranking); or int32 known-term count, int32 n, n float64
 * scores (candidate scoring, in the order of the request's docids).
 *
 * <p>Ties are broken by entity id: {@link #install} gives the docids in entity-id order once per
 * index; rankings are ordered by score descending, then entity id.
 */
public final class EntityScores {
  private static final Map<LeafReader, IndexState> STATES = new WeakHashMap<>();

  private EntityScores() {}

  /** Registers the entity-id order of an index segment (docids, base64 little-endian int32). */
  public static void install(LeafReader leaf, String docidsByEntityId) {
    state(leaf).setOrder(LanguageModel.ints(docidsByEntityId));
  }

  /** The stored value of {@code field} of each docid (base64 little-endian int32), one per line:
   * the entity ids of a ranking, for an index whose id list has not been read. */
  public static String stored(LeafReader leaf, String field, String docids) throws IOException {
    StoredFields stored = leaf.storedFields();
    Set<String> only = Set.of(field);
    StringBuilder out = new StringBuilder();
    for (int doc : LanguageModel.ints(docids)) {
      out.append(stored.document(doc, only).get(field)).append('\n');
    }
    return out.toString();
  }

  private static IndexState state(LeafReader leaf) {
    synchronized (STATES) {
      return STATES.computeIfAbsent(leaf, l -> new IndexState(l.maxDoc()));
    }
  }

  /** Log scores (Eq. 16) of the request's docids (ascending), or of every entity without docids. */
  public static byte[] score(LeafReader leaf, String request) throws IOException {
    return score(leaf, LanguageModel.parse(leaf, request));
  }

  /**
   * Several candidate scorings in one call (the LTR features: one language model and one text
   * each): the answers of {@link #score} to each request, one after the other. A request may give
   * its query as a {@code text} line, analyzed here with {@code analyzer} (the index's).
   */
  public static byte[] scoreEach(LeafReader leaf, Analyzer analyzer, String[] requests) throws IOException {
    byte[][] answers = new byte[requests.length][];
    int size = 0;
    for (int r = 0; r < requests.length; r++) {
      answers[r] = score(leaf, LanguageModel.parse(leaf, analyzer, requests[r]));
      size += answers[r].length;
    }
    ByteBuffer out = buffer(size);
    for (byte[] answer : answers) {
      out.put(answer);
    }
    return out.array();
  }

  /**
   * Several (language model, text) scorings of the same candidates in one pass ({@link ScoreGrid}:
   * each text analyzed once, each (field, term) pair read once): the log scores and known terms
   * {@link #scoreEach} gives to the requests of model {@code models[m]} (its request lines), a
   * {@code text} line of {@code texts[t]} and the {@code docids} (base64 little-endian int32,
   * ascending), for the (m, t) pairs of {@code scorings} (base64 little-endian int32 m, t, m, t,
   * ...), in that order: float64 scores, scoring by scoring, then int32 known terms per scoring.
   */
  public static byte[] scoreGrid(LeafReader leaf, Analyzer analyzer, String[] models, String[] texts,
      String scorings, String docids) throws IOException {
    return ScoreGrid.run(leaf, analyzer, lengths(leaf), models, texts, LanguageModel.ints(scorings),
        LanguageModel.ints(docids));
  }

  /** The exact field lengths of the index of {@code leaf} (cached per index). */
  static ScoreGrid.Lengths lengths(LeafReader leaf) {
    IndexState state = state(leaf);
    return fields -> state.lengths(leaf, fields);
  }

  private static byte[] score(LeafReader leaf, LanguageModel model) throws IOException {
    IntBuffer[] lengths = state(leaf).lengths(leaf, model.fields);
    int[] docids = model.docids;
    if (docids == null) {
      docids = new int[leaf.maxDoc()];
      Arrays.setAll(docids, i -> i);
    }
    int pairs = model.terms.length * model.fields.length;
    int[][] columns = new int[pairs][docids.length];
    for (int pair = 0; pair < pairs; pair++) {
      PostingsEnum postings = postings(leaf, model, pair);
      int doc = postings == null ? DocIdSetIterator.NO_MORE_DOCS : -1;
      for (int i = 0; i < docids.length && doc != DocIdSetIterator.NO_MORE_DOCS; i++) {
        if (doc < docids[i]) {
          doc = postings.advance(docids[i]);
        }
        if (doc == docids[i]) {
          columns[pair][i] = postings.freq();
        }
      }
    }
    ByteBuffer out = buffer(8 + 8 * docids.length);
    out.putInt(model.terms.length).putInt(docids.length);
    int[] freqs = new int[pairs];
    for (int i = 0; i < docids.length; i++) {
      for (int pair = 0; pair < pairs; pair++) {
        freqs[pair] = columns[pair][i];
      }
      out.putDouble(model.score(docids[i], freqs, lengths));
    }
    return out.array();
  }

  /**
   * The linker's candidate scoring, one call per query: the log scores (Eq. 16) of entities named
   * by their ids under the language model of request lines {@code model}, for the query {@code
   * text} (analyzed here with {@code analyzer}, the index's); {@code entities} holds the ids, one
   * per line, each looked up in the field {@code idField} (the first document holding it). The
   * scores are {@link ScoreGrid}'s (each (field, term) pair sought once), so {@link #score}'s for
   * the docids found, to the bit. Answer, in the order of {@code entities}: int32 known-term
   * count, int32 n = the number of ids, n float64 log scores, then n int32 docids; an id no
   * document holds gets docid -1 and score NaN.
   */
  public static byte[] scoreEntities(LeafReader leaf, Analyzer analyzer, String model, String text, String idField,
      String entities) throws IOException {
    String[] ids = entities.split("\n", -1);
    int[] docids = IndexAccess.firstDocs(leaf, idField, ids);
    int[] found = Arrays.stream(docids).filter(doc -> doc >= 0).sorted().distinct().toArray();
    ScoreGrid grid = new ScoreGrid(leaf, analyzer, lengths(leaf), new String[] {model}, new String[] {text}, found);
    ByteBuffer out = buffer(8 + 12 * ids.length);
    out.putInt(grid.model(0, 0).terms.length).putInt(ids.length);
    for (int doc : docids) {
      out.putDouble(doc < 0 ? Double.NaN : grid.score(0, 0, Arrays.binarySearch(found, doc)));
    }
    for (int doc : docids) {
      out.putInt(doc);
    }
    return out.array();
  }

  /**
   * SDM / FSDM ({@link DependenceModel}): the top k of the entities holding a query term, or the
   * scores of the request's docids. {@code analyzer} is the index's: for an index without a
   * position gap between values, the value boundaries of its fields are read from the stored text
   * with it, once per index and field.
   */
  public static byte[] dependence(LeafReader leaf, Analyzer analyzer, String request) throws IOException {
    DependenceModel model = DependenceModel.parse(request);
    IndexState state = state(leaf);
    String[] fields = model.fields();
    FieldValues[] values = new FieldValues[fields.length];
    boolean gapped = model.gapSeparatesValues();
    for (int f = 0; f < fields.length; f++) {
      values[f] = gapped ? FieldValues.NONE : state.values(leaf, analyzer, fields[f]);
    }
    return model.run(leaf, state.lengths(leaf, fields), values, model.docids == null ? state.idRank(leaf) : null);
  }

  /** Query tokens with their position steps ({@link DependenceModel#tokens}). */
  public static String tokens(Analyzer analyzer, String text) throws IOException {
    return DependenceModel.tokens(analyzer, text);
  }

  /** Postings of the (term, field) pair number {@code pair} = t * fields + f, or null. */
  private static PostingsEnum postings(LeafReader leaf, LanguageModel model, int pair) throws IOException {
    int fields = model.fields.length;
    Term term = new Term(model.fields[pair % fields], model.terms[pair / fields]);
    return leaf.postings(term, PostingsEnum.FREQS);
  }

  /**
   * The exact top k, by log score (Eq. 16), of the entities holding a query term in a field the
   * model reads (mu_f(t) > 0; the others are not ranked), best first, ties by entity id: term at a
   * time when every such field adds to the foreground (Jelinek-Mercer, lambda < 1; with MaxScore
   * pruning over docid windows, {@link #rankPruned}, for several terms with many postings),
   * document at a time otherwise.
   */
  public static byte[] top(LeafReader leaf, String request) throws IOException {
    LanguageModel model = LanguageModel.parse(leaf, request);
    IndexState state = state(leaf);
    TopEntities top = new TopEntities(Math.min(model.k, leaf.maxDoc()), state.idRank(leaf));
    if (model.terms.length == 0 || model.k == 0) {
      return top.toBytes(model.terms.length);
    }
    IntBuffer[] lengths = state.lengths(leaf, model.fields);
    if (model.termAtATime() && model.terms.length > 1 && postingsCost(leaf, model) >= leaf.maxDoc() / 8
        && state.normsBoundLengths(leaf, model, lengths)) {
      rankPruned(leaf, model, lengths, top);
    } else if (model.termAtATime()) {
      rankJelinekMercer(leaf, model, lengths, top);
    } else {
      documentAtATime(leaf, model, lengths, top);
    }
    return top.toBytes(model.terms.length);
  }

  /** Per-thread work arrays for term-at-a-time scoring, zero (clear) between uses. */
  private static final class Scratch {
    double[] foreground = new double[0];
    double[] sum = new double[0];
    int[] union = new int[0];
    FixedBitSet pending = new FixedBitSet(0);
    FixedBitSet matched = new FixedBitSet(0);

    Scratch sized(int maxDoc) {
      if (sum.length < maxDoc) {
        foreground = new double[maxDoc];
        sum = new double[maxDoc];
        union = new int[maxDoc];
        pending = new FixedBitSet(maxDoc);
        matched = new FixedBitSet(maxDoc);
      }
      return this;
    }
  }

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  /** Postings longer than this get a table of the deltas of the common (freq, length) pairs. */
  private static final int MEMO_MIN_POSTINGS = 1024;
  private static final int MEMO_FREQS = 8;
  private static final int MEMO_LENGTHS = 2048;

  /**
   * JM models: offers to {@code top} every entity holding a query term, with score B + the sum of
   * {@link LanguageModel#delta} over the terms it holds. The sums run term by term in dense arrays: the foregrounds
   * of a term's earlier fields collect first; in the last field's postings an entity not seen for
   * the term gets its delta at once (from a table of the frequent (freq, length) pairs for long
   * postings), the others after the pass. They add the same numbers in the same order as
   * {@link LanguageModel#score}, so ranking and candidate scoring agree to the last bit.
   */
  private static void rankJelinekMercer(LeafReader leaf, LanguageModel model, IntBuffer[] lengths, TopEntities top)
      throws IOException {
    Scratch scratch = SCRATCH.get().sized(leaf.maxDoc());
    double[] foreground = scratch.foreground;
    double[] sum = scratch.sum;
    int[] union = scratch.union;
    FixedBitSet pendingSet = scratch.pending;
    FixedBitSet matched = scratch.matched;
    int unionSize = 0;
    int fields = model.fields.length;
    int[] pending = new int[16];
    try {
      for (int t = 0; t < model.terms.length; t++) {
        int pendingSize = 0;
        int last = -1;
        for (int f = 0; f < fields; f++) {
          last = model.hasForeground(t, f) ? f : last;
        }
        for (int f = 0; f <= last; f++) {
          PostingsEnum postings = model.hasForeground(t, f) ? postings(leaf, model, t * fields + f) : null;
          if (postings == null) {
            continue;
          }
          IntBuffer length = lengths[f];
          if (f < last) {
            for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
              if (!pendingSet.getAndSet(doc)) {
                if (pendingSize == pending.length) {
                  pending = Arrays.copyOf(pending, 2 * pendingSize);
                }
                pending[pendingSize++] = doc;
              }
              foreground[doc] += model.foreground(t, f, postings.freq(), length.get(doc));
            }
            continue;
          }
          double[] memo = null;
          if (postings.cost() > MEMO_MIN_POSTINGS) {
            memo = new double[MEMO_FREQS * MEMO_LENGTHS];
            Arrays.fill(memo, Double.NaN);
          }
          for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
            int freq = postings.freq();
            if (pendingSize > 0 && pendingSet.get(doc)) {
              foreground[doc] += model.foreground(t, f, freq, length.get(doc));
              continue;
            }
            double delta;
            if (memo != null && freq < MEMO_FREQS && length.get(doc) < MEMO_LENGTHS) {
              int slot = freq * MEMO_LENGTHS + length.get(doc);
              delta = memo[slot];
              if (delta != delta) {
                delta = memo[slot] = model.delta(t, model.foreground(t, f, freq, length.get(doc)));
              }
            } else {
              delta = model.delta(t, model.foreground(t, f, freq, length.get(doc)));
            }
            if (!matched.getAndSet(doc)) {
              union[unionSize++] = doc;
            }
            sum[doc] += delta;
          }
        }
        for (int i = 0; i < pendingSize; i++) {
          int doc = pending[i];
          if (!matched.getAndSet(doc)) {
            union[unionSize++] = doc;
          }
          sum[doc] += model.delta(t, foreground[doc]);
          foreground[doc] = 0;
          pendingSet.clear(doc);
        }
      }
      for (int i = 0; i < unionSize; i++) {
        top.offer(union[i], model.baseline + sum[union[i]]);
      }
    } catch (IOException | RuntimeException e) {
      SCRATCH.remove(); // its arrays may not be zero any more
      throw e;
    }
    for (int i = 0; i < unionSize; i++) {
      sum[union[i]] = 0;
      matched.clear(union[i]);
    }
  }

  /** The number of postings of the query's (term, field) pairs with a foreground. */
  private static long postingsCost(LeafReader leaf, LanguageModel model) throws IOException {
    long cost = 0;
    for (int t = 0; t < model.terms.length; t++) {
      for (int f = 0; f < model.fields.length; f++) {
        if (model.hasForeground(t, f)) {
          cost += leaf.docFreq(new Term(model.fields[f], model.terms[t]));
        }
      }
    }
    return cost;
  }

  /** Docids per window of {@link #rankPruned}. */
  private static final int WINDOW = 1024;

  /** A non-essential term's postings in a window are read whole when they are at most this many
   * per candidate left to test on it (about what advancing them to one candidate costs). */
  private static final int READ_PER_CANDIDATE = 8;

  /**
   * JM models with dynamic pruning (MaxScore over docid windows), giving the same ranking as {@link
   * #rankJelinekMercer} to the last bit. Entities are compared with the k-th score s by their
   * growth, the product over query terms of ((c_t + g_t(e)) / c_t)^n(t,q), which reaches
   * exp(|q| (s - B)) exactly when the log score reaches s, so that no logarithm is taken for an
   * entity that cannot enter. Per window, each term gets an upper bound of its foreground from
   * Lucene's impacts (max freq / min length of its postings' blocks; the lengths the norms encode
   * never exceed the exact ones, checked once per index by {@link IndexState#normsBoundLengths}).
   * Once the ranking is full, the terms whose bounds together cannot lift an entity into it are
   * non-essential: the candidates are the entities holding an essential term. The postings of the
   * essential terms in the window are read whole, and so are a non-essential term's when the
   * window has many candidates for them; the other non-essential terms are advanced only to the
   * candidates whose exact part and the remaining bounds can still enter. Every entity offered is
   * scored exactly as {@link LanguageModel#score} does (foregrounds in field order, deltas in term
   * order); an entity skipped scores below the k-th score.
   */
  private static void rankPruned(LeafReader leaf, LanguageModel model, IntBuffer[] lengths, TopEntities top)
      throws IOException {
    int nt = model.terms.length;
    int nf = model.fields.length;
    int maxDoc = leaf.maxDoc();
    PostingsEnum[][] postings = new PostingsEnum[nt][nf];
    ImpactsEnum[][] impacts = new ImpactsEnum[nt][nf];
    double[][] perWindow = new double[nt][nf]; // postings per window, on average
    TermsEnum[] termsEnums = new TermsEnum[nf]; // one per field, seeked to each term
    for (int t = 0; t < nt; t++) {
      for (int f = 0; f < nf; f++) {
        if (!model.hasForeground(t, f) || leaf.terms(model.fields[f]) == null) {
          continue;
        }
        if (termsEnums[f] == null) {
          termsEnums[f] = leaf.terms(model.fields[f]).iterator();
        }
        TermsEnum terms = termsEnums[f];
        if (terms.seekExact(new BytesRef(model.terms[t]))) {
          postings[t][f] = terms.postings(null, PostingsEnum.FREQS);
          postings[t][f].nextDoc();
          impacts[t][f] = terms.impacts(PostingsEnum.FREQS);
          perWindow[t][f] = terms.docFreq() * (double) WINDOW / maxDoc;
        }
      }
    }
    double[][] scale = new double[nt][nf]; // g_{t,f}(e) / c_t = scale n(t,e_f) / |e_f|
    for (int t = 0; t < nt; t++) {
      for (int f = 0; f < nf; f++) {
        scale[t][f] = model.foreground(t, f, 1, 1) / model.background(t);
      }
    }
    double[][] ratio = new double[nt][WINDOW]; // g_t(e) / c_t over the pairs read
    long[][][] held = new long[nt][nf][WINDOW / 64];
    int[][][] freqs = new int[nt][nf][WINDOW]; // n(t,e_f): of the terms read; of the others at a candidate
    long[] candidates = new long[WINDOW / 64];
    double[] bound = new double[nt]; // of g_t(e) / c_t in the window
    int[] byBound = new int[nt];
    double[] boundGrowth = new double[nt]; // [i]: the growth of the bounds of byBound[0 .. i]
    boolean[] read = new boolean[nt];
    int[] readTerms = new int[nt];
    int[] lazyTerms = new int[nt];
    long[][] memoKeys = new long[nt][DELTA_MEMO];
    double[][] memoDeltas = new double[nt][DELTA_MEMO];
    double cutWorst = Double.NaN;
    double cut = 0;
    for (int lo = 0; lo < maxDoc; lo += WINDOW) {
      int next = DocIdSetIterator.NO_MORE_DOCS;
      for (int t = 0; t < nt; t++) {
        for (int f = 0; f < nf; f++) {
          if (postings[t][f] != null) {
            next = Math.min(next, postings[t][f].docID());
          }
        }
      }
      if (next == DocIdSetIterator.NO_MORE_DOCS) {
        break;
      }
      lo = Math.max(lo, next - next % WINDOW);
      int hi = Math.min(maxDoc, lo + WINDOW);
      int others = 0; // the non-essential terms are byBound[0 .. others - 1]
      if (top.full()) {
        if (top.worstScore() != cutWorst) {
          cutWorst = top.worstScore();
          cut = cut(model, cutWorst);
        }
        for (int t = 0; t < nt; t++) {
          bound[t] = 0;
          for (int f = 0; f < nf; f++) {
            bound[t] += impacts[t][f] == null ? 0 : maxForeground(model, t, f, impacts[t][f], lo, hi);
          }
          bound[t] /= model.background(t);
          int i = t;
          for (; i > 0 && bound[byBound[i - 1]] > bound[t]; i--) {
            byBound[i] = byBound[i - 1];
          }
          byBound[i] = t;
        }
        double growth = 1;
        for (int i = 0; i < nt; i++) {
          growth *= model.growth(byBound[i], bound[byBound[i]]);
          boundGrowth[i] = growth;
        }
        while (others < nt && boundGrowth[others] < cut) {
          others++;
        }
        if (others == nt) {
          continue; // no entity of the window can enter
        }
      }
      Arrays.fill(read, true);
      for (int i = 0; i < others; i++) {
        read[byBound[i]] = false;
      }
      for (int t = 0; t < nt; t++) {
        if (read[t]) {
          readPairs(postings[t], lengths, scale[t], lo, hi, held[t], freqs[t], ratio[t]);
          for (int f = 0; f < nf; f++) {
            for (int word = 0; word < WINDOW / 64; word++) {
              candidates[word] |= held[t][f][word];
            }
          }
        }
      }
      int reads = 0;
      for (int t = 0; t < nt; t++) {
        if (read[t]) {
          readTerms[reads++] = t;
        }
      }
      // the non-essential terms, by decreasing bound, are read whole while the candidates left (by
      // the terms read and the bounds of the others) are many for their postings
      int unread = others;
      for (int i = others - 1; i >= 0; i--) {
        int t = byBound[i];
        double postingsPerWindow = 0;
        for (int f = 0; f < nf; f++) {
          postingsPerWindow += perWindow[t][f];
        }
        if (survivors(model, candidates, readTerms, reads, ratio, boundGrowth[i], cut) * READ_PER_CANDIDATE
            < postingsPerWindow) {
          break;
        }
        read[t] = true;
        readTerms[reads++] = t;
        readPairs(postings[t], lengths, scale[t], lo, hi, held[t], freqs[t], ratio[t]);
        unread = i;
      }
      int lazies = 0;
      for (int i = 0; i < unread; i++) {
        lazyTerms[lazies++] = byBound[i];
      }
      double restGrowth = unread > 0 ? boundGrowth[unread - 1] : 1; // of the non-essential terms not read
      for (int word = 0; word < WINDOW / 64; word++) {
        long bits = candidates[word];
        candidates[word] = 0;
        while (bits != 0) {
          int bit = Long.numberOfTrailingZeros(bits);
          bits &= bits - 1;
          int slot = word * 64 + bit;
          int doc = lo + slot;
          if (top.full()) {
            if (top.worstScore() != cutWorst) {
              cutWorst = top.worstScore();
              cut = cut(model, cutWorst);
            }
            double growth = 1;
            for (int i = 0; i < reads; i++) {
              int t = readTerms[i];
              growth *= model.growth(t, ratio[t][slot]);
            }
            if (growth * restGrowth < cut) {
              continue;
            }
            if (lazies > 0) {
              for (int i = 0; i < lazies; i++) {
                int t = lazyTerms[i];
                double r = 0;
                for (int f = 0; f < nf; f++) {
                  PostingsEnum p = postings[t][f];
                  if (p != null && p.docID() < doc) {
                    p.advance(doc);
                  }
                  freqs[t][f][slot] = p != null && p.docID() == doc ? p.freq() : 0;
                  if (freqs[t][f][slot] > 0) {
                    r += scale[t][f] * freqs[t][f][slot] / lengths[f].get(doc);
                  }
                }
                growth *= model.growth(t, r);
              }
              if (growth < cut) {
                continue;
              }
            }
          }
          double sum = 0;
          for (int t = 0; t < nt; t++) {
            double g = 0;
            for (int f = 0; f < nf; f++) {
              // a term not read: its frequency was just taken from its postings, above
              int freq = read[t] ? (int) (held[t][f][word] >>> bit & 1) * freqs[t][f][slot] : freqs[t][f][slot];
              if (freq > 0) {
                g += model.foreground(t, f, freq, lengths[f].get(doc));
              }
            }
            if (g > 0) {
              sum += delta(model, t, g, memoKeys[t], memoDeltas[t]);
            }
          }
          top.offer(doc, model.baseline + sum);
        }
      }
      for (int i = 0; i < reads; i++) {
        int t = readTerms[i];
        Arrays.fill(ratio[t], 0, hi - lo, 0);
        for (int f = 0; f < nf; f++) {
          Arrays.fill(held[t][f], 0);
        }
      }
    }
  }

  /** Reads a term's postings of docids lo to hi - 1, field by field: which entities hold it
   * ({@code held}), with what frequency, and the sum of scale n(t,e_f) / |e_f| over the fields
   * ({@code ratio}, by docid - lo). */
  private static void readPairs(PostingsEnum[] postings, IntBuffer[] lengths, double[] scale, int lo, int hi,
      long[][] held, int[][] freqs, double[] ratio) throws IOException {
    for (int f = 0; f < postings.length; f++) {
      PostingsEnum p = postings[f];
      if (p == null) {
        continue;
      }
      int doc = p.docID();
      if (doc < lo) {
        doc = p.advance(lo);
      }
      IntBuffer length = lengths[f];
      long[] bits = held[f];
      int[] pairFreqs = freqs[f];
      double k = scale[f];
      for (; doc < hi; doc = p.nextDoc()) {
        int slot = doc - lo;
        int freq = p.freq();
        bits[slot >>> 6] |= 1L << slot;
        pairFreqs[slot] = freq;
        ratio[slot] += k * freq / length.get(doc);
      }
    }
  }

  /** Clears the candidates whose growth over the terms read ({@code ratio}), times {@code rest}, is
   * below {@code cut}; returns how many are left. */
  private static int survivors(LanguageModel model, long[] candidates, int[] terms, int count, double[][] ratio,
      double rest, double cut) {
    int left = 0;
    for (int word = 0; word < candidates.length; word++) {
      long bits = candidates[word];
      long kept = bits;
      while (bits != 0) {
        int bit = Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
        double growth = rest;
        for (int i = 0; i < count; i++) {
          growth *= model.growth(terms[i], ratio[terms[i]][word * 64 + bit]);
        }
        if (growth < cut) {
          kept &= ~(1L << bit);
        }
      }
      candidates[word] = kept;
      left += Long.bitCount(kept);
    }
    return left;
  }

  /**
   * The growth (see {@link #rankPruned}) below which an entity's log score B + (1/|q|) log(growth)
   * is below {@code worst}: exp(|q| (worst - B)), lowered by a relative 1e-9 so that rounding never
   * prunes an entity that ties or beats it; 0 (no pruning) if that overflows.
   */
  private static double cut(LanguageModel model, double worst) {
    double growth = Math.exp(model.queryLength * (worst - model.baseline));
    return growth < Double.POSITIVE_INFINITY ? growth * (1 - 1e-9) : 0;
  }

  /** Entries of a term's memo of deltas (a power of 2). */
  private static final int DELTA_MEMO = 1 << 12;

  /** {@link LanguageModel#delta} of a positive foreground through a direct-mapped memo keyed by
   * the foreground's bits (0, never a key, marks an empty entry): the same number, fewer logs. */
  private static double delta(LanguageModel model, int t, double foreground, long[] keys, double[] deltas) {
    long bits = Double.doubleToRawLongBits(foreground);
    int slot = (int) ((bits * 0x9E3779B97F4A7C15L) >>> (64 - 12));
    if (keys[slot] == bits) {
      return deltas[slot];
    }
    double delta = model.delta(t, foreground);
    keys[slot] = bits;
    deltas[slot] = delta;
    return delta;
  }

  /** An upper bound of field f's foreground over the postings of docids lo to hi - 1. */
  private static double maxForeground(LanguageModel model, int t, int f, ImpactsEnum impacts, int lo, int hi)
      throws IOException {
    double best = 0;
    int from = lo;
    while (from < hi) {
      impacts.advanceShallow(from);
      Impacts levels = impacts.getImpacts();
      int level = 0;
      while (level < levels.numLevels() - 1 && levels.getDocIdUpTo(level) < hi - 1) {
        level++;
      }
      for (Impact impact : levels.getImpacts(level)) {
        int length = Math.max(1, SmallFloat.byte4ToInt((byte) impact.norm));
        best = Math.max(best, model.foreground(t, f, impact.freq, length));
      }
      int upTo = levels.getDocIdUpTo(level);
      if (upTo >= hi - 1) {
        break;
      }
      from = upTo + 1;
    }
    return best;
  }

  /** Other models: offers every entity holding a query term in a field the model reads to {@code
   * top}, scoring one document at a time over the union of those (term, field) postings. */
  private static void documentAtATime(LeafReader leaf, LanguageModel model, IntBuffer[] lengths, TopEntities top)
      throws IOException {
    int pairs = model.terms.length * model.fields.length;
    PostingsEnum[] postings = new PostingsEnum[pairs];
    int[] current = new int[pairs];
    for (int pair = 0; pair < pairs; pair++) {
      postings[pair] = model.reads(pair) ? postings(leaf, model, pair) : null;
      current[pair] = postings[pair] == null ? DocIdSetIterator.NO_MORE_DOCS : postings[pair].nextDoc();
    }
    int[] freqs = new int[pairs];
    while (true) {
      int doc = DocIdSetIterator.NO_MORE_DOCS;
      for (int c : current) {
        doc = Math.min(doc, c);
      }
      if (doc == DocIdSetIterator.NO_MORE_DOCS) {
        return;
      }
      for (int pair = 0; pair < pairs; pair++) {
        if (current[pair] == doc) {
          freqs[pair] = postings[pair].freq();
          current[pair] = postings[pair].nextDoc();
        } else {
          freqs[pair] = 0;
        }
      }
      top.offer(doc, model.score(doc, freqs, lengths));
    }
  }

  /**
   * Lucene BM25 top k over one field ({@code bm25 FIELD K1 B}) or BM25F over several
   * ({@code bm25f K1 B FIELD WEIGHT ...}, Lucene's CombinedFieldQuery), then a {@code k K} line and
   * {@code term COUNT TERM} lines (a repeated query term is boosted by its count), and optionally
   * {@code span SLOP ORDERED BOOST TERM_A TERM_B} lines (BM25 field only): Lucene's SpanNearQuery
   * of the two terms, boosted, the span-query form of SDM's windows a Lucene user would write. Hits
   * are collected so that ties are ordered by entity id, not docid.
   */
  public static byte[] bm25(LeafReader leaf, String request) throws IOException {
    String[] similarity = null;
    int k = 0;
    BooleanQuery.Builder builder = new BooleanQuery.Builder();
    int terms = 0;
    for (String line : request.split("\n")) {
      String[] items = line.split("\t", line.startsWith("term\t") ? 3 : -1);
      if (items[0].equals("bm25") || items[0].equals("bm25f")) {
        similarity = items;
      } else if (items[0].equals("k")) {
        k = Integer.parseInt(items[1]);
      } else if (items[0].equals("term")) {
        Query query = termQuery(similarity, items[2]);
        int count = Integer.parseInt(items[1]);
        builder.add(count == 1 ? query : new BoostQuery(query, count), BooleanClause.Occur.SHOULD);
        terms++;
      } else if (items[0].equals("span")) {
        SpanQuery[] pair = {new SpanTermQuery(new Term(similarity[1], items[4])),
            new SpanTermQuery(new Term(similarity[1], items[5]))};
        Query near = new SpanNearQuery(pair, Integer.parseInt(items[1]), Boolean.parseBoolean(items[2]));
        builder.add(new BoostQuery(near, Float.parseFloat(items[3])), BooleanClause.Occur.SHOULD);
      } else {
        throw new IllegalArgumentException("unknown request line: " + line);
      }
    }
    boolean combined = similarity[0].equals("bm25f");
    IndexSearcher searcher = new IndexSearcher(leaf);
    searcher.setSimilarity(new BM25Similarity(
        Float.parseFloat(similarity[combined ? 1 : 2]), Float.parseFloat(similarity[combined ? 2 : 3])));
    TopEntities top = new TopEntities(Math.min(k, leaf.maxDoc()), state(leaf).idRank(leaf));
    if (terms > 0 && k > 0) {
      searcher.search(builder.build(), new TopCollector(top));
    }
    return top.toBytes(terms);
  }

  /** Collects into {@link TopEntities}, letting Lucene skip (block-max WAND / MaxScore) only the
   * documents scoring below the k-th best so far, so that ties with it are kept. */
  private static final class TopCollector implements Collector {
    private final TopEntities top;

    TopCollector(TopEntities top) {
      this.top = top;
    }

    @Override
    public ScoreMode scoreMode() {
      return ScoreMode.TOP_SCORES;
    }

    @Override
    public LeafCollector getLeafCollector(LeafReaderContext context) {
      return new LeafCollector() {
        private Scorable scorer;
        private float minimum = Float.NEGATIVE_INFINITY;

        @Override
        public void setScorer(Scorable scorer) {
          this.scorer = scorer;
        }

        @Override
        public void collect(int doc) throws IOException {
          if (top.offer(context.docBase + doc, scorer.score()) && top.full() && (float) top.worstScore() > minimum) {
            minimum = (float) top.worstScore();
            scorer.setMinCompetitiveScore(minimum);
          }
        }
      };
    }
  }

  private static Query termQuery(String[] similarity, String term) {
    if (similarity[0].equals("bm25")) {
      return new TermQuery(new Term(similarity[1], term));
    }
    CombinedFieldQuery.Builder builder = new CombinedFieldQuery.Builder();
    for (int i = 3; i + 1 < similarity.length; i += 2) {
      builder.addField(similarity[i], Float.parseFloat(similarity[i + 1]));
    }
    return builder.addTerm(new BytesRef(term)).build();
  }

  static ByteBuffer buffer(int size) {
    return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** What is cached per index segment (weakly keyed by it): exact field lengths and the
   * entity-id order, memory-mapped from the index's side files ({@link SideFiles}); an index
   * without a field's {@code FIELD_length.npy} has its lengths read from the {@code FIELD_length}
   * doc values, one without {@code entity_id_rank.npy} has its order given by {@link #install}. */
  private static final class IndexState {
    private final int maxDoc;
    private IntBuffer idRank;
    private final Map<String, IntBuffer> lengths = new HashMap<>();
    private final Map<String, Boolean> normsBound = new HashMap<>();
    private final Map<String, FieldValues> values = new HashMap<>();

    IndexState(int maxDoc) {
      this.maxDoc = maxDoc;
    }

    synchronized void setOrder(int[] order) {
      if (order.length != maxDoc) {
        throw new IllegalArgumentException("entity order has " + order.length + " docids, the index " + maxDoc);
      }
      int[] rank = new int[order.length];
      for (int i = 0; i < order.length; i++) {
        rank[order[i]] = i;
      }
      idRank = IntBuffer.wrap(rank);
    }

    /** Each docid's position in entity-id order: installed, or else {@code entity_id_rank.npy}. */
    synchronized IntBuffer idRank(LeafReader leaf) throws IOException {
      if (idRank == null) {
        idRank = SideFiles.map(leaf, "entity_id_rank.npy", maxDoc);
        if (idRank == null) {
          throw new IllegalStateException("entity order not installed");
        }
      }
      return idRank;
    }

    synchronized IntBuffer[] lengths(LeafReader leaf, String[] fields) throws IOException {
      IntBuffer[] result = new IntBuffer[fields.length];
      for (int f = 0; f < fields.length; f++) {
        IntBuffer cached = lengths.get(fields[f]);
        if (cached == null) {
          cached = SideFiles.map(leaf, fields[f] + "_length.npy", maxDoc);
        }
        if (cached == null) {
          int[] read = new int[maxDoc];
          NumericDocValues values = leaf.getNumericDocValues(fields[f] + "_length");
          if (values != null) {
            for (int doc = values.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = values.nextDoc()) {
              read[doc] = (int) values.longValue();
            }
          }
          cached = IntBuffer.wrap(read);
        }
        lengths.put(fields[f], cached);
        result[f] = cached;
      }
      return result;
    }

    synchronized FieldValues values(LeafReader leaf, Analyzer analyzer, String field) throws IOException {
      FieldValues cached = values.get(field);
      if (cached == null) {
        cached = FieldValues.read(leaf, analyzer, field, lengths(leaf, new String[] {field})[0]);
        values.put(field, cached);
      }
      return cached;
    }

    /** Whether, for every field that can add to the foreground, Lucene's norms decode (BM25
     * length encoding) to no more than the exact length of any entity with a non-empty field:
     * then impacts bound n(t,e_f)/|e_f| from above. */
    synchronized boolean normsBoundLengths(LeafReader leaf, LanguageModel model, IntBuffer[] lengths) throws IOException {
      for (int f = 0; f < model.fields.length; f++) {
        if (!model.hasForeground(f)) {
          continue;
        }
        Boolean ok = normsBound.get(model.fields[f]);
        if (ok == null) {
          ok = true;
          NumericDocValues norms = leaf.getNormValues(model.fields[f]);
          IntBuffer length = lengths[f];
          if (norms == null) {
            ok = leaf.terms(model.fields[f]) == null;
          } else {
            for (int doc = norms.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS && ok; doc = norms.nextDoc()) {
              ok = length.get(doc) == 0 || SmallFloat.byte4ToInt((byte) norms.longValue()) <= length.get(doc);
            }
          }
          normsBound.put(model.fields[f], ok);
        }
        if (!ok) {
          return false;
        }
      }
      return true;
    }
  }
}
