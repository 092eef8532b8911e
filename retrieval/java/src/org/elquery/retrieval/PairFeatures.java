package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.LeafReader;

/**
 * The LTR features of a query's candidate (mention, entity) pairs that Java computes in one call
 * (methods.md section 9, linking/ltr/features.py): the language-model grid of the query and its
 * mentions ({@link ScoreGrid}) and the string tests over the entities' normalized titles and short
 * abstracts, read from the index's {@code ltr_texts.bin} (memory-mapped, at the byte offsets of
 * {@code ltr_text_offsets.npy}: per docid its titles joined by newlines, then its short abstract,
 * elquery/kb/index_format.py) or given by the caller (an index built before that file).
 *
 * <p>Texts are normalized (tokens joined by single spaces); "a contains b" means b is a run of
 * whole tokens of a, i.e. " b " is in " a ". Per pair (mention m, entity e): mct (m contains a
 * title of e), tcm (a title contains m), tem (a title equals m), pos1 (the offset in code points
 * of the first run m in e's short abstract, 1000 if none). Per candidate entity: qct, tcq, teq
 * (the same tests with the query q in place of m). Per mention span: ntem (the entities whose
 * title equals m) and smil (those whose title equals some n-gram of m), among the KB matches of
 * each n-gram the caller gives.
 */
public final class PairFeatures {
  /** The files of index_format.py's LTR_TEXTS_FILE and LTR_TEXT_OFFSETS_FILE. */
  static final String TEXTS_FILE = "ltr_texts.bin";
  static final String OFFSETS_FILE = "ltr_text_offsets.npy";
  /** pos1 of a mention absent from the short abstract. */
  static final int NOT_FOUND = 1000;
  private static final Map<LeafReader, MappedTexts> MAPPED = new WeakHashMap<>();

  private PairFeatures() {}

  /**
   * The language-model scores and the string features of a query's candidate pairs, little-endian:
   * float64 log scores of the query ({@code lmTexts[0]}) under each model of {@code models}
   * (request lines) for each column, model by model, and int32 its known terms under each; per row
   * float64 the log score of its mention ({@code lmTexts[1 + span]}) under each of the first M
   * models (-infinity for a mention with no term in the collection), as {@link ScoreGrid} scores
   * them; then int32 per row mct, tcm, tem, pos1; per column qct, tcq, teq; per span ntem, smil.
   *
   * <p>{@code layout} (base64 little-endian int32): S, C, R, T, D, M; S spans (start, end: token
   * numbers of {@code query}, its tokens split at single spaces); D docids (ascending for the
   * first C, the candidates or columns; then the other entities the n-grams' KB matches name);
   * R rows (span number, column number); T n-gram matches (start, end, number of a docid of the
   * layout). {@code texts}: null to read the index's {@code ltr_texts.bin}, else two per docid of
   * the layout, its normalized titles joined by newlines and its normalized short abstract.
   */
  public static byte[] features(LeafReader leaf, Analyzer analyzer, String[] models, String[] lmTexts,
      String query, String layout, String[] texts) throws IOException {
    return features(leaf, analyzer, models, lmTexts, query, LanguageModel.ints(layout), texts);
  }

