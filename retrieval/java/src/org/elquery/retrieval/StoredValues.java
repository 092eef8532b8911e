package org.elquery.retrieval;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.StoredFields;
import org.elquery.index.Utf8Texts;

/**
 * The stored values of some fields of many documents in one call from Python
 * (linking/ltr/stored.py: the titles and short abstracts the LTR features' string tests read for
 * the candidates of a query), where {@code IndexAccess.storedValues} takes one document a call.
 * Static and stateless: safe from several Python threads at once.
 */
public final class StoredValues {
  private StoredValues() {}

  /** Document by document, the value of each of {@code fields} ("" when absent): docids x fields
   * texts, as {@link Utf8Texts} (a title may begin with U+FEFF, which a Java string would lose). */
  public static byte[] values(LeafReader leaf, int[] docids, String[] fields) throws IOException {
    String[] values = new String[docids.length * fields.length];
    if (values.length == 0) {
      return Utf8Texts.encode(values);
    }
    Set<String> wanted = new HashSet<>(Arrays.asList(fields));
    StoredFields stored = leaf.storedFields();
    for (int d = 0; d < docids.length; d++) {
      Document document = stored.document(docids[d], wanted);
      for (int f = 0; f < fields.length; f++) {
        String value = document.get(fields[f]);
        values[d * fields.length + f] = value == null ? "" : value;
      }
    }
    return Utf8Texts.encode(values);
  }
}
