package org.elquery.index;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * The spill phase of the entity index build (methods.md §2; {@code
 * elquery.indexing.entity_documents.spill}): the decompressed bytes of DBpedia dump files, given a
 * piece at a time ({@link #begin}, {@link #feed}, {@link #end}), are read once, and each statement
 * about a DBpedia resource is appended to the partition file of its subject, {@code
 * part-NNNN.tsv}, partition {@code crc32(UTF-8 subject) mod P}, as lines {@code subject TAB kind
 * TAB predicate TAB value} (kind L: literal, value escaped; I: object IRI; R: redirect, filed under
 * its target, carrying the redirect page; W: a wiki page link of a file read for its links only,
 * {@link #begin(String, int, boolean)}, its predicate left empty and its value the target's title,
 * the IRI without the DBpedia resource prefix). Lines are read and checked as {@code
 * elquery.indexing.ntriples.read_triples} reads them ({@link NTriples}, {@link Utf8}): the same
 * malformed lines, with the same reasons and line numbers. Labels that differ from the title in
 * the URI are kept (the last one of a subject wins) for {@link #writeLabels}.
 */
public final class DumpSpiller implements Closeable {
  public static final int MAX_LINE_CHARS = 1 << 20;
  static final String RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label";
  static final String REDIRECTS = "http://dbpedia.org/ontology/wikiPageRedirects";
  static final String OWL_SAME_AS = "http://www.w3.org/2002/07/owl#sameAs";
  static final String WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink";
  private static final byte[] NO_PREDICATE = new byte[0];
  private static final String[] NAMESPACES = {
    "Category:", "File:", "Image:", "Template:", "Portal:", "Wikipedia:", "Help:", "Book:", "Draft:"
  };

  private final Part[] parts;
  private String lastKey;
  private byte[] lastKeyBytes;
  private Part lastPart;
  private String lastPredicate;
  private byte[] lastPredicateBytes;
  private final Map<String, String> labels = new LinkedHashMap<>();
  private final CRC32 crc = new CRC32();
  private final NTriples.Statement statement = new NTriples.Statement();
  private final List<String> errors = new ArrayList<>();
  private long spilled;
  private String name = "";
  private int maxErrors;
  private boolean linksOnly;
  private LineReader lines = new LineReader();
  private long number;
  private long triples;
  private long malformed;

  public DumpSpiller(String outDir, int partitions) throws IOException {
    Path dir = Paths.get(outDir);
    Files.createDirectories(dir);
    parts = new Part[partitions];
    for (int p = 0; p < partitions; p++) {
      parts[p] = new Part(dir.resolve(String.format("part-%04d.tsv", p)));
    }
  }

  /** Statements written to the partition files so far. */
  public long spilled() {
    return spilled;
  }

  /** Starts reading a dump file (its decompressed bytes come through {@link #feed}); {@code
   * name} begins its malformed-line reports, the first {@code maxErrors} of which are kept. */
  public void begin(String name, int maxErrors) {
    begin(name, maxErrors, false);
  }

  /** As {@link #begin(String, int)}; with {@code linksOnly}, only the file's wiki page links
   * (dbo:wikiPageWikiLink to a DBpedia resource) are spilled, as W lines (the LTR fields). */
  public void begin(String name, int maxErrors, boolean linksOnly) {
    this.name = name;
    this.maxErrors = maxErrors;
    this.linksOnly = linksOnly;
    lines = new LineReader();
    number = 0;
    triples = 0;
    malformed = 0;
    errors.clear();
  }

  /** Spills the lines ended in {@code data[0, length)}; the rest waits for the next bytes. */
  public void feed(byte[] data, int length) throws IOException {
    int from = 0;
    while (from < length) {
      from = lines.take(data, from, length);
      if (lines.complete) {
        line();
      }
    }
  }

  /**
   * Spills the file's last line (if it has no line end) and returns {@code {triples, malformed,
   * error...}} as {@link Utf8Texts} (a name may begin with U+FEFF): the statements read, the
   * malformed lines, and the first {@code maxErrors} of them as {@code name:line: reason}.
   */
  public byte[] end() throws IOException {
    if (lines.finish()) {
      line();
    }
    String[] result = new String[2 + errors.size()];
    result[0] = Long.toString(triples);
    result[1] = Long.toString(malformed);
    for (int k = 0; k < errors.size(); k++) {
      result[2 + k] = errors.get(k);
    }
    return Utf8Texts.encode(result);
  }

  private void line() throws IOException {
    number++;
    String reason = null;
    boolean parsed = false;
    if (lines.longerThan(MAX_LINE_CHARS)) {
      reason = "line longer than " + MAX_LINE_CHARS + " characters";
    } else {
      try {
        String text = lines.text();
        parsed = NTriples.parse(text, lines.invalid[0], statement);
      } catch (NTriples.Malformed exc) {
        reason = exc.getMessage();
      }
    }
    if (reason != null) {
      malformed++;
      if (errors.size() < maxErrors) {
        errors.add(name + ":" + number + ": " + reason);
      }
    } else if (parsed) {
      triples++;
      write(statement);
    }
  }

  private void write(NTriples.Statement st) throws IOException {
    String subject = st.subject;
    String predicate = st.predicate;
    String value = st.object;
    if (!subject.startsWith(NTriples.DBPEDIA_RESOURCE) || predicate.equals(OWL_SAME_AS)) {
      return;
    }
    if (linksOnly) {
      if (st.kind == NTriples.IRI && predicate.equals(WIKI_LINK) && value.startsWith(NTriples.DBPEDIA_RESOURCE)
          && value.length() > NTriples.DBPEDIA_RESOURCE.length()) {
        part(subject).line(lastKeyBytes, 'W', NO_PREDICATE,
            value.substring(NTriples.DBPEDIA_RESOURCE.length()).getBytes(StandardCharsets.UTF_8));
        spilled++;
      }
      return;
    }
    String key;
    char kind;
    String last;
    if (st.kind == NTriples.LITERAL) {
      if (predicate.equals(RDFS_LABEL) && !value.equals(titleText(subject))) {
        labels.put(subject, value);
      }
      key = subject;
      kind = 'L';
      last = spillEscape(value);
    } else if (predicate.equals(REDIRECTS)) {
      if (st.kind != NTriples.IRI || !value.startsWith(NTriples.DBPEDIA_RESOURCE)) {
        return;  // a redirect to anything but a DBpedia resource names no entity
      }
      key = value;
      kind = 'R';
      last = subject;
    } else if (st.kind == NTriples.IRI) {
      key = subject;
      kind = 'I';
      last = value;
    } else {
      return;  // blank-node objects carry no text
    }
    Part part = part(key);
    if (!predicate.equals(lastPredicate)) {  // consecutive statements often share their predicate
      lastPredicate = predicate;
      lastPredicateBytes = predicate.getBytes(StandardCharsets.UTF_8);
    }
    part.line(lastKeyBytes, kind, lastPredicateBytes, last.getBytes(StandardCharsets.UTF_8));
    spilled++;
  }

  /** The partition of {@code key}, its UTF-8 bytes then in {@code lastKeyBytes}. */
  private Part part(String key) {
    if (!key.equals(lastKey)) {  // consecutive statements often share their subject
      lastKey = key;
      lastKeyBytes = key.getBytes(StandardCharsets.UTF_8);
      crc.reset();
      crc.update(lastKeyBytes, 0, lastKeyBytes.length);
      lastPart = parts[(int) (crc.getValue() % parts.length)];
    }
    return lastPart;
  }

  /** One partition file, written through its own buffer (no lock per write). */
  private static final class Part implements Closeable {
    private final OutputStream out;
    private final byte[] buffer = new byte[1 << 16];
    private int used;

    Part(Path path) throws IOException {
      out = Files.newOutputStream(path);
    }

    /** Appends {@code key TAB kind TAB predicate TAB value LF}. */
    void line(byte[] key, char kind, byte[] predicate, byte[] value) throws IOException {
      put(key);
      put((byte) '\t');
      put((byte) kind);
      put((byte) '\t');
      put(predicate);
      put((byte) '\t');
      put(value);
      put((byte) '\n');
    }

    private void put(byte b) throws IOException {
      if (used == buffer.length) {
        flush();
      }
      buffer[used++] = b;
    }

    private void put(byte[] bytes) throws IOException {
      if (bytes.length > buffer.length - used) {
        flush();
        if (bytes.length > buffer.length) {
          out.write(bytes);
          return;
        }
      }
      System.arraycopy(bytes, 0, buffer, used, bytes.length);
      used += bytes.length;
    }

    private void flush() throws IOException {
      out.write(buffer, 0, used);
      used = 0;
    }

    @Override
    public void close() throws IOException {
      try {
        flush();
      } finally {
        out.close();
      }
    }
  }

  /** Writes the labels kept, {@code subject TAB escaped label} per line, in first-seen order. */
  public void writeLabels(String path) throws IOException {
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(Paths.get(path)), 1 << 16)) {
      for (Map.Entry<String, String> entry : labels.entrySet()) {
        out.write((entry.getKey() + "\t" + spillEscape(entry.getValue()) + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  @Override
  public void close() throws IOException {
    IOException first = null;
    for (Part part : parts) {
      try {
        part.close();
      } catch (IOException exc) {
        first = first == null ? exc : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** A literal on one line: backslash, tab and line ends escaped ({@code _spill_escape}). */
  static String spillEscape(String text) {
    int n = text.length();
    int i = 0;
    while (i < n) {
      char c = text.charAt(i);
      if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
        break;
      }
      i++;
    }
    if (i == n) {
      return text;
    }
    StringBuilder out = new StringBuilder(n + 8);
    out.append(text, 0, i);
    for (; i < n; i++) {
      char c = text.charAt(i);
      switch (c) {
        case '\\': out.append("\\\\"); break;
        case '\t': out.append("\\t"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        default: out.append(c);
      }
    }
    return out.toString();
  }

  /** The text a URI names when no label is known ({@code title_text}): the title (DBpedia
   * resource) or the local name (other IRIs: after the last {@code #} or {@code /}, trailing
   * ones dropped first), percent-decoded, underscores as spaces, a Wikipedia namespace prefix
   * dropped. */
  static String titleText(String iri) {
    if (iri.startsWith(NTriples.DBPEDIA_RESOURCE)) {
      return resourceTitleText(iri.substring(NTriples.DBPEDIA_RESOURCE.length()));
    }
    int end = iri.length();
    while (end > 0 && (iri.charAt(end - 1) == '/' || iri.charAt(end - 1) == '#')) {
      end--;
    }
    int hash = iri.lastIndexOf('#', end - 1);
    int slash = iri.lastIndexOf('/', end - 1);
    return resourceTitleText(iri.substring(Math.max(hash, slash) + 1, end));
  }

  /** {@link #titleText} of a DBpedia resource given by its title (the IRI without the resource
   * prefix), or of a local name: percent-decoded, underscores as spaces, a Wikipedia namespace
   * prefix dropped. */
  static String resourceTitleText(String title) {
    title = unquote(title).replace('_', ' ');
    for (String namespace : NAMESPACES) {
      if (title.startsWith(namespace)) {
        return title.substring(title.indexOf(':') + 1);
      }
    }
    return title;
  }

  /** Python's {@code urllib.parse.unquote}: each run of ASCII characters percent-decoded to bytes
   * and decoded as UTF-8 (invalid parts as U+FFFD); other characters kept. */
  static String unquote(String text) {
    if (text.indexOf('%') < 0) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    int n = text.length();
    int i = 0;
    while (i < n) {
      int j = i;
      if (text.charAt(i) < 0x80) {
        while (j < n && text.charAt(j) < 0x80) {
          j++;
        }
        out.append(unquoteAscii(text.substring(i, j)));
      } else {
        while (j < n && text.charAt(j) >= 0x80) {
          j++;
        }
        out.append(text, i, j);
      }
      i = j;
    }
    return out.toString();
  }

  private static String unquoteAscii(String run) {
    byte[] bytes = new byte[run.length()];
    int o = 0;
    int n = run.length();
    for (int i = 0; i < n; i++) {
      char c = run.charAt(i);
      if (c == '%' && i + 2 < n && hex(run.charAt(i + 1)) >= 0 && hex(run.charAt(i + 2)) >= 0) {
        bytes[o++] = (byte) (hex(run.charAt(i + 1)) * 16 + hex(run.charAt(i + 2)));
        i += 2;
      } else {
        bytes[o++] = (byte) c;
      }
    }
    char[] chars = new char[o];
    return new String(chars, 0, Utf8.decode(bytes, 0, o, chars, true));
  }

  private static int hex(char c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  /** Lines of a byte stream given a piece at a time, ended by CR, LF or CR LF (Python's
   * universal newlines), a leading byte order mark dropped, decoded by {@link Utf8#decode}. */
  static final class LineReader {
    /** Bytes kept of one line: beyond, it is longer than MAX_LINE_CHARS whatever it holds. */
    private static final int KEPT = 4 * MAX_LINE_CHARS + 8;
    private boolean first = true;
    private boolean afterCr;
    private byte[] line = new byte[1 << 12];
    private int length;
    private boolean overflow;
    private boolean terminated;
    private char[] chars = new char[1 << 12];
    /** Whether the line {@link #text} gave last held bytes that are not valid UTF-8. */
    final boolean[] invalid = new boolean[1];
    /** Whether the last {@link #take} ended a line (then {@link #text} is that line). */
    boolean complete;

    /** Takes bytes from {@code data[from, limit)} up to and with the next line end; returns
     * where it stopped. */
    int take(byte[] data, int from, int limit) {
      if (complete) {
        length = 0;
        overflow = false;
        terminated = false;
        complete = false;
      }
      if (afterCr) {
        afterCr = false;
        if (data[from] == '\n') {
          from++;
        }
      }
      int end = from;
      while (end < limit && data[end] != '\n' && data[end] != '\r') {
        end++;
      }
      append(data, from, end - from);
      if (end == limit) {
        return limit;
      }
      afterCr = data[end] == '\r';
      terminated = true;
      complete = true;
      dropByteOrderMark();
      return end + 1;
    }

    /** At the end of the stream: whether a last line without a line end is left. */
    boolean finish() {
      if (complete) {
        return false;
      }
      dropByteOrderMark();
      complete = length > 0 || overflow;
      return complete;
    }

    private void dropByteOrderMark() {
      if (first) {
        first = false;
        if (length >= 3 && (line[0] & 0xff) == 0xEF && (line[1] & 0xff) == 0xBB && (line[2] & 0xff) == 0xBF) {
          System.arraycopy(line, 3, line, 0, length - 3);
          length -= 3;
        }
      }
    }

    private void append(byte[] data, int from, int count) {
      if (overflow || length + count > KEPT) {
        overflow = true;
        return;
      }
      if (length + count > line.length) {
        line = Arrays.copyOf(line, Math.max(line.length * 2, length + count));
      }
      System.arraycopy(data, from, line, length, count);
      length += count;
    }

    /** Whether the line, its line end counted as one character, has more than {@code max}
     * characters (code points; an invalid byte is one). */
    boolean longerThan(int max) {
      if (overflow) {
        return true;
      }
      int end = terminated ? 1 : 0;
      if (length + end <= max) {
        return false;
      }
      String text = text();
      return text.codePointCount(0, text.length()) + end > max;
    }

    /** The line's text, without its line end. */
    String text() {
      boolean ascii = true;
      for (int i = 0; i < length; i++) {
        if (line[i] < 0) {
          ascii = false;
          break;
        }
      }
      invalid[0] = false;
      if (ascii) {
        return new String(line, 0, length, StandardCharsets.ISO_8859_1);
      }
      if (chars.length < length) {
        chars = new char[Math.max(chars.length * 2, length)];
      }
      return new String(chars, 0, Utf8.decode(line, 0, length, chars, false, invalid));
    }
  }
}