  /** {@link #features} of a layout already decoded ({@code ints}). */
  static byte[] features(LeafReader leaf, Analyzer analyzer, String[] models, String[] lmTexts,
      String query, int[] ints, String[] texts) throws IOException {
    int spans = ints[0], columns = ints[1], rows = ints[2], matches = ints[3], docs = ints[4], single = ints[5];
    int at = 6;
    int spansAt = at;
    at += 2 * spans;
    int docsAt = at;
    at += docs;
    int rowsAt = at;
    at += 2 * rows;
    int matchesAt = at;
    int[] docids = new int[columns];
    System.arraycopy(ints, docsAt, docids, 0, columns);
    // no model (the string tests alone, PairFeaturesJob): no text to analyze, no grid
    ScoreGrid grid = models.length == 0 ? null
        : new ScoreGrid(leaf, analyzer, EntityScores.lengths(leaf), models, lmTexts, docids);
    ByteBuffer out = EntityScores.buffer(models.length * (8 * columns + 4) + 8 * single * rows
        + 4 * (4 * rows + 3 * columns + 2 * spans));
    for (int m = 0; m < models.length; m++) {
      grid.score(m, 0, out);
    }
    for (int m = 0; m < models.length; m++) {
      out.putInt(grid.model(m, 0).terms.length);
    }
    for (int r = 0; r < rows; r++) {
      for (int m = 0; m < single; m++) {
        out.putDouble(grid.score(m, 1 + ints[rowsAt + 2 * r], ints[rowsAt + 2 * r + 1]));
      }
    }

    String[] titles = new String[docs];
    String[] abstracts = new String[columns];
    /* Read from ltr_texts.bin (valid UTF-8), an abstract is searched as bytes, " abstract ". */
    byte[][] paddedAbstracts = null;
    if (texts == null) {
      MappedTexts mapped = mapped(leaf);
      paddedAbstracts = new byte[columns][];
      // every offset first (independent reads the processor overlaps), then the texts
      long[] bounds = new long[3 * docs];
      for (int d = 0; d < docs; d++) {
        mapped.bounds(ints[docsAt + d], bounds, 3 * d);
      }
      for (int d = 0; d < docs; d++) {
        titles[d] = new String(mapped.bytes(bounds[3 * d], bounds[3 * d + 1], 0), StandardCharsets.UTF_8);
        if (d < columns) {
          byte[] padded = mapped.bytes(bounds[3 * d + 1], bounds[3 * d + 2], 1);
          padded[0] = ' ';
          padded[padded.length - 1] = ' ';
          paddedAbstracts[d] = padded;
        }
      }
    } else {
      for (int d = 0; d < docs; d++) {
        titles[d] = texts[2 * d];
        if (d < columns) {
          abstracts[d] = texts[2 * d + 1];
        }
      }
    }
    String[][] titleLists = new String[docs][];
    String[][] paddedTitles = new String[docs][];
    for (int d = 0; d < docs; d++) {
      titleLists[d] = titles[d].isEmpty() ? new String[0] : titles[d].split("\n", -1);
      paddedTitles[d] = new String[titleLists[d].length];
      for (int t = 0; t < titleLists[d].length; t++) {
        paddedTitles[d][t] = " " + titleLists[d][t] + " ";
      }
    }
    String[] tokens = query.split(" ", -1);
    String[] mentions = new String[spans];
    String[] paddedMentions = new String[spans];
    byte[][] mentionBytes = new byte[spans][];
    for (int s = 0; s < spans; s++) {
      mentions[s] = join(tokens, ints[spansAt + 2 * s], ints[spansAt + 2 * s + 1]);
      paddedMentions[s] = " " + mentions[s] + " ";
      if (paddedAbstracts != null) {
        mentionBytes[s] = utf8(paddedMentions[s]);
      }
    }

    for (int r = 0; r < rows; r++) {
      int s = ints[rowsAt + 2 * r];
      int c = ints[rowsAt + 2 * r + 1];
      String mention = mentions[s];
      String padded = paddedMentions[s];
      out.putInt(containsTitle(padded, paddedTitles[c]) ? 1 : 0);
      out.putInt(titleContains(paddedTitles[c], padded) ? 1 : 0);
      out.putInt(equalsTitle(titleLists[c], mention) ? 1 : 0);
      if (paddedAbstracts == null) {
        out.putInt(position(abstracts[c], padded));
      } else if (mentionBytes[s] == null) {
        out.putInt(position(new String(paddedAbstracts[c], 1, paddedAbstracts[c].length - 2, StandardCharsets.UTF_8), padded));
      } else {
        out.putInt(position(paddedAbstracts[c], mentionBytes[s]));
      }
    }
    String paddedQuery = " " + query + " ";
    for (int c = 0; c < columns; c++) {
      out.putInt(containsTitle(paddedQuery, paddedTitles[c]) ? 1 : 0);
      out.putInt(titleContains(paddedTitles[c], paddedQuery) ? 1 : 0);
      out.putInt(equalsTitle(titleLists[c], query) ? 1 : 0);
    }
    boolean[] equal = new boolean[matches];
    for (int m = 0; m < matches; m++) {
      int i = ints[matchesAt + 3 * m];
      int j = ints[matchesAt + 3 * m + 1];
      equal[m] = equalsTitle(titleLists[ints[matchesAt + 3 * m + 2]], join(tokens, i, j));
    }
    for (int s = 0; s < spans; s++) {
      int start = ints[spansAt + 2 * s];
      int end = ints[spansAt + 2 * s + 1];
      int named = 0;
      Set<Integer> similar = new HashSet<>();
      for (int m = 0; m < matches; m++) {
        int i = ints[matchesAt + 3 * m];
        int j = ints[matchesAt + 3 * m + 1];
        if (equal[m] && start <= i && j <= end) {
          similar.add(ints[matchesAt + 3 * m + 2]);
          if (i == start && j == end) {
            named++;
          }
        }
      }
      out.putInt(named);
      out.putInt(similar.size());
    }
    return out.array();
  }

  private static String join(String[] tokens, int start, int end) {
    return String.join(" ", java.util.Arrays.asList(tokens).subList(start, end));
  }

  /** Whether padded text {@code outer} contains a padded title. */
  private static boolean containsTitle(String outer, String[] paddedTitles) {
    for (String title : paddedTitles) {
      if (outer.contains(title)) {
        return true;
      }
    }
    return false;
  }

