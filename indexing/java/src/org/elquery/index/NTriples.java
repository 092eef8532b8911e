package org.elquery.index;

/**
 * One N-Triples line parsed exactly as {@code elquery.indexing.ntriples.parse_line} parses it
 * (methods.md §2): the same grammar (its regular expression, whose matches are unique but for the
 * label of a blank-node object, where the longest label that lets the line end wins, as the
 * regular expression's backtracking gives), the same unescaping and the same checks, in the same
 * order, with the same reasons for a malformed line.
 */
final class NTriples {
  static final String DBPEDIA_RESOURCE = "http://dbpedia.org/resource/";
  static final int IRI = 0;
  static final int BLANK = 1;
  static final int LITERAL = 2;
  static final String NOT_A_STATEMENT = "not an N-Triples statement";

  private NTriples() {}

  /** A malformed line; its message is the reason reported. No stack trace (cheap). */
  static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String reason) {
      super(reason, null, false, false);
    }
  }

  /** The parsed parts of one statement (reused from line to line). */
  static final class Statement {
    String subject;
    String predicate;
    String object;
    int kind;
    /** Scratch: whether the IRI body scanned last may need {@link #iri}'s full check. */
    boolean suspect;
  }

  private static final Malformed NOT_STATEMENT = new Malformed(NOT_A_STATEMENT);

  /** Python's {@code str.isspace} (what {@code str.strip()} removes). */
  static boolean isPythonSpace(char c) {
    if (c <= 0x20) {
      return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    }
    if (c < 0x85) {
      return false;
    }
    return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029
        || c == 0x202f || c == 0x205f || c == 0x3000;
  }

  /** Which ASCII characters are plain IRI characters: {@code [^\x00-\x20<>"{}|^`\\]}. */
  private static final boolean[] IRI_ASCII = new boolean[128];

  static {
    for (char c = 0x21; c < 128; c++) {
      IRI_ASCII[c] = "<>\"{}|^`\\".indexOf(c) < 0;
    }
  }

  /** {@code [^\x00-\x20<>"{}|^`\\]}: a plain IRI character (and a blank-node label's). */
  private static boolean isIriChar(char c) {
    return c >= 128 || IRI_ASCII[c];
  }

  private static boolean isHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  private static boolean hexAt(String s, int from, int count, int end) {
    if (from + count > end) {
      return false;
    }
    for (int k = from; k < from + count; k++) {
      if (!isHex(s.charAt(k))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The end of the longest IRIREF body from {@code i}: plain characters and \\u / \\U escapes.
   * Notes in {@code scratch.suspect} whether the body may need resolving or refusing by {@link
   * #iri} ({@code _IRI_SUSPECT}: an escape, U+0085, U+2028, U+2029, or a low surrogate that may
   * be an escaped byte; a false alarm only costs the full check).
   */
  private static int iriEnd(String s, int i, int end, Statement scratch) {
    boolean suspect = false;
    while (i < end) {
      char c = s.charAt(i);
      if (c < 128) {
        if (IRI_ASCII[c]) {
          i++;
        } else if (c == '\\' && i + 1 < end && s.charAt(i + 1) == 'u' && hexAt(s, i + 2, 4, end)) {
          suspect = true;
          i += 6;
        } else if (c == '\\' && i + 1 < end && s.charAt(i + 1) == 'U' && hexAt(s, i + 2, 8, end)) {
          suspect = true;
          i += 10;
        } else {
          break;
        }
      } else {
        suspect |= c == 0x85 || c == 0x2028 || c == 0x2029 || (c >= 0xDC80 && c <= 0xDCFF);
        i++;
      }
    }
    scratch.suspect = suspect;
    return i;
  }

  private static int labelRunEnd(String s, int i, int end) {
    while (i < end && isIriChar(s.charAt(i))) {
      i++;
    }
    return i;
  }

  private static int skipSpaceTab(String s, int i, int end) {
    while (i < end && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
      i++;
    }
    return i;
  }

  /** Whether {@code [ \t]*\.[ \t]*(?:\#.*)?$} matches from {@code i}. */
  private static boolean endsStatement(String s, int i, int end) {
    i = skipSpaceTab(s, i, end);
    if (i >= end || s.charAt(i) != '.') {
      return false;
    }
    i = skipSpaceTab(s, i + 1, end);
    return i == end || s.charAt(i) == '#';
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  private static boolean isAsciiAlphanumeric(char c) {
    return isAsciiLetter(c) || (c >= '0' && c <= '9');
  }

  /** The end of {@code [A-Za-z]+(?:-[A-Za-z0-9]+)*} from {@code i}, or {@code i} if none. */
  private static int languageEnd(String s, int i, int end) {
    int k = i;
    while (k < end && isAsciiLetter(s.charAt(k))) {
      k++;
    }
    if (k == i) {
      return i;
    }
    while (k + 1 < end && s.charAt(k) == '-' && isAsciiAlphanumeric(s.charAt(k + 1))) {
      k += 2;
      while (k < end && isAsciiAlphanumeric(s.charAt(k))) {
        k++;
      }
    }
    return k;
  }

  /**
   * Parses one line (without its line end) into {@code out}; false for a blank or comment line.
   * {@code maybeInvalid} false promises that the line holds no escaped byte (it was valid UTF-8),
   * which spares looking for them.
   *
   * @throws Malformed with the reason {@code parse_line} gives
   */
  static boolean parse(String line, boolean maybeInvalid, Statement out) throws Malformed {
    int b = 0;
    int e = line.length();
    while (b < e && isPythonSpace(line.charAt(b))) {
      b++;
    }
    while (e > b && isPythonSpace(line.charAt(e - 1))) {
      e--;
    }
    if (b == e || line.charAt(b) == '#') {
      return false;
    }
    String s = line;
    int i = b;
    String subjectIri = null;
    String subjectBlank = null;
    boolean subjectSuspect = false;
    if (s.charAt(i) == '<') {
      int close = iriEnd(s, i + 1, e, out);
      if (close >= e || s.charAt(close) != '>') {
        throw NOT_STATEMENT;
      }
      subjectIri = s.substring(i + 1, close);
      subjectSuspect = out.suspect;
      i = close + 1;
    } else if (s.startsWith("_:", i)) {
      int close = labelRunEnd(s, i + 2, e);
      if (close == i + 2 || s.charAt(i + 2) == '.' || s.charAt(close - 1) == '.') {
        throw NOT_STATEMENT;
      }
      subjectBlank = s.substring(i, close);
      i = close;
    } else {
      throw NOT_STATEMENT;
    }
    i = skipSpaceTab(s, i, e);
    if (i >= e || s.charAt(i) != '<') {
      throw NOT_STATEMENT;
    }
    int close = iriEnd(s, i + 1, e, out);
    if (close >= e || s.charAt(close) != '>') {
      throw NOT_STATEMENT;
    }
    String predicateIri = s.substring(i + 1, close);
    boolean predicateSuspect = out.suspect;
    i = skipSpaceTab(s, close + 1, e);
    if (i >= e) {
      throw NOT_STATEMENT;
    }
    char first = s.charAt(i);
    String objectIri = null;
    String objectBlank = null;
    String literal = null;
    String datatype = null;
    boolean objectSuspect = false;
    if (first == '<') {
      close = iriEnd(s, i + 1, e, out);
      if (close >= e || s.charAt(close) != '>' || !endsStatement(s, close + 1, e)) {
        throw NOT_STATEMENT;
      }
      objectIri = s.substring(i + 1, close);
      objectSuspect = out.suspect;
    } else if (s.startsWith("_:", i)) {
      objectBlank = blankObject(s, i + 2, e);
    } else if (first == '"') {
      int j = i + 1;
      while (true) {
        if (j >= e) {
          throw NOT_STATEMENT;
        }
        char c = s.charAt(j);
        if (c == '"') {
          break;
        }
        if (c == '\n' || c == '\r') {
          throw NOT_STATEMENT;
        }
        if (c == '\\') {
          if (j + 1 >= e || s.charAt(j + 1) == '\n') {
            throw NOT_STATEMENT;
          }
          j += 2;
        } else {
          j++;
        }
      }
      literal = s.substring(i + 1, j);
      int k = j + 1;
      if (k < e && s.charAt(k) == '@') {
        int languageEnd = languageEnd(s, k + 1, e);
        if (languageEnd == k + 1) {
          throw NOT_STATEMENT;
        }
        k = languageEnd;
      } else if (s.startsWith("^^<", k)) {
        close = iriEnd(s, k + 3, e, out);
        if (close >= e || s.charAt(close) != '>') {
          throw NOT_STATEMENT;
        }
        datatype = s.substring(k + 3, close);
        objectSuspect = out.suspect;
        k = close + 1;
      }
      if (!endsStatement(s, k, e)) {
        throw NOT_STATEMENT;
      }
    } else {
      throw NOT_STATEMENT;
    }
    out.subject = subjectIri != null ? iri(subjectIri, subjectSuspect) : subjectBlank;
    out.predicate = iri(predicateIri, predicateSuspect);
    if (objectIri != null) {
      out.object = iri(objectIri, objectSuspect);
      out.kind = IRI;
    } else if (objectBlank != null) {
      out.object = objectBlank;
      out.kind = BLANK;
    } else {
      if (datatype != null) {
        iri(datatype, objectSuspect);
      }
      if (maybeInvalid && Utf8.hasEscapedByte(literal)) {
        literal = Utf8.replaceEscapedBytes(literal);
      }
      out.object = unescape(literal);
      out.kind = LITERAL;
    }
    return true;
  }

  /** {@code _:label} of a blank-node object from {@code from} (after {@code _:}): the longest
   * label (not beginning or ending with a dot) after which the statement ends. */
  private static String blankObject(String s, int from, int e) throws Malformed {
    int run = labelRunEnd(s, from, e);
    if (run == from || s.charAt(from) == '.') {
      throw NOT_STATEMENT;
    }
    for (int k = run; k > from; k--) {
      if (s.charAt(k - 1) != '.' && endsStatement(s, k, e)) {
        return "_:" + s.substring(from, k);
      }
    }
    throw NOT_STATEMENT;
  }

  /** {@code _NOT_IN_IRI}: what an IRI may not hold once unescaped. */
  private static boolean notInIri(int c) {
    return c <= 0x20 || c == '<' || c == '>' || c == '"' || c == '{' || c == '}' || c == '|' || c == '^' || c == '`'
        || c == '\\' || c == 0x85 || c == 0x2028 || c == 0x2029;
  }

  /** An IRI unescaped and checked ({@code _iri}); {@code suspect} as {@link #iriEnd} notes it. */
  static String iri(String text, boolean suspect) throws Malformed {
    if (!suspect && !text.equals(DBPEDIA_RESOURCE)) {
      return text;
    }
    if (Utf8.hasEscapedByte(text)) {
      throw new Malformed("IRI is not valid UTF-8");
    }
    String iri = unescape(text);
    for (int i = 0; i < iri.length(); ) {
      int c = iri.codePointAt(i);
      if (notInIri(c)) {
        throw new Malformed(String.format("IRI holds U+%04X, which no entity id may hold", c));
      }
      i += Character.charCount(c);
    }
    if (iri.equals(DBPEDIA_RESOURCE)) {
      throw new Malformed("DBpedia resource IRI with an empty title");
    }
    return iri;
  }

  /**
   * N-Triples escapes resolved ({@code unescape}): {@code \t \b \n \r \f \" \' \\ \\uXXXX
   * \\UXXXXXXXX}; surrogate pairs written as two escapes make one character, an unpaired
   * surrogate is malformed.
   */
  static String unescape(String text) throws Malformed {
    int n = text.length();
    int i = text.indexOf('\\');
    if (i < 0) {
      return text;
    }
    StringBuilder out = new StringBuilder(n);
    out.append(text, 0, i);
    boolean surrogate = false;
    while (i < n) {
      char c = text.charAt(i);
      if (c != '\\' || i + 1 >= n) {
        out.append(c);
        i++;
        continue;
      }
      char next = text.charAt(i + 1);
      if (next == 'u' && hexAt(text, i + 2, 4, n)) {
        char decoded = (char) Integer.parseInt(text.substring(i + 2, i + 6), 16);
        surrogate |= Character.isSurrogate(decoded);
        out.append(decoded);
        i += 6;
      } else if (next == 'U' && hexAt(text, i + 2, 8, n)) {
        String hex8 = text.substring(i + 2, i + 10);
        long code = Long.parseLong(hex8, 16);
        if (code > 0x10FFFF) {
          throw new Malformed("escape \\U" + hex8 + " is beyond Unicode");
        }
        surrogate |= code >= 0xD800 && code <= 0xDFFF;
        out.appendCodePoint((int) code);
        i += 10;
      } else {
        int escaped = text.codePointAt(i + 1);
        switch (escaped) {
          case 't': out.append('\t'); break;
          case 'b': out.append('\b'); break;
          case 'n': out.append('\n'); break;
          case 'r': out.append('\r'); break;
          case 'f': out.append('\f'); break;
          case '"': out.append('"'); break;
          case '\'': out.append('\''); break;
          case '\\': out.append('\\'); break;
          default:
            throw new Malformed("unknown escape \\" + new String(Character.toChars(escaped)));
        }
        i += 1 + Character.charCount(escaped);
      }
    }
    if (surrogate) {
      for (int k = 0; k < out.length(); k++) {
        char c = out.charAt(k);
        if (Character.isHighSurrogate(c) && k + 1 < out.length() && Character.isLowSurrogate(out.charAt(k + 1))) {
          k++;
        } else if (Character.isSurrogate(c)) {
          throw new Malformed("unpaired UTF-16 surrogate escape");
        }
      }
    }
    return out.toString();
  }
}
