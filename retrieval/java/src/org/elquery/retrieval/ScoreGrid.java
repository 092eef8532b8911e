package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.TermState;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.BytesRef;

/**
 * Several (language model, text) scorings of one candidate list (the LTR features of a query:
 * the query and each of its mentions under six single-field models and MLM, methods.md section 9)
 * in one pass: each text analyzed once, the candidates decoded once, each (field, term) pair's
 * collection frequency and postings looked up once (one seek in the field's terms) and its
 * frequencies over the candidates read once, whatever number of scorings read it. Each scoring's
 * {@link LanguageModel} is built from the same statistics and scores with the same arithmetic as
 * {@link EntityScores#scoreEach}'s, so the numbers are the same to the bit.
 */
final class ScoreGrid implements LanguageModel.Statistics {
  private final LeafReader leaf;
  private final int[] docids;
  private final Lengths lengths;
  private final LanguageModel.ModelLines[] parsed;
  /** Per text, its analyzed length |q| and its term lines ({@link LanguageModel#termLines}). */
  private final int[] queryLengths;
  private final List<List<String[]>> termLines;
  /** Per (model, text), its model once built; per model, the field lengths of its fields. */
  private final LanguageModel[][] built;
  private final IntBuffer[][] fieldLengths;
  /** Per (model, text), its {@link #columns} once looked up. */
  private final int[][][][] columnsOf;
  /** The terms of text 0, known to the collection or not (read on first use). */
  private Set<String> firstTerms;
  private final Map<String, Terms> terms = new HashMap<>();
  /** Per field, per term: its collection frequency and frequencies over the candidates. */
  private final Map<String, Map<String, Pair>> pairs = new HashMap<>();
  /** Per field, the terms enum, and the postings enum to reuse (Lucene reuses one only within a
   * field's options): the calling thread's ({@link #ENUMS}). */
  private final Map<String, TermsEnum> termsEnums;
  private final Map<String, PostingsEnum> postingsOf;
  /** Per thread, per index segment: its terms and postings enums by field, reused from grid to
   * grid (each by one read at a time: a seek, then its postings read at once). */
  private static final ThreadLocal<Map<LeafReader, Enums>> ENUMS = ThreadLocal.withInitial(WeakHashMap::new);

  private static final class Enums {
    final Map<String, TermsEnum> terms = new HashMap<>();
    final Map<String, PostingsEnum> postings = new HashMap<>();
  }

  /** The index's terms dictionary entries read lately, by term and field; the rows of this
   * grid's terms. */
  private final TermCache cache;
  private final Map<String, AtomicReferenceArray<TermCache.Entry>> cachedRows = new HashMap<>();

  /** A pair whose field lacks the term. */
  private static final Pair ABSENT = new Pair(0, null);

  /** A (field, term) pair: cf(t, f), and n(t, e_f) of each candidate (null when no entity holds the term in the field). */
  private static final class Pair {
    final long totalTermFreq;
    final int[] freqs;

    Pair(long totalTermFreq, int[] freqs) {
      this.totalTermFreq = totalTermFreq;
      this.freqs = freqs;
    }
  }

  /**
   * The answers {@link EntityScores#scoreEach} gives to the requests of the scorings (model {@code
   * scorings[2s]}, text {@code scorings[2s + 1]}), each of {@code models[m]}'s request lines, a
   * {@code text} line of {@code texts[t]} and the candidates {@code docids} (ascending), as one
   * matrix: the float64 log scores of each scoring's candidates, scoring after scoring, then the
   * int32 known terms of each scoring (little-endian).
   */
  static byte[] run(LeafReader leaf, Analyzer analyzer, Lengths lengths, String[] models, String[] texts,
      int[] scorings, int[] docids) throws IOException {
    ScoreGrid grid = new ScoreGrid(leaf, analyzer, lengths, models, texts, docids);
    int count = scorings.length / 2;
    ByteBuffer out = EntityScores.buffer(count * (4 + 8 * docids.length));
    for (int s = 0; s < count; s++) {
      grid.score(scorings[2 * s], scorings[2 * s + 1], out);
    }
    for (int s = 0; s < count; s++) {
      out.putInt(grid.model(scorings[2 * s], scorings[2 * s + 1]).terms.length);
    }
    return out.array();
  }

