package org.elquery.index;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.BytesRef;

/**
 * Static entry points for the per-query work Python asks of Lucene. pyjnius keeps the receiver of
 * an instance method call on a descriptor shared by every object of the class, so two Python
 * threads calling instance methods can swap receivers; static calls carry no receiver, so every
 * call from Python that may run in several threads goes through a static method here or in
 * {@code org.elquery.retrieval.EntityScores}. Both only read shared objects that Lucene makes
 * safe for concurrent use (an Analyzer reuses its token streams per thread; an IndexReader hands
 * out a fresh StoredFields per call). What may hold a user's text (a stored value, a predicate)
 * comes back as UTF-8 ({@link Utf8Texts}), not as Java strings, which pyjnius alters when they begin
 * with U+FEFF or U+FFFE; the analyzer's terms begin with a letter, digit or symbol of a word, never
 * with either.
 */
public final class IndexAccess {
  private IndexAccess() {}

  /** The terms of {@code text} under {@code analyzer}, in order. */
  public static String[] analyze(Analyzer analyzer, String text) {
    List<String> terms = new ArrayList<>();
    try (TokenStream stream = analyzer.tokenStream(null, text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        terms.add(term.toString());
      }
      stream.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return terms.toArray(new String[0]);
  }

  /**
   * Document by document, the stored value of each of {@code fields} ("" when absent): docids x
   * fields texts, as {@link Utf8Texts} (a title may begin with U+FEFF, which a Java string would
   * lose). Only those fields are read. Many documents a call: the titles and short abstracts of a
   * query's candidates (linking/ltr/stored.py) or of a batch of the index (ltr_texts.bin, at build
   * time), and an entity's fields (EntityIndex.document, one docid).
   */
  public static byte[] storedValues(IndexReader reader, int[] docids, String[] fields) throws IOException {
    String[] values = new String[docids.length * fields.length];
    if (values.length == 0) {
      return Utf8Texts.encode(values);
    }
    Set<String> wanted = new HashSet<>(Arrays.asList(fields));
    StoredFields stored = reader.storedFields();
    for (int d = 0; d < docids.length; d++) {
      Document document = stored.document(docids[d], wanted);
      for (int f = 0; f < fields.length; f++) {
        String value = document.get(fields[f]);
        values[d * fields.length + f] = value == null ? "" : value;
      }
    }
    return Utf8Texts.encode(values);
  }

  /**
   * The terms of field {@code field} of document {@code docid}, in position order, read back
   * from the postings (for a field the index does not store): every term of the field is looked
   * at, so this is for checks and inspection, not for a per-query path.
   */
  public static String[] indexedTerms(LeafReader leaf, int docid, String field) throws IOException {
    Terms terms = leaf.terms(field);
    if (terms == null) {
      return new String[0];
    }
    List<long[]> found = new ArrayList<>();  // (position, index into names)
    List<String> names = new ArrayList<>();
    TermsEnum walk = terms.iterator();
    PostingsEnum postings = null;
    for (BytesRef term = walk.next(); term != null; term = walk.next()) {
      postings = walk.postings(postings, PostingsEnum.POSITIONS);
      if (postings.advance(docid) != docid) {
        continue;
      }
      names.add(term.utf8ToString());
      for (int i = postings.freq(); i > 0; i--) {
        found.add(new long[] {postings.nextPosition(), names.size() - 1});
      }
    }
    found.sort((a, b) -> Long.compare(a[0], b[0]));
    String[] result = new String[found.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = names.get((int) found.get(i)[1]);
    }
    return result;
  }

  /**
   * The docids of every document holding {@code term} in {@code field}, ascending, as
   * little-endian int32 (ELR's relations field: one call per linked entity of a query).
   */
  public static byte[] docids(LeafReader leaf, String field, String term) throws IOException {
    PostingsEnum postings = leaf.postings(new Term(field, term), PostingsEnum.NONE);
    if (postings == null) {
      return new byte[0];
    }
    ByteBuffer out = ByteBuffer.allocate(4 * leaf.docFreq(new Term(field, term))).order(ByteOrder.LITTLE_ENDIAN);
    for (int docid = postings.nextDoc(); docid != DocIdSetIterator.NO_MORE_DOCS; docid = postings.nextDoc()) {
      out.putInt(docid);
    }
    return out.array();
  }

  /**
   * Per term of {@code terms}, the docid of the first document holding it in {@code field}, or -1
   * if none, as little-endian int32 (EntityIndex.find_docids: the ids of a query's candidate
   * entities in one call).
   */
  public static byte[] firstDocids(LeafReader leaf, String field, String[] terms) throws IOException {
    int[] docids = firstDocs(leaf, field, terms);
    ByteBuffer out = ByteBuffer.allocate(4 * docids.length).order(ByteOrder.LITTLE_ENDIAN);
    out.asIntBuffer().put(docids);
    return out.array();
  }

  /**
   * Per term of {@code terms}, the docid of the first document holding it in {@code field}, or -1
   * if none: one seek each of a shared terms enumeration ({@link #firstDocids}, and {@code
   * org.elquery.retrieval.EntityScores.scoreEntities}: the entities a query's candidates name).
   */
  public static int[] firstDocs(LeafReader leaf, String field, String[] terms) throws IOException {
    int[] docids = new int[terms.length];
    Arrays.fill(docids, -1);
    Terms indexed = leaf.terms(field);
    if (indexed == null) {
      return docids;
    }
    TermsEnum walk = indexed.iterator();
    PostingsEnum postings = null;
    for (int i = 0; i < terms.length; i++) {
      if (walk.seekExact(new BytesRef(terms[i]))) {
        postings = walk.postings(postings, PostingsEnum.NONE);
        int first = postings.nextDoc();
        docids[i] = first == DocIdSetIterator.NO_MORE_DOCS ? -1 : first;
      }
    }
    return docids;
  }

  /**
   * The rest of every term of {@code field} that begins with {@code prefix}, in term order (ELR:
   * the predicates through which entities relate to one entity, terms {@code entity TAB predicate}),
   * as {@link Utf8Texts}.
   */
  public static byte[] termsAfter(LeafReader leaf, String field, String prefix) throws IOException {
    List<String> found = new ArrayList<>();
    Terms terms = leaf.terms(field);
    TermsEnum walk = terms == null ? null : terms.iterator();
    if (walk == null || walk.seekCeil(new BytesRef(prefix)) == TermsEnum.SeekStatus.END) {
      return Utf8Texts.encode(new String[0]);
    }
    for (BytesRef term = walk.term(); term != null; term = walk.next()) {
      String text = term.utf8ToString();
      if (!text.startsWith(prefix)) {
        break;
      }
      found.add(text.substring(prefix.length()));
    }
    return Utf8Texts.encode(found.toArray(new String[0]));
  }

  /**
   * Per predicate of the typed relations field (terms {@code entity TAB predicate} and
   * {@code TAB predicate}): {@code predicate TAB N_f TAB |C_f|} lines, N_f the documents with the
   * predicate, |C_f| the sum of the document frequencies of its {@code entity TAB predicate}
   * terms, as {@link Utf8Texts}. Walks every term of the field: once per index.
   */
  public static byte[] predicateStatistics(LeafReader leaf, String field) throws IOException {
    java.util.TreeMap<String, long[]> statistics = new java.util.TreeMap<>();
    Terms terms = leaf.terms(field);
    if (terms == null) {
      return Utf8Texts.encode(new String[0]);
    }
    TermsEnum walk = terms.iterator();
    for (BytesRef term = walk.next(); term != null; term = walk.next()) {
      String text = term.utf8ToString();
      int tab = text.indexOf('\t');
      long[] counts = statistics.computeIfAbsent(text.substring(tab + 1), p -> new long[2]);
      counts[tab == 0 ? 0 : 1] += walk.docFreq();
    }
    List<String> lines = new ArrayList<>();
    for (java.util.Map.Entry<String, long[]> entry : statistics.entrySet()) {
      lines.add(entry.getKey() + "\t" + entry.getValue()[0] + "\t" + entry.getValue()[1]);
    }
    return Utf8Texts.encode(lines.toArray(new String[0]));
  }
}
