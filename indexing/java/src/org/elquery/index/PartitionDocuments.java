package org.elquery.index;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The entity documents of one spill partition (methods.md §2; {@code
 * elquery.indexing.entity_documents}): its files ({@code subject TAB kind TAB predicate TAB value}
 * lines written by {@link DumpSpiller}) are read and grouped by subject, and each indexable entity
 * (an rdfs:label and an rdfs:comment literal) becomes one document, in entity id order:
 *
 * <ul>
 *   <li>names: the rdfs:label and foaf:name literals, then the redirect pages pointing at the
 *       entity, resolved (see below);
 *   <li>content: the literals of the top predicates, then their object IRIs, resolved;
 *   <li>relations (when asked): the distinct {@code id TAB predicate} pairs of the DBpedia
 *       resources that are objects of the top predicates, sorted;
 *   <li>the LTR fields (when asked; methods.md §9), each of distinct values in code point order:
 *       title (the rdfs:label literals), short_abstract (rdfs:comment), long_abstract
 *       (dbo:abstract), wiki_links (the targets of dbo:wikiPageWikiLink, I or W lines, that are
 *       DBpedia resources, as the text of their title, {@link DumpSpiller#resourceTitleText}) and
 *       categories (the dct:subject IRIs as {@link DumpSpiller#titleText}: {@code Category:}
 *       dropped); and two counts: redirects (distinct redirect pages pointing at the entity) and
 *       links (distinct wiki link targets, the values of wiki_links).
 * </ul>
 *
 * <p>Literals and IRIs are taken sorted by (predicate, value), redirects by IRI, documents by
 * entity id, all in code point order (Python's string order: {@link #compareCodePoints}), so
 * that the documents do not depend on how the dump files were spread over the spill workers. An
 * IRI resolves to its label ({@link Labels}), or, when it has none or an empty one, to the text
 * of its URI ({@link DumpSpiller#titleText}). A field's text holds its values one per line, a
 * value's own tabs and line ends turned into spaces.
 *
 * <p>{@link #countPredicates} counts, over a partition's files, the indexable entities having
 * each predicate (literal or IRI statements); {@link #write} hands the documents straight to an
 * {@link EntityWriter}, one call per partition from Python.
 */
public final class PartitionDocuments {
  static final String RDFS_LABEL = DumpSpiller.RDFS_LABEL;
  static final String RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment";
  static final String FOAF_NAME = "http://xmlns.com/foaf/0.1/name";
  static final String ABSTRACT = "http://dbpedia.org/ontology/abstract";
  static final String SUBJECT = "http://purl.org/dc/terms/subject";
  /** The LTR text fields, after names and content, and the counts, in document order. */
  static final int LTR_FIELDS = 5;
  static final int LTR_COUNTS = 2;
  private static final String ENTITY_PREFIX = "<dbpedia:";

  /** Python's order of strings: by code point (String.compareTo orders by UTF-16 unit, which
   * puts supplementary characters before U+E000..U+FFFF). */
  static final Comparator<String> CODE_POINT_ORDER = PartitionDocuments::compareCodePoints;

  private final Labels labels;
  private final boolean relations;
  private final boolean ltr;
  private final List<String> predicates = new ArrayList<>();
  private final Map<String, Integer> predicateIds = new HashMap<>();
  private final Map<String, Entity> bySubject = new HashMap<>();
  private int[] rank = new int[0];
  private boolean[] top = new boolean[0];
  private final int label;
  private final int comment;
  private final int foafName;
  private final int longAbstract;
  private final int subject;
  private final int wikiLink;
  private Entity[] entities;
  private int[] lengths = new int[0];
  private int[] counts = new int[0];

  /** Reads and groups a partition's files; {@code predicates} are the top predicates; {@code
   * ltr}: the documents also have the LTR fields and counts. */
  public PartitionDocuments(String[] files, Labels labels, String[] predicates, boolean relations, boolean ltr)
      throws IOException {
    this(files, labels, relations, ltr, true);
    top = new boolean[this.predicates.size()];
    for (String predicate : predicates) {
      Integer id = predicateIds.get(predicate);
      if (id != null) {
        top[id] = true;
      }
    }
  }

  private PartitionDocuments(String[] files, Labels labels, boolean relations, boolean ltr, boolean values)
      throws IOException {
    this.labels = labels;
    this.relations = relations;
    this.ltr = ltr;
    label = predicateId(RDFS_LABEL);
    comment = predicateId(RDFS_COMMENT);
    foafName = predicateId(FOAF_NAME);
    longAbstract = predicateId(ABSTRACT);
    subject = predicateId(SUBJECT);
    wikiLink = predicateId(DumpSpiller.WIKI_LINK);
    for (String file : files) {
      read(file, values);
    }
    String[] names = this.predicates.toArray(new String[0]);
    Integer[] byName = new Integer[names.length];
    for (int i = 0; i < names.length; i++) {
      byName[i] = i;
    }
    Arrays.sort(byName, (a, b) -> compareCodePoints(names[a], names[b]));
    rank = new int[names.length];
    for (int r = 0; r < byName.length; r++) {
      rank[byName[r]] = r;
    }
    List<Entity> indexable = new ArrayList<>();
    for (Entity entity : bySubject.values()) {
      if (entity.has(label) && entity.has(comment)) {
        indexable.add(entity);
      }
    }
    entities = indexable.toArray(new Entity[0]);
    Arrays.sort(entities, (a, b) -> compareCodePoints(a.id, b.id));
  }

  /**
   * Over a partition's files: {@code predicate TAB count} lines, the number of indexable entities
   * having each predicate (one statement is enough; redirects do not count), predicates in code
   * point order.
   */
  public static String countPredicates(String[] files) throws IOException {
    PartitionDocuments partition = new PartitionDocuments(files, null, false, false, false);
    int[] counts = new int[partition.predicates.size()];
    for (Entity entity : partition.entities) {
      int[] seen = Arrays.copyOf(entity.literalPredicates, entity.literals + entity.iris);
      System.arraycopy(entity.iriPredicates, 0, seen, entity.literals, entity.iris);
      Arrays.sort(seen);
      for (int i = 0; i < seen.length; i++) {
        if (i == 0 || seen[i] != seen[i - 1]) {
          counts[seen[i]]++;
        }
      }
    }
    String[] names = partition.predicates.toArray(new String[0]);
    Arrays.sort(names, CODE_POINT_ORDER);
    StringBuilder out = new StringBuilder();
    for (String name : names) {
      int count = counts[partition.predicateIds.get(name)];
      if (count > 0) {
        out.append(name).append('\t').append(count).append('\n');
      }
    }
    return out.toString();
  }

  /** Number of documents (indexable entities). */
  public int size() {
    return entities.length;
  }

  /** Text fields per document, as {@link #write} hands them to the writer: names, content, the
   * LTR fields if asked, the relations if asked. */
  private int fieldCount() {
    return 2 + (ltr ? LTR_FIELDS : 0) + (relations ? 1 : 0);
  }

  /** {@link #texts} as {@link Utf8Texts}: Python receives them exactly (a label may begin with U+FEFF). */
  public byte[] textsUtf8() {
    return Utf8Texts.encode(texts());
  }

  /**
   * The documents' texts, {@code W} per document: the entity id, the names, the content, with
   * relations the relation pairs, and with the LTR fields their five texts and the two counts
   * (redirects, links) in decimal.
   */
  public String[] texts() {
    int fieldCount = fieldCount();
    int width = 1 + fieldCount + (ltr ? LTR_COUNTS : 0);
    String[] texts = new String[entities.length * width];
    String[] fields = new String[fieldCount];
    int[] entityCounts = new int[LTR_COUNTS];
    for (int i = 0; i < entities.length; i++) {
      document(entities[i], fields, entityCounts, 0);
      int at = i * width;
      texts[at++] = entities[i].id;
      texts[at++] = fields[0];
      texts[at++] = fields[1];
      if (relations) {
        texts[at++] = fields[fieldCount - 1];
      }
      if (ltr) {
        System.arraycopy(fields, 2, texts, at, LTR_FIELDS);
        at += LTR_FIELDS;
        for (int c = 0; c < LTR_COUNTS; c++) {
          texts[at++] = Integer.toString(entityCounts[c]);
        }
      }
    }
    return texts;
  }

  /**
   * Adds the documents to {@code writer} (whose relations must be set exactly when these
   * documents have them); returns their entity ids, one per line. {@link #lengths} then holds
   * their exact field lengths, as {@link EntityWriter#add} returns them.
   */
  public String write(EntityWriter writer, String idField) throws IOException {
    int width = fieldCount();
    if (writer.width() != width) {
      throw new IllegalArgumentException("the writer takes " + writer.width() + " fields, the documents have " + width);
    }
    int countWidth = ltr ? LTR_COUNTS : 0;
    if (writer.counts() != countWidth) {
      throw new IllegalArgumentException("the writer takes " + writer.counts() + " counts, the documents have " + countWidth);
    }
    lengths = new int[entities.length * width];
    counts = new int[entities.length * countWidth];
    String[] fields = new String[width];
    StringBuilder ids = new StringBuilder(entities.length * 32);
    for (int i = 0; i < entities.length; i++) {
      Entity entity = entities[i];
      document(entity, fields, counts, i * countWidth);
      writer.addDocument(idField, entity.id, fields, 0, counts, i * countWidth, lengths, i * width);
      if (i > 0) {
        ids.append('\n');
      }
      ids.append(entity.id);
      entities[i] = null;  // its statements are no longer needed
    }
    return ids.toString();
  }

  /** The exact field lengths of the documents {@link #write} added, {@code lengths[i * W + f]}. */
  public int[] lengths() {
    return lengths;
  }

  /** The counts (redirects, links) of the documents {@link #write} added with the LTR fields,
   * {@code counts[i * 2 + c]}. */
  public int[] counts() {
    return counts;
  }

  /** Fills {@code fields} with the entity's names, content, (with the LTR fields) their five
   * texts and (with relations) relations texts; with the LTR fields, its counts into {@code
   * entityCounts[at]} on. */
  private void document(Entity entity, String[] fields, int[] entityCounts, int at) {
    Integer[] literals = sortedStatements(entity.literalPredicates, entity.literalValues, entity.literals);
    Integer[] iris = sortedStatements(entity.iriPredicates, entity.iriValues, entity.iris);
    Text names = new Text();
    for (int k : literals) {
      int p = entity.literalPredicates[k];
      if (p == label || p == foafName) {
        names.add(entity.literalValues[k]);
      }
    }
    String[] redirects = Arrays.copyOf(entity.redirects, entity.redirectCount);
    Arrays.sort(redirects, CODE_POINT_ORDER);
    for (String redirect : redirects) {
      names.add(labels.resolve(redirect));
    }
    Text content = new Text();
    for (int k : literals) {
      if (top[entity.literalPredicates[k]]) {
        content.add(entity.literalValues[k]);
      }
    }
    for (int k : iris) {
      if (top[entity.iriPredicates[k]]) {
        content.add(labels.resolve(entity.iriValues[k]));
      }
    }
    fields[0] = names.toString();
    fields[1] = content.toString();
    if (ltr) {
      fields[2] = distinctLiterals(entity, label);
      fields[3] = distinctLiterals(entity, comment);
      fields[4] = distinctLiterals(entity, longAbstract);
      String[] links = wikiLinks(entity);
      Text linkText = new Text();
      for (String title : links) {
        linkText.add(DumpSpiller.resourceTitleText(title));
      }
      fields[5] = linkText.toString();
      Text categories = new Text();
      for (String iri : distinctIris(entity, subject)) {
        categories.add(DumpSpiller.titleText(iri));
      }
      fields[6] = categories.toString();
      entityCounts[at] = distinct(Arrays.copyOf(entity.redirects, entity.redirectCount)).length;
      entityCounts[at + 1] = links.length;
    }
    if (relations) {
      fields[fields.length - 1] = relations(entity);
    }
  }

  /** The distinct literals of one predicate, in code point order, as a field's text. */
  private static String distinctLiterals(Entity entity, int predicate) {
    List<String> values = new ArrayList<>();
    for (int k = 0; k < entity.literals; k++) {
      if (entity.literalPredicates[k] == predicate) {
        values.add(entity.literalValues[k]);
      }
    }
    Text text = new Text();
    for (String value : distinct(values.toArray(new String[0]))) {
      text.add(value);
    }
    return text.toString();
  }

  /** The distinct IRI objects of one predicate, in code point order. */
  private static String[] distinctIris(Entity entity, int predicate) {
    List<String> values = new ArrayList<>();
    for (int k = 0; k < entity.iris; k++) {
      if (entity.iriPredicates[k] == predicate) {
        values.add(entity.iriValues[k]);
      }
    }
    return distinct(values.toArray(new String[0]));
  }

  /** The titles of the distinct DBpedia resources the entity links to (W lines, and I lines of
   * dbo:wikiPageWikiLink), in code point order. */
  private String[] wikiLinks(Entity entity) {
    List<String> titles = new ArrayList<>(Arrays.asList(entity.links).subList(0, entity.linkCount));
    int prefix = NTriples.DBPEDIA_RESOURCE.length();
    for (int k = 0; k < entity.iris; k++) {
      String value = entity.iriValues[k];
      if (entity.iriPredicates[k] == wikiLink && value.startsWith(NTriples.DBPEDIA_RESOURCE) && value.length() > prefix) {
        titles.add(value.substring(prefix));
      }
    }
    return distinct(titles.toArray(new String[0]));
  }

  /** The distinct strings of {@code values} (sorted in place), in code point order. */
  private static String[] distinct(String[] values) {
    Arrays.sort(values, CODE_POINT_ORDER);
    int n = 0;
    for (int i = 0; i < values.length; i++) {
      if (n == 0 || !values[i].equals(values[n - 1])) {
        values[n++] = values[i];
      }
    }
    return Arrays.copyOf(values, n);
  }

  /** The distinct {@code id TAB predicate} pairs of the entity's top-predicate objects that are
   * DBpedia resources, sorted, one per line. */
  private String relations(Entity entity) {
    List<String[]> pairs = new ArrayList<>();
    for (int k = 0; k < entity.iris; k++) {
      int p = entity.iriPredicates[k];
      String value = entity.iriValues[k];
      if (top[p] && value.startsWith(NTriples.DBPEDIA_RESOURCE) && value.length() > NTriples.DBPEDIA_RESOURCE.length()) {
        pairs.add(new String[] {entityId(value), predicates.get(p)});
      }
    }
    pairs.sort((a, b) -> {
      int c = compareCodePoints(a[0], b[0]);
      return c != 0 ? c : compareCodePoints(a[1], b[1]);
    });
    StringBuilder out = new StringBuilder();
    String[] last = null;
    for (String[] pair : pairs) {
      if (last != null && last[0].equals(pair[0]) && last[1].equals(pair[1])) {
        continue;
      }
      if (last != null) {
        out.append('\n');
      }
      out.append(pair[0]).append('\t').append(pair[1]);
      last = pair;
    }
    return out.toString();
  }

  /** Indexes of the first {@code n} statements, sorted by (predicate, value) in code point order. */
  private Integer[] sortedStatements(int[] predicateIds, String[] values, int n) {
    Integer[] order = new Integer[n];
    for (int k = 0; k < n; k++) {
      order[k] = k;
    }
    Arrays.sort(order, (a, b) -> {
      int c = Integer.compare(rank[predicateIds[a]], rank[predicateIds[b]]);
      return c != 0 ? c : compareCodePoints(values[a], values[b]);
    });
    return order;
  }

  /** {@code <dbpedia:Title>} for {@code http://dbpedia.org/resource/Title}. */
  static String entityId(String iri) {
    return ENTITY_PREFIX + iri.substring(NTriples.DBPEDIA_RESOURCE.length()) + ">";
  }

  /** The predicate's id, the map's own boxed value (the last-predicate cache keeps it as is). */
  private Integer predicateId(String predicate) {
    Integer id = predicateIds.get(predicate);
    if (id == null) {
      id = predicates.size();
      predicates.add(predicate);
      predicateIds.put(predicate, id);
    }
    return id;
  }

  // --- reading the partition files -------------------------------------------------------------

  private final LastKey<Entity> lastSubject = new LastKey<>();
  private final LastKey<Integer> lastPredicate = new LastKey<>();

  /** The value of the last key looked up (consecutive lines mostly share their subject, and
   * often their predicate): a hit costs a byte comparison, no string. */
  private static final class LastKey<V> {
    private byte[] key = new byte[0];
    private int length = -1;
    private V value;

    /** The value of {@code b[from, end)} if it is the last key, else null. */
    V get(byte[] b, int from, int end) {
      return end - from == length && Arrays.equals(b, from, end, key, 0, length) ? value : null;
    }

    V put(byte[] b, int from, int end, V value) {
      length = end - from;
      if (key.length < length) {
        key = new byte[Math.max(length, 2 * key.length)];
      }
      System.arraycopy(b, from, key, 0, length);
      this.value = value;
      return value;
    }
  }

  private void read(String file, boolean values) throws IOException {
    byte[] buffer = new byte[1 << 20];
    int filled = 0;
    try (InputStream in = Files.newInputStream(Paths.get(file))) {
      while (true) {
        int got = in.read(buffer, filled, buffer.length - filled);
        if (got < 0) {
          if (filled > 0) {
            line(buffer, 0, filled, values);
          }
          return;
        }
        filled += got;
        int start = 0;
        for (int i = start; i < filled; i++) {
          if (buffer[i] == '\n') {
            line(buffer, start, i, values);
            start = i + 1;
          }
        }
        System.arraycopy(buffer, start, buffer, 0, filled - start);
        filled -= start;
        if (filled == buffer.length) {
          buffer = Arrays.copyOf(buffer, buffer.length * 2);
        }
      }
    }
  }

  /** One line {@code b[from, end)}: {@code subject TAB kind TAB predicate TAB value}. */
  private void line(byte[] b, int from, int end, boolean values) {
    int tab1 = indexOf(b, from, end, (byte) '\t');
    int tab2 = tab1 + 2;
    int tab3 = indexOf(b, tab2 + 1, end, (byte) '\t');
    if (tab1 < 0 || tab3 < 0 || b[tab2] != '\t') {
      throw new IllegalArgumentException("not a spill line: " + new String(b, from, end - from, StandardCharsets.UTF_8));
    }
    Entity entity = entity(b, from, tab1);
    byte kind = b[tab1 + 1];
    if (kind == 'R' || kind == 'W') {
      if (values) {
        String value = new String(b, tab3 + 1, end - tab3 - 1, StandardCharsets.UTF_8);
        if (kind == 'R') {
          entity.redirect(value);
        } else if (ltr) {
          entity.link(value);
        }
      }
      return;
    }
    int predicate = predicate(b, tab2 + 1, tab3);
    if (kind == 'L') {
      entity.literal(predicate, values ? unescape(b, tab3 + 1, end) : null);
    } else if (kind == 'I') {
      entity.iri(predicate, values ? new String(b, tab3 + 1, end - tab3 - 1, StandardCharsets.UTF_8) : null);
    } else {
      throw new IllegalArgumentException("unknown statement kind " + (char) kind);
    }
  }

  private Entity entity(byte[] b, int from, int end) {
    Entity entity = lastSubject.get(b, from, end);
    if (entity != null) {
      return entity;
    }
    String subject = new String(b, from, end - from, StandardCharsets.UTF_8);
    entity = bySubject.get(subject);
    if (entity == null) {
      entity = new Entity(entityId(subject));
      bySubject.put(subject, entity);
    }
    return lastSubject.put(b, from, end, entity);
  }

  private int predicate(byte[] b, int from, int end) {
    Integer id = lastPredicate.get(b, from, end);
    if (id != null) {
      return id;
    }
    return lastPredicate.put(b, from, end, predicateId(new String(b, from, end - from, StandardCharsets.UTF_8)));
  }

  private static int indexOf(byte[] b, int from, int end, byte c) {
    for (int i = from; i < end; i++) {
      if (b[i] == c) {
        return i;
      }
    }
    return -1;
  }

  /** A literal as the spill read it ({@link DumpSpiller#spillEscape} undone). */
  private static String unescape(byte[] b, int from, int end) {
    String text = new String(b, from, end - from, StandardCharsets.UTF_8);
    return indexOf(b, from, end, (byte) '\\') < 0 ? text : spillUnescape(text);
  }

  /** {@code \\ \t \n \r} back to backslash, tab, LF, CR; any other backslash kept. */
  static String spillUnescape(String text) {
    StringBuilder out = new StringBuilder(text.length());
    int n = text.length();
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      if (c == '\\' && i + 1 < n) {
        char next = text.charAt(i + 1);
        char unescaped = next == '\\' ? '\\' : next == 't' ? '\t' : next == 'n' ? '\n' : next == 'r' ? '\r' : 0;
        if (unescaped != 0) {
          out.append(unescaped);
          i++;
          continue;
        }
      }
      out.append(c);
    }
    return out.toString();
  }

  /** Python's comparison of two strings: by code point. */
  static int compareCodePoints(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        if (x >= 0xD800 && y >= 0xD800) {  // a surrogate (a supplementary character) sorts after U+FFFF
          return codePointRank(x) - codePointRank(y);
        }
        return x - y;
      }
    }
    return a.length() - b.length();
  }

  private static int codePointRank(char c) {
    return c >= 0xE000 ? c - 0x800 : c + 0x2000;
  }

  /** What a partition says about one subject (statement values are null when not read). */
  private static final class Entity {
    final String id;
    int[] literalPredicates = new int[4];
    String[] literalValues = new String[4];
    int literals;
    int[] iriPredicates = new int[4];
    String[] iriValues = new String[4];
    int iris;
    String[] redirects = new String[0];
    int redirectCount;
    /** The titles of W lines (wiki page links of a file read for its links only). */
    String[] links = new String[0];
    int linkCount;

    Entity(String id) {
      this.id = id;
    }

    void literal(int predicate, String value) {
      if (literals == literalPredicates.length) {
        literalPredicates = Arrays.copyOf(literalPredicates, 2 * literals);
        literalValues = Arrays.copyOf(literalValues, 2 * literals);
      }
      literalPredicates[literals] = predicate;
      literalValues[literals++] = value;
    }

    void iri(int predicate, String value) {
      if (iris == iriPredicates.length) {
        iriPredicates = Arrays.copyOf(iriPredicates, 2 * iris);
        iriValues = Arrays.copyOf(iriValues, 2 * iris);
      }
      iriPredicates[iris] = predicate;
      iriValues[iris++] = value;
    }

    void redirect(String page) {
      if (redirectCount == redirects.length) {
        redirects = Arrays.copyOf(redirects, Math.max(2, 2 * redirectCount));
      }
      redirects[redirectCount++] = page;
    }

    void link(String title) {
      if (linkCount == links.length) {
        links = Arrays.copyOf(links, Math.max(4, 2 * linkCount));
      }
      links[linkCount++] = title;
    }

    /** Whether a literal statement has this predicate. */
    boolean has(int predicate) {
      for (int k = 0; k < literals; k++) {
        if (literalPredicates[k] == predicate) {
          return true;
        }
      }
      return false;
    }
  }

  /** A field's text: its values one per line, a value's tabs, CR and LF as spaces. */
  private static final class Text {
    private final StringBuilder out = new StringBuilder();
    private boolean first = true;

    void add(String value) {
      if (!first) {
        out.append('\n');
      }
      first = false;
      int n = value.length();
      for (int i = 0; i < n; i++) {
        char c = value.charAt(i);
        out.append(c == '\t' || c == '\r' || c == '\n' ? ' ' : c);
      }
    }

    @Override
    public String toString() {
      return out.toString();
    }
  }

  /**
   * The labels that differ from the title in the URI, from the spill's labels files ({@code
   * subject TAB escaped label} lines; a later file's label of a subject wins).
   */
  public static final class Labels {
    private final Map<String, String> labels = new HashMap<>();

    public Labels(String[] files) throws IOException {
      for (String file : files) {
        String text = new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.UTF_8);
        int start = 0;
        int end;
        while ((end = text.indexOf('\n', start)) >= 0) {
          int tab = text.indexOf('\t', start);
          labels.put(text.substring(start, tab), spillUnescape(text.substring(tab + 1, end)));
          start = end + 1;
        }
      }
    }

    public int size() {
      return labels.size();
    }

    /** The IRI's label, or (none or empty) the text of its URI. */
    String resolve(String iri) {
      String label = labels.get(iri);
      return label == null || label.isEmpty() ? DumpSpiller.titleText(iri) : label;
    }
  }
}