  /** A grid over the candidates {@code docids} (ascending) for texts {@code texts} (each analyzed
   * here, once) and models {@code models} (request lines), scored by {@link #score}. */
  ScoreGrid(LeafReader leaf, Analyzer analyzer, Lengths lengths, String[] models, String[] texts, int[] docids)
      throws IOException {
    this.leaf = leaf;
    this.docids = docids;
    this.lengths = lengths;
    cache = TermCache.of(leaf);
    Enums enums = ENUMS.get().computeIfAbsent(leaf, l -> new Enums());
    termsEnums = enums.terms;
    postingsOf = enums.postings;
    parsed = new LanguageModel.ModelLines[models.length];
    for (int m = 0; m < models.length; m++) {
      parsed[m] = LanguageModel.modelLines(models[m]);
    }
    queryLengths = new int[texts.length];
    termLines = new ArrayList<>(texts.length);
    for (int t = 0; t < texts.length; t++) {
      String[] tokens = texts[t].isEmpty() ? new String[0] : DependenceModel.terms(analyzer, texts[t]);
      queryLengths[t] = tokens.length;
      termLines.add(LanguageModel.termLines(tokens));
    }
    built = new LanguageModel[models.length][texts.length];
    columnsOf = new int[models.length][texts.length][][];
    fieldLengths = new IntBuffer[models.length][];
  }

  /** The model of text {@code t} under model {@code m} (built on first use; from text 0's model
   * under {@code m} when each term of text {@code t} is one of text 0's, as a mention's is of its
   * query's). */
  LanguageModel model(int m, int t) throws IOException {
    if (built[m][t] == null) {
      if (t > 0) {
        if (firstTerms == null) {
          firstTerms = new HashSet<>();
          for (String[] line : termLines.get(0)) {
            firstTerms.add(line[2]);
          }
        }
        built[m][t] = LanguageModel.sharing(model(m, 0), firstTerms, queryLengths[t], termLines.get(t));
      }
      if (built[m][t] == null) {
        built[m][t] = LanguageModel.of(this, parsed[m], queryLengths[t], termLines.get(t), docids);
      }
      if (fieldLengths[m] == null) {
        fieldLengths[m] = lengths.of(built[m][t].fields);
      }
    }
    return built[m][t];
  }

  /** The log score of candidate number {@code i} for text {@code t} under model {@code m}: what
   * {@link #run} answers for it, -infinity when no term of the text is in the collection. */
  double score(int m, int t, int i) throws IOException {
    LanguageModel model = model(m, t);
    if (model.terms.length == 0) {
      return Double.NEGATIVE_INFINITY;
    }
    int[][] columns = columns(m, t);
    int[] freqs = new int[columns.length];
    for (int pair = 0; pair < columns.length; pair++) {
      freqs[pair] = columns[pair] == null ? 0 : columns[pair][i];
    }
    return model.score(docids[i], freqs, fieldLengths[m]);
  }

  /** The frequencies n(t, e_f) over the candidates of each (term, field) pair of text {@code t}'s
   * model under model {@code m}, at term * fields + f (null: no entity holds the term in the
   * field); looked up on first use. */
  private int[][] columns(int m, int t) throws IOException {
    if (columnsOf[m][t] == null) {
      LanguageModel model = model(m, t);
      int nf = model.fields.length;
      int[][] columns = new int[model.terms.length * nf][];
      for (int term = 0; term < model.terms.length; term++) {
        for (int f = 0; f < nf; f++) {
          columns[term * nf + f] = pair(model.fields[f], model.terms[term]).freqs;
        }
      }
      columnsOf[m][t] = columns;
    }
    return columnsOf[m][t];
  }

  /** Exact field lengths per docid, of the index's fields (cached per index). */
  interface Lengths {
    IntBuffer[] of(String[] fields) throws IOException;
  }

  /** Appends the log score of each candidate for text {@code t} under model {@code m}. */
  void score(int m, int t, ByteBuffer out) throws IOException {
    LanguageModel model = model(m, t);
    IntBuffer[] lengths = fieldLengths[m];
    int[][] columns = columns(m, t);
    if (model.jelinekMercer()) {
      for (double score : jelinekMercer(model, columns, lengths)) {
        out.putDouble(score);
      }
      return;
    }
    int[] freqs = new int[columns.length];
    for (int i = 0; i < docids.length; i++) {
      for (int pair = 0; pair < columns.length; pair++) {
        freqs[pair] = columns[pair] == null ? 0 : columns[pair][i];
      }
      out.putDouble(model.score(docids[i], freqs, lengths));
    }
  }

