package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
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
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.FixedBitSet;

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

  private static IndexState state(LeafReader leaf) {
    synchronized (STATES) {
      return STATES.computeIfAbsent(leaf, l -> new IndexState(l.maxDoc()));
    }
  }

  /** Log scores (Eq. 16) of the request's docids (ascending), or of every entity without docids. */
  public static byte[] score(LeafReader leaf, String request) throws IOException {
    LanguageModel model = LanguageModel.parse(leaf, request);
    int[][] lengths = state(leaf).lengths(leaf, model.fields);
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

  /** Postings of the (term, field) pair number {@code pair} = t * fields + f, or null. */
  private static PostingsEnum postings(LeafReader leaf, LanguageModel model, int pair) throws IOException {
    int fields = model.fields.length;
    Term term = new Term(model.fields[pair % fields], model.terms[pair / fields]);
    return leaf.postings(term, PostingsEnum.FREQS);
  }

  /**
   * The exact top k entities of the whole index by log score (Eq. 16), best first, ties by entity
   * id. Only the entities holding a query term are scored one by one: term at a time when every
   * field is Jelinek-Mercer smoothed, document at a time otherwise. An entity without any query
   * term has the smoothing-only score: the same for all of them under Jelinek-Mercer smoothing
   * (the first in entity-id order fill the ranking), falling with the field length for a single
   * Dirichlet field (visited by length until none can enter); otherwise all are scored.
   */
  public static byte[] top(LeafReader leaf, String request) throws IOException {
    LanguageModel model = LanguageModel.parse(leaf, request);
    IndexState state = state(leaf);
    TopEntities top = new TopEntities(Math.min(model.k, leaf.maxDoc()), state.idRank());
    if (model.terms.length == 0 || model.k == 0) {
      return top.toBytes(model.terms.length);
    }
    int[][] lengths = state.lengths(leaf, model.fields);
    if (model.jelinekMercer()) {
      rankJelinekMercer(leaf, model, lengths, top, state.byId());
    } else {
      FixedBitSet matched = documentAtATime(leaf, model, lengths, top);
      int[] zero = new int[model.terms.length * model.fields.length];
      int sole = model.soleDirichletField();
      int[] order = sole >= 0 ? state.byLength(leaf, model.fields[sole]) : null;
      for (int i = 0; i < leaf.maxDoc(); i++) {
        int doc = order == null ? i : order[i];
        if (matched.get(doc)) {
          continue;
        }
        double score = model.score(doc, zero, lengths);
        if (order != null && top.full() && score < top.worstScore()) {
          break;
        }
        top.offer(doc, score);
      }
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
   * {@link LanguageModel#delta} over the terms it holds, then the others (score B) in entity-id
   * order until one is turned away. The sums run term by term in dense arrays: the foregrounds
   * of a term's earlier fields collect first; in the last field's postings an entity not seen for
   * the term gets its delta at once (from a table of the frequent (freq, length) pairs for long
   * postings), the others after the pass. They add the same numbers in the same order as
   * {@link LanguageModel#score}, so ranking and candidate scoring agree to the last bit.
   */
  private static void rankJelinekMercer(LeafReader leaf, LanguageModel model, int[][] lengths, TopEntities top,
      int[] byId) throws IOException {
    Scratch scratch = SCRATCH.get().sized(leaf.maxDoc());
    double[] foreground = scratch.foreground;
    double[] sum = scratch.sum;
    int[] union = scratch.union;
    FixedBitSet pendingSet = scratch.pending;
    FixedBitSet matched = scratch.matched;
    int unionSize = 0;
    int fields = model.fields.length;
    int last = -1;
    for (int f = 0; f < fields; f++) {
      last = model.hasForeground(f) ? f : last;
    }
    int[] pending = new int[16];
    try {
      for (int t = 0; t < model.terms.length; t++) {
        int pendingSize = 0;
        for (int f = 0; f <= last; f++) {
          PostingsEnum postings = model.hasForeground(f) ? postings(leaf, model, t * fields + f) : null;
          if (postings == null) {
            continue;
          }
          int[] length = lengths[f];
          if (f < last) {
            for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
              if (!pendingSet.getAndSet(doc)) {
                if (pendingSize == pending.length) {
                  pending = Arrays.copyOf(pending, 2 * pendingSize);
                }
                pending[pendingSize++] = doc;
              }
              foreground[doc] += model.foreground(f, postings.freq(), length[doc]);
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
              foreground[doc] += model.foreground(f, freq, length[doc]);
              continue;
            }
            double delta;
            if (memo != null && freq < MEMO_FREQS && length[doc] < MEMO_LENGTHS) {
              int slot = freq * MEMO_LENGTHS + length[doc];
              delta = memo[slot];
              if (delta != delta) {
                delta = memo[slot] = model.delta(t, model.foreground(f, freq, length[doc]));
              }
            } else {
              delta = model.delta(t, model.foreground(f, freq, length[doc]));
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
      for (int doc : byId) {
        if (!matched.get(doc) && !top.offer(doc, model.baseline)) {
          break;
        }
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

  /** Other models: offers every entity holding a query term to {@code top}, scoring one document
   * at a time over the union of the terms' postings; returns the set of those entities. */
  private static FixedBitSet documentAtATime(LeafReader leaf, LanguageModel model, int[][] lengths, TopEntities top)
      throws IOException {
    FixedBitSet matched = new FixedBitSet(leaf.maxDoc());
    int pairs = model.terms.length * model.fields.length;
    PostingsEnum[] postings = new PostingsEnum[pairs];
    int[] current = new int[pairs];
    for (int pair = 0; pair < pairs; pair++) {
      postings[pair] = postings(leaf, model, pair);
      current[pair] = postings[pair] == null ? DocIdSetIterator.NO_MORE_DOCS : postings[pair].nextDoc();
    }
    int[] freqs = new int[pairs];
    while (true) {
      int doc = DocIdSetIterator.NO_MORE_DOCS;
      for (int c : current) {
        doc = Math.min(doc, c);
      }
      if (doc == DocIdSetIterator.NO_MORE_DOCS) {
        return matched;
      }
      for (int pair = 0; pair < pairs; pair++) {
        if (current[pair] == doc) {
          freqs[pair] = postings[pair].freq();
          current[pair] = postings[pair].nextDoc();
        } else {
          freqs[pair] = 0;
        }
      }
      matched.set(doc);
      top.offer(doc, model.score(doc, freqs, lengths));
    }
  }

  /**
   * Lucene BM25 top k over one field ({@code bm25 FIELD K1 B}) or BM25F over several
   * ({@code bm25f K1 B FIELD WEIGHT ...}, Lucene's CombinedFieldQuery), then a {@code k K} line and
   * {@code term COUNT TERM} lines (a repeated query term is boosted by its count). Hits are
   * collected so that ties are ordered by entity id, not docid.
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
      } else {
        throw new IllegalArgumentException("unknown request line: " + line);
      }
    }
    boolean combined = similarity[0].equals("bm25f");
    IndexSearcher searcher = new IndexSearcher(leaf);
    searcher.setSimilarity(new BM25Similarity(
        Float.parseFloat(similarity[combined ? 1 : 2]), Float.parseFloat(similarity[combined ? 2 : 3])));
    TopEntities top = new TopEntities(Math.min(k, leaf.maxDoc()), state(leaf).idRank());
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

  /** What is cached per index segment (weakly keyed by it): exact field lengths (from the
   * {@code FIELD_length} doc values) and, once installed, the entity-id order. */
  private static final class IndexState {
    private final int maxDoc;
    private int[] byId;
    private int[] idRank;
    private final Map<String, int[]> lengths = new HashMap<>();
    private final Map<String, int[]> byLength = new HashMap<>();

    IndexState(int maxDoc) {
      this.maxDoc = maxDoc;
    }

    synchronized void setOrder(int[] order) {
      if (order.length != maxDoc) {
        throw new IllegalArgumentException("entity order has " + order.length + " docids, the index " + maxDoc);
      }
      byId = order;
      idRank = new int[order.length];
      for (int i = 0; i < order.length; i++) {
        idRank[order[i]] = i;
      }
    }

    synchronized int[] byId() {
      if (byId == null) {
        throw new IllegalStateException("entity order not installed");
      }
      return byId;
    }

    synchronized int[] idRank() {
      byId();
      return idRank;
    }

    synchronized int[][] lengths(LeafReader leaf, String[] fields) throws IOException {
      int[][] result = new int[fields.length][];
      for (int f = 0; f < fields.length; f++) {
        int[] cached = lengths.get(fields[f]);
        if (cached == null) {
          cached = new int[maxDoc];
          NumericDocValues values = leaf.getNumericDocValues(fields[f] + "_length");
          if (values != null) {
            for (int doc = values.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = values.nextDoc()) {
              cached[doc] = (int) values.longValue();
            }
          }
          lengths.put(fields[f], cached);
        }
        result[f] = cached;
      }
      return result;
    }

    /** Docids by field length ascending, then entity id. */
    synchronized int[] byLength(LeafReader leaf, String field) throws IOException {
      int[] cached = byLength.get(field);
      if (cached == null) {
        int[] length = lengths(leaf, new String[] {field})[0];
        int[] rank = idRank();
        long[] keys = new long[length.length];
        for (int doc = 0; doc < keys.length; doc++) {
          keys[doc] = ((long) length[doc] << 32) | rank[doc];
        }
        Arrays.sort(keys);
        cached = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
          cached[i] = byId[(int) keys[i]];
        }
        byLength.put(field, cached);
      }
      return cached;
    }
  }
}