  /** Whether a padded title contains padded text {@code inner}. */
  private static boolean titleContains(String[] paddedTitles, String inner) {
    for (String title : paddedTitles) {
      if (title.contains(inner)) {
        return true;
      }
    }
    return false;
  }

  private static boolean equalsTitle(String[] titles, String text) {
    for (String title : titles) {
      if (title.equals(text)) {
        return true;
      }
    }
    return false;
  }

  /** The offset in code points of the first run of whole tokens {@code padded} (" m ") in
   * {@code text}, {@link #NOT_FOUND} if none: the offset of " m " in " text ". */
  private static int position(String text, String padded) {
    String outer = " " + text + " ";
    int found = outer.indexOf(padded);
    return found < 0 ? NOT_FOUND : outer.codePointCount(0, found);
  }

  /** {@link #position(String, String)} of the UTF-8 of " text " ({@code outer}, valid UTF-8) and
   * of " m " ({@code padded}): the first match of the bytes is at the first match of the
   * characters (both begin at a space, a character of its own in UTF-8), and the code points
   * before it are the bytes before it that begin a character (not 10xxxxxx). */
  private static int position(byte[] outer, byte[] padded) {
    int last = outer.length - padded.length;
    byte first = padded[0];
    for (int at = 0; at <= last; at++) {
      if (outer[at] != first) {
        continue;
      }
      int k = 1;
      while (k < padded.length && outer[at + k] == padded[k]) {
        k++;
      }
      if (k == padded.length) {
        int points = 0;
        for (int b = 0; b < at; b++) {
          points += (outer[b] & 0xC0) != 0x80 ? 1 : 0;
        }
        return points;
      }
    }
    return NOT_FOUND;
  }

  /** The UTF-8 of {@code text}, or null if it holds a surrogate (whose bytes a lone one would
   * not match as its characters do). */
  private static byte[] utf8(String text) {
    for (int i = 0; i < text.length(); i++) {
      if (Character.isSurrogate(text.charAt(i))) {
        return null;
      }
    }
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** The normalized texts of the index of {@code leaf}, mapped on first use (an
   * IllegalStateException if it has none that match it). */
  private static MappedTexts mapped(LeafReader leaf) throws IOException {
    synchronized (MAPPED) {
      MappedTexts texts = MAPPED.get(leaf);
      if (texts == null) {
        texts = MappedTexts.open(leaf);
        MAPPED.put(leaf, texts);
      }
      return texts;
    }
  }

  /** {@code ltr_texts.bin} and its offsets, memory-mapped (the texts in chunks of at most 1 GiB,
   * a text copied out of one or two of them). */
  private static final class MappedTexts {
    private static final long CHUNK = 1L << 30;
    private final LongBuffer offsets;
    private final ByteBuffer[] chunks;

    private MappedTexts(LongBuffer offsets, ByteBuffer[] chunks) {
      this.offsets = offsets;
      this.chunks = chunks;
    }

    static MappedTexts open(LeafReader leaf) throws IOException {
      Path folder = SideFiles.folder(leaf);
      long count = 2L * leaf.maxDoc() + 1;
      LongBuffer offsets = folder == null ? null : SideFiles.mapLongs(folder.resolve(OFFSETS_FILE), count);
      Path file = folder == null ? null : folder.resolve(TEXTS_FILE);
      if (offsets == null || !Files.isRegularFile(file)) {
        throw new IllegalStateException("the index has no " + TEXTS_FILE + " matching it");
      }
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
        long size = channel.size();
        if (offsets.get((int) (count - 1)) != size) {
          throw new IllegalStateException(TEXTS_FILE + " does not match the Lucene index");
        }
        ByteBuffer[] chunks = new ByteBuffer[(int) ((size + CHUNK - 1) / CHUNK)];
        for (int c = 0; c < chunks.length; c++) {
          chunks[c] = channel.map(FileChannel.MapMode.READ_ONLY, c * CHUNK, Math.min(CHUNK, size - c * CHUNK));
        }
        return new MappedTexts(offsets, chunks);
      }
    }

    /** The offsets of entity {@code doc}'s titles, abstract and end, at {@code into[at..at + 2]}. */
    void bounds(int doc, long[] into, int at) {
      into[at] = offsets.get(2 * doc);
      into[at + 1] = offsets.get(2 * doc + 1);
      into[at + 2] = offsets.get(2 * doc + 2);
    }

    /** Bytes [start, end) with {@code pad} bytes free before and after. */
    byte[] bytes(long start, long end, int pad) {
      int length = (int) (end - start);
      byte[] bytes = new byte[length + 2 * pad];
      int done = 0;
      while (done < length) {
        long at = start + done;
        ByteBuffer chunk = chunks[(int) (at / CHUNK)].duplicate();
        chunk.position((int) (at % CHUNK));
        int n = Math.min(length - done, chunk.remaining());
        chunk.get(bytes, pad + done, n);
        done += n;
      }
      return bytes;
    }
  }
}
