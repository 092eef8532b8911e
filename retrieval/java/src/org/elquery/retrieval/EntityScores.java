package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.sandbox.search.CombinedFieldQuery;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.similarities.BM25Similarity;
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
   * id. Entities holding a query term are scored document at a time over the union of the terms'
   * postings. An entity without any has the smoothing-only score: the same for all of them when
   * every field is Jelinek-Mercer smoothed, falling with the field length for a single Dirichlet
   * field; then only the first of them in entity-id (or length) order are visited, otherwise all.
   */
  public static byte[] top(LeafReader leaf, String request) throws IOException {
    LanguageModel model = LanguageModel.parse(leaf, request);
    IndexState state = state(leaf);
    TopEntities top = new TopEntities(Math.min(model.k, leaf.maxDoc()), state.idRank());
    if (model.terms.length > 0 && model.k > 0) {
      int[][] lengths = state.lengths(leaf, model.fields);
      FixedBitSet matched = scoreMatching(leaf, model, lengths, top);
      int[] zero = new int[model.terms.length * model.fields.length];
      int sole = model.soleDirichletField();
      boolean monotone = model.constantBaseline() || sole >= 0;
      int[] order = model.constantBaseline() ? state.byId() : sole >= 0 ? state.byLength(leaf, model.fields[sole]) : null;
      for (int i = 0; i < leaf.maxDoc(); i++) {
        int doc = order == null ? i : order[i];
        if (matched.get(doc)) {
          continue;
        }
        double score = model.score(doc, zero, lengths);
        if (monotone && top.full() && score < top.worstScore()) {
          break;
        }
        top.offer(doc, score);
      }
    }
    return top.toBytes(model.terms.length);
  }

  /** Offers every entity holding a query term to {@code top}; returns the set of those entities. */
  private static FixedBitSet scoreMatching(LeafReader leaf, LanguageModel model, int[][] lengths, TopEntities top)
      throws IOException {
    int pairs = model.terms.length * model.fields.length;
    PostingsEnum[] postings = new PostingsEnum[pairs];
    int[] current = new int[pairs];
    for (int pair = 0; pair < pairs; pair++) {
      postings[pair] = postings(leaf, model, pair);
      current[pair] = postings[pair] == null ? DocIdSetIterator.NO_MORE_DOCS : postings[pair].nextDoc();
    }
    FixedBitSet matched = new FixedBitSet(leaf.maxDoc());
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
   * {@code term COUNT TERM} lines (a repeated query term is boosted by its count). Every hit tied
   * with the k-th score is fetched so that ties are ordered by entity id, not docid.
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
    Query query = builder.build();
    TopEntities top = new TopEntities(Math.min(k, leaf.maxDoc()), state(leaf).idRank());
    if (terms > 0 && k > 0) {
      ScoreDoc[] hits;
      int n = k;
      while (true) {
        hits = searcher.search(query, n).scoreDocs;
        if (hits.length < n || hits[n - 1].score < hits[k - 1].score) {
          break;
        }
        n *= 2;
      }
      for (ScoreDoc hit : hits) {
        top.offer(hit.doc, hit.score);
      }
    }
    return top.toBytes(terms);
  }

  private static Query termQuery(String[] similarity, String term) {
    if (similarity[0].equals("bm25")) {
      return new TermQuery(new Term(similarity[1], term));
    }
    CombinedFieldQuery.Builder builder = new CombinedFieldQuery.Builder();
    for (int i = 3; i + 1 < similarity.length; i += 2) {
      builder.addField(similarity[i], Float.parseFloat(similarity[i + 1]));
    }
    return builder.addTerm(new org.apache.lucene.util.BytesRef(term)).build();
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