  /** {@link LanguageModel#score} of each candidate under a Jelinek-Mercer model, computed column
   * by column (term by term, field by field, over the candidates holding the pair): per candidate
   * the same additions in the same order (g_t(e) over the fields in order, then B + the sum of
   * the terms' deltas in term order), so the same numbers to the bit. */
  private double[] jelinekMercer(LanguageModel model, int[][] columns, IntBuffer[] lengths) {
    int n = docids.length;
    int nf = model.fields.length;
    double[] sum = new double[n];
    double[] g = new double[n];
    for (int term = 0; term < model.terms.length; term++) {
      boolean held = false;
      for (int f = 0; f < nf; f++) {
        int[] column = columns[term * nf + f];
        if (column == null || !model.hasForeground(term, f)) {
          continue;
        }
        if (!held) {
          Arrays.fill(g, 0);
          held = true;
        }
        IntBuffer length = lengths[f];
        for (int i = 0; i < n; i++) {
          if (column[i] > 0) {
            g[i] += model.foreground(term, f, column[i], length.get(docids[i]));
          }
        }
      }
      if (held) {
        for (int i = 0; i < n; i++) {
          if (g[i] > 0) {
            sum[i] += model.delta(term, g[i]);
          }
        }
      }
    }
    for (int i = 0; i < n; i++) {
      sum[i] = model.baseline + sum[i];
    }
    return sum;
  }

  private Terms terms(String field) throws IOException {
    if (!terms.containsKey(field)) {
      terms.put(field, leaf.terms(field));
    }
    return terms.get(field);
  }

  @Override
  public long collectionLength(String field) throws IOException {
    Terms fieldTerms = terms(field);
    return fieldTerms == null ? 0 : fieldTerms.getSumTotalTermFreq();
  }

  @Override
  public int docCount(String field) throws IOException {
    Terms fieldTerms = terms(field);
    return fieldTerms == null ? 0 : fieldTerms.getDocCount();
  }

  @Override
  public long totalTermFreq(String field, String term) throws IOException {
    return pair(field, term).totalTermFreq;
  }

  /** The (field, term) pair, read on first use: its terms dictionary entry (from the index's
   * {@link TermCache}, else one seek in the field's terms, then cached), then the term's postings
   * read over the candidates. */
  private Pair pair(String field, String term) throws IOException {
    Map<String, Pair> ofField = pairs.computeIfAbsent(field, f -> new HashMap<>());
    Pair pair = ofField.get(term);
    if (pair == null) {
      pair = read(field, term);
      ofField.put(term, pair);
    }
    return pair;
  }

  private Pair read(String field, String term) throws IOException {
    TermsEnum iterator = termsEnum(field);
    if (iterator == null) {
      return ABSENT;
    }
    int slot = cache.slot(field);
    AtomicReferenceArray<TermCache.Entry> row = slot < 0 ? null : cachedRows.computeIfAbsent(term, cache::row);
    TermCache.Entry entry = row == null ? null : row.get(slot);
    if (entry == null) {
      BytesRef bytes = new BytesRef(term);
      entry = iterator.seekExact(bytes) ? new TermCache.Entry(bytes, iterator) : TermCache.ABSENT;
      if (row != null) {
        cache.put(row, slot, entry);
      }
    } else if (entry.state != null) {
      iterator.seekExact(entry.bytes, entry.state);
    }
    return entry.state == null ? ABSENT : new Pair(entry.totalTermFreq, freqs(field, iterator, entry.docFreq));
  }

  private TermsEnum termsEnum(String field) throws IOException {
    if (!termsEnums.containsKey(field)) {
      Terms fieldTerms = terms(field);
      termsEnums.put(field, fieldTerms == null ? null : fieldTerms.iterator());
    }
    return termsEnums.get(field);
  }

  /** A term whose postings are at most this many times the candidates is read posting by posting
   * (nextDoc), a longer one by skipping to each candidate (advance). */
  private static final int SCAN_RATIO = 8;

