package org.elquery.index;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.AnalyzerWrapper;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.CodecReader;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FilterMergePolicy;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.LogByteSizeMergePolicy;
import org.apache.lucene.index.MergePolicy;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * Writes entity documents into a new Lucene index (methods.md §2), a batch of documents per call
 * from Python (one crossing per batch, not several per document).
 *
 * <p>Each document holds the stored, unanalyzed id; per text field, the text analyzed with the
 * index's analyzer (positions, norms), stored only when asked; and the field's exact length (its
 * number of tokens) as a numeric doc value {@code <field>_length}. The length is counted while
 * the field is indexed, on the very tokens that are indexed (the text is analyzed once): a
 * counting filter ends each field's token stream, and the length field, which comes after the
 * text fields in the document, reads the count when Lucene indexes it (Lucene indexes a
 * document's fields one after the other, in order).
 *
 * <p>With {@link #setRelations}, each document also holds two keyword fields for ELR (methods.md
 * §4), from a text of {@code entity TAB predicate} lines: the relations field, each distinct
 * entity id one unanalyzed term (documents only, no frequencies or positions), its length
 * {@code <field>_length} the number of distinct ids; and the typed field, each distinct
 * {@code entity TAB predicate} line one term and each distinct predicate one term
 * {@code TAB predicate}. The distinct lines are stored (in the relations field) only when asked.
 *
 * <p>With {@link #setCounts}, each document also holds whole-number counts as numeric doc values
 * {@code <name>_count} (the LTR fields' redirects and links, methods.md §9).
 *
 * <p>Docids follow the order of addition: a log merge policy merges adjacent segments only, and
 * {@link #addIndexes} merges whole indexes, in the given order, into one new segment.
 */
public final class EntityWriter {
  private final IndexWriter writer;
  private final Counting analyzer;
  private final String[] fields;
  private final boolean[] stored;
  private String relations;
  private String typedRelations;
  private boolean relationsStored;
  private String[] counts = new String[0];

  public EntityWriter(String path, Analyzer analyzer, double ramBufferMb, String[] fields, boolean[] stored)
      throws IOException {
    this.analyzer = new Counting(analyzer);
    IndexWriterConfig config = new IndexWriterConfig(this.analyzer);
    config.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    config.setRAMBufferSizeMB(ramBufferMb);
    config.setMergePolicy(new OneMergeForAddedIndexes(new LogByteSizeMergePolicy()));
    config.setUseCompoundFile(false);
    this.writer = new IndexWriter(FSDirectory.open(Paths.get(path)), config);
    this.fields = fields.clone();
    this.stored = stored.clone();
  }

  /** Adds the keyword fields {@code field} and {@code typedField} after the text fields (see above). */
  public void setRelations(String field, String typedField, boolean stored) {
    this.relations = field;
    this.typedRelations = typedField;
    this.relationsStored = stored;
  }

  /** Adds a numeric doc value {@code <name>_count} per name to each document, after its other fields. */
  public void setCounts(String[] names) {
    this.counts = names.clone();
  }

  /** Counts per document ({@link #setCounts}). */
  public int counts() {
    return counts.length;
  }

  /** Texts per document: the text fields, and the relations if set. */
  public int width() {
    return fields.length + (relations == null ? 0 : 1);
  }

  /**
   * Adds {@code ids.length} documents; {@code texts[i * W + f]} is the text of field f of
   * document i (W = {@link #width}: F text fields, plus one for the relations if set, its
   * {@code entity TAB predicate} pairs one per line). Returns the exact lengths, {@code
   * lengths[i * W + f]}.
   */
  public int[] add(String idField, String[] ids, String[] texts) throws IOException {
    return add(idField, ids, texts, new int[0]);
  }

  /** {@link #add(String, String[], String[])} with the documents' counts, {@code counts[i * C + c]}
   * (C = {@link #counts}). */
  public int[] add(String idField, String[] ids, String[] texts, int[] counts) throws IOException {
    int width = width();
    if (texts.length != ids.length * width) {
      throw new IllegalArgumentException("expected " + ids.length * width + " texts, got " + texts.length);
    }
    if (counts.length != ids.length * this.counts.length) {
      throw new IllegalArgumentException("expected " + ids.length * this.counts.length + " counts, got " + counts.length);
    }
    int[] lengths = new int[texts.length];
    for (int i = 0; i < ids.length; i++) {
      addDocument(idField, ids[i], texts, i * width, counts, i * this.counts.length, lengths, i * width);
    }
    return lengths;
  }

  /** Adds one document, its W texts from {@code texts[from]}, its C counts from {@code
   * counts[countsFrom]}, its exact lengths into {@code lengths[at]} on. */
  void addDocument(String idField, String id, String[] texts, int from, int[] counts, int countsFrom, int[] lengths,
      int at) throws IOException {
    Document document = new Document();
    document.add(new StringField(idField, id, Field.Store.YES));
    for (int f = 0; f < fields.length; f++) {
      document.add(new TextField(fields[f], texts[from + f], stored[f] ? Field.Store.YES : Field.Store.NO));
    }
    for (int f = 0; f < fields.length; f++) {
      document.add(new Length(fields[f]));
    }
    if (relations != null) {
      lengths[at + fields.length] = addRelations(document, texts[from + fields.length]);
    }
    for (int c = 0; c < this.counts.length; c++) {
      document.add(new NumericDocValuesField(this.counts[c] + "_count", counts[countsFrom + c]));
    }
    writer.addDocument(document);
    for (int f = 0; f < fields.length; f++) {
      lengths[at + f] = analyzer.count(fields[f]);
    }
  }

  /**
   * The {@code entity TAB predicate} lines of {@code text} as terms of the relations and typed
   * fields (see above); returns the number of distinct entities.
   */
  private int addRelations(Document document, String text) {
    LinkedHashSet<String> lines = new LinkedHashSet<>();
    LinkedHashSet<String> entities = new LinkedHashSet<>();
    LinkedHashSet<String> predicates = new LinkedHashSet<>();
    for (String line : text.split("\n")) {
      int tab = line.indexOf('\t');
      if (tab <= 0 || tab == line.length() - 1) {
        continue;
      }
      lines.add(line);
      entities.add(line.substring(0, tab));
      predicates.add(line.substring(tab));
    }
    for (String id : entities) {
      document.add(new StringField(relations, id, Field.Store.NO));
    }
    for (String line : lines) {
      document.add(new StringField(typedRelations, line, Field.Store.NO));
    }
    for (String predicate : predicates) {
      document.add(new StringField(typedRelations, predicate, Field.Store.NO));
    }
    if (relationsStored && !lines.isEmpty()) {  // a stored-only value would clash with the field's index options
      document.add(new StoredField(relations, String.join("\n", lines)));
    }
    document.add(new NumericDocValuesField(relations + "_length", entities.size()));
    return entities.size();
  }

  /** Appends whole indexes, in the given order, after the documents added so far, as one segment. */
  public void addIndexes(String[] paths) throws IOException {
    List<DirectoryReader> readers = new ArrayList<>();
    try {
      List<CodecReader> leaves = new ArrayList<>();
      for (String path : paths) {
        Directory directory = FSDirectory.open(Paths.get(path));
        DirectoryReader reader = DirectoryReader.open(directory);
        readers.add(reader);
        for (LeafReaderContext leaf : reader.leaves()) {
          leaves.add((CodecReader) leaf.reader());
        }
      }
      writer.addIndexes(leaves.toArray(new CodecReader[0]));
    } finally {
      for (DirectoryReader reader : readers) {
        reader.close();
      }
    }
  }

  /** Commits and closes; with {@code merge} the index becomes one segment (docid order kept). */
  public void close(boolean merge) throws IOException {
    if (merge) {
      writer.forceMerge(1);
    }
    writer.setLiveCommitData(Map.of(ValueGap.COMMIT_KEY, String.valueOf(ValueGap.GAP)).entrySet());
    writer.commit();
    writer.close();
  }

  public void abort() throws IOException {
    writer.rollback();
  }

  /** {@link IndexWriter#addIndexes(CodecReader...)} merges all the readers, in order, at once. */
  private static final class OneMergeForAddedIndexes extends FilterMergePolicy {
    OneMergeForAddedIndexes(MergePolicy in) {
      super(in);
    }

    @Override
    public MergeSpecification findMerges(CodecReader... readers) {
      MergeSpecification specification = new MergeSpecification();
      specification.add(new OneMerge(readers));
      return specification;
    }
  }

  /** The index's analyzer, each field's token stream ending in a filter that counts its tokens,
   * with a position gap between the field's values ({@link ValueGap}). */
  private static final class Counting extends AnalyzerWrapper {
    private final Analyzer analyzer;
    private final Map<String, CountingFilter> counters = new HashMap<>();
    private final Map<String, ValueGap.LineEnds> lineEnds = new HashMap<>();

    Counting(Analyzer analyzer) {
      super(Analyzer.PER_FIELD_REUSE_STRATEGY);  // a counter of its own for each field
      this.analyzer = analyzer;
    }

    @Override
    protected Analyzer getWrappedAnalyzer(String field) {
      return analyzer;
    }

    @Override
    protected Reader wrapReader(String field, Reader reader) {
      return ValueGap.reader(reader, lineEnds.computeIfAbsent(field, f -> new ValueGap.LineEnds()));
    }

    @Override
    protected TokenStreamComponents wrapComponents(String field, TokenStreamComponents components) {
      ValueGap.LineEnds ends = lineEnds.computeIfAbsent(field, f -> new ValueGap.LineEnds());
      CountingFilter counter = new CountingFilter(ValueGap.filter(components.getTokenStream(), ends));
      counters.put(field, counter);
      return new TokenStreamComponents(components.getSource(), counter);
    }

    /** The tokens of the field's text last analyzed (0 before any). */
    int count(String field) {
      CountingFilter counter = counters.get(field);
      return counter == null ? 0 : counter.count;
    }
  }

  private static final class CountingFilter extends TokenFilter {
    private int count;

    CountingFilter(TokenStream input) {
      super(input);
    }

    @Override
    public boolean incrementToken() throws IOException {
      if (!input.incrementToken()) {
        return false;
      }
      count++;
      return true;
    }

    @Override
    public void reset() throws IOException {
      super.reset();
      count = 0;
    }
  }

  /** {@code <field>_length}: the doc value read when Lucene indexes it, after the field's text. */
  private final class Length extends Field {
    private final String field;

    Length(String field) {
      super(field + "_length", NumericDocValuesField.TYPE);
      this.field = field;
    }

    @Override
    public Number numericValue() {
      return (long) analyzer.count(field);
    }
  }
}
