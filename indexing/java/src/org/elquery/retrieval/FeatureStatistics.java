package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.search.DocIdSetIterator;

/**
 * The statistics the learning-to-rank features of one query need (methods.md section 9), in one
 * call from Python (linking/ltr/statistics.py): the texts (the query and its mentions) analyzed
 * with the index's analyzer, and, for every field asked for, |C_f|, cf(t, f) and n(t, e_f) of
 * each distinct term of the texts for each candidate docid; plus the stored values of some
 * fields of some documents. Python computes every language-model feature from these counts.
 *
 * <p>The request is text, one item per line, tab separated: {@code field NAME} (repeated),
 * {@code text TEXT} (repeated; no newline inside), {@code docids BASE64} (little-endian int32,
 * ascending), {@code stored NAME} (repeated), {@code storeddocs BASE64} (little-endian int32, any
 * order).
 *
 * <p>The answer is little-endian bytes: int32 T (distinct terms); int32 X (texts), then per text
 * int32 n and its n terms as indexes into the distinct terms, in order; int32 F, int32 D; F int64
 * |C_f|; F x T int64 cf(t, f); F x T x D int32 n(t, e_f); int32 S (documents), int32 G (stored
 * fields), then S x G values, each int32 byte length and UTF-8 bytes ("" when absent).
 *
 * <p>Static and stateless: safe from several Python threads at once.
 */
public final class FeatureStatistics {
  private FeatureStatistics() {}

  public static byte[] statistics(LeafReader leaf, Analyzer analyzer, String request) throws IOException {
    List<String> fields = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    List<String> stored = new ArrayList<>();
    int[] docids = new int[0];
    int[] storedDocs = new int[0];
    for (String line : request.split("\n")) {
      String[] items = line.split("\t", 2);
      String value = items.length > 1 ? items[1] : "";
      switch (items[0]) {
        case "field":
          fields.add(value);
          break;
        case "text":
          texts.add(value);
          break;
        case "docids":
          docids = LanguageModel.ints(value);
          break;
        case "stored":
          stored.add(value);
          break;
        case "storeddocs":
          storedDocs = LanguageModel.ints(value);
          break;
        default:
          throw new IllegalArgumentException("unknown request line: " + line);
      }
    }
    Map<String, Integer> terms = new LinkedHashMap<>();
    int[][] analyzed = new int[texts.size()][];
    for (int x = 0; x < texts.size(); x++) {
      List<String> tokens = tokens(analyzer, texts.get(x));
      analyzed[x] = new int[tokens.size()];
      for (int i = 0; i < tokens.size(); i++) {
        Integer known = terms.putIfAbsent(tokens.get(i), terms.size());
        analyzed[x][i] = known == null ? terms.size() - 1 : known;
      }
    }
    String[] distinct = terms.keySet().toArray(new String[0]);
    int nf = fields.size();
    int nt = distinct.length;
    int nd = docids.length;
    List<byte[]> values = storedValues(leaf, stored, storedDocs);
    int size = 4 + 4 + 4 * texts.size() + 8 + 8 * nf + 8 * nf * nt + 4 * nf * nt * nd + 8;
    for (int[] text : analyzed) {
      size += 4 * text.length;
    }
    for (byte[] value : values) {
      size += 4 + value.length;
    }
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(nt).putInt(texts.size());
    for (int[] text : analyzed) {
      out.putInt(text.length);
      for (int term : text) {
        out.putInt(term);
      }
    }
    out.putInt(nf).putInt(nd);
    for (String field : fields) {
      Terms fieldTerms = leaf.terms(field);
      out.putLong(fieldTerms == null ? 0 : fieldTerms.getSumTotalTermFreq());
    }
    for (String field : fields) {
      for (String term : distinct) {
        out.putLong(leaf.totalTermFreq(new Term(field, term)));
      }
    }
    int[] column = new int[nd];
    for (String field : fields) {
      for (String term : distinct) {
        Arrays.fill(column, 0);
        PostingsEnum postings = leaf.postings(new Term(field, term), PostingsEnum.FREQS);
        int doc = postings == null ? DocIdSetIterator.NO_MORE_DOCS : -1;
        for (int i = 0; i < nd && doc != DocIdSetIterator.NO_MORE_DOCS; i++) {
          if (doc < docids[i]) {
            doc = postings.advance(docids[i]);
          }
          if (doc == docids[i]) {
            column[i] = postings.freq();
          }
        }
        for (int freq : column) {
          out.putInt(freq);
        }
      }
    }
    out.putInt(storedDocs.length).putInt(stored.size());
    for (byte[] value : values) {
      out.putInt(value.length).put(value);
    }
    return out.array();
  }

  /** The terms of {@code text} under {@code analyzer}, in order. */
  private static List<String> tokens(Analyzer analyzer, String text) throws IOException {
    List<String> found = new ArrayList<>();
    try (TokenStream stream = analyzer.tokenStream(null, text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        found.add(term.toString());
      }
      stream.end();
    }
    return found;
  }

  /** The stored values of {@code fields} of each of {@code docids}, document by document. */
  private static List<byte[]> storedValues(LeafReader leaf, List<String> fields, int[] docids) throws IOException {
    List<byte[]> values = new ArrayList<>();
    if (fields.isEmpty() || docids.length == 0) {
      return values;
    }
    Set<String> wanted = new HashSet<>(fields);
    StoredFields storedFields = leaf.storedFields();
    for (int docid : docids) {
      Document document = storedFields.document(docid, wanted);
      for (String field : fields) {
        String value = document.get(field);
        values.add((value == null ? "" : value).getBytes(StandardCharsets.UTF_8));
      }
    }
    return values;
  }
}