  /** n(t, e_f) of each candidate for the term {@code iterator} is on, in {@code field}, which
   * {@code docFreq} entities hold. */
  private int[] freqs(String field, TermsEnum iterator, int docFreq) throws IOException {
    PostingsEnum postings = iterator.postings(postingsOf.get(field), PostingsEnum.FREQS);
    postingsOf.put(field, postings);
    int[] freqs = new int[docids.length];
    int n = docids.length;
    if (docFreq <= SCAN_RATIO * (long) n) {
      int i = 0;
      int last = docids[n - 1];
      for (int doc = postings.nextDoc(); doc <= last; doc = postings.nextDoc()) {
        while (docids[i] < doc) {
          i++;
        }
        if (docids[i] == doc) {
          int freq = postings.freq();
          while (i < n && docids[i] == doc) {
            freqs[i++] = freq;
          }
          if (i == n) {
            break;
          }
        }
      }
      return freqs;
    }
    int doc = -1;
    for (int i = 0; i < n && doc != DocIdSetIterator.NO_MORE_DOCS; i++) {
      if (doc < docids[i]) {
        doc = postings.advance(docids[i]);
      }
      if (doc == docids[i]) {
        freqs[i] = postings.freq();
      }
    }
    return freqs;
  }

  /**
   * The terms dictionary entries of the (field, term) pairs read lately in an index segment, for
   * every thread: a term's {@link TermState} (to reach its postings without a seek in the terms
   * dictionary), cf(t, f) and its document frequency, or that the field lacks the term; kept by
   * term (one lookup for a term's fields), then by field slot. At most {@link #CAPACITY} entries
   * (some tens of MB): when full, it is emptied and fills again.
   */
  static final class TermCache {
    static final int CAPACITY = 1 << 17;
    /** Fields with entries: at most this many (the others are not cached). */
    static final int FIELDS = 32;
    static final Entry ABSENT = new Entry(null, null, 0, 0);
    private static final Map<LeafReader, TermCache> CACHES = new WeakHashMap<>();
    private final ConcurrentHashMap<String, Integer> slots = new ConcurrentHashMap<>();
    /** Per term, its entries by field slot. */
    private final ConcurrentHashMap<String, AtomicReferenceArray<Entry>> terms = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();

    /** A term's entry in a field: its UTF-8 (never changed) and state (null: the field lacks it),
     * cf(t, f) and df. */
    static final class Entry {
      final BytesRef bytes;
      final TermState state;
      final long totalTermFreq;
      final int docFreq;

      Entry(BytesRef bytes, TermState state, long totalTermFreq, int docFreq) {
        this.bytes = bytes;
        this.state = state;
        this.totalTermFreq = totalTermFreq;
        this.docFreq = docFreq;
      }

      /** The entry of the term {@code iterator} is on, {@code bytes}. */
      Entry(BytesRef bytes, TermsEnum iterator) throws IOException {
        this(bytes, iterator.termState(), iterator.totalTermFreq(), iterator.docFreq());
      }
    }

    static TermCache of(LeafReader leaf) {
      synchronized (CACHES) {
        return CACHES.computeIfAbsent(leaf, l -> new TermCache());
      }
    }

    /** The slot of {@code field} in a term's entries, -1 if the cache keeps none for it. */
    int slot(String field) {
      Integer slot = slots.get(field);
      if (slot == null) {
        synchronized (slots) {
          slot = slots.computeIfAbsent(field, f -> slots.size());
        }
      }
      return slot < FIELDS ? slot : -1;
    }

    /** The entries of {@code term}, by field slot (null: not read yet). */
    AtomicReferenceArray<Entry> row(String term) {
      AtomicReferenceArray<Entry> row = terms.get(term);
      if (row == null) {
        row = new AtomicReferenceArray<>(FIELDS);
        AtomicReferenceArray<Entry> before = terms.putIfAbsent(term, row);
        row = before == null ? row : before;
      }
      return row;
    }

    /** Sets an entry of {@code row} (one of {@link #row}'s), emptying the cache when full. */
    void put(AtomicReferenceArray<Entry> row, int slot, Entry entry) {
      if (size.incrementAndGet() > CAPACITY) {
        terms.clear();
        size.set(1);
      }
      row.set(slot, entry);
    }
  }
}
