package org.elquery.index;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * UTF-8 decoding as Python decodes dump lines (``elquery.indexing.ntriples.open_text``): a valid
 * sequence (no overlong forms, no surrogates, nothing beyond U+10FFFF) is one character; every
 * byte outside one becomes the lone surrogate U+DC00 + byte, as Python's ``surrogateescape`` does,
 * so that an IRI holding one is refused and a literal gets U+FFFD in its place ({@link
 * #replaceEscapedBytes}, one U+FFFD per maximal subpart, as Python's ``replace`` does).
 */
final class Utf8 {
  private Utf8() {}

  /**
   * Decodes {@code b[off, off + len)} into {@code out} (at least {@code len} chars long); returns
   * the number of chars written. With {@code replace}, each maximal invalid subpart becomes one
   * U+FFFD, otherwise each of its bytes becomes U+DC00 + byte.
   */
  static int decode(byte[] b, int off, int len, char[] out, boolean replace) {
    return decode(b, off, len, out, replace, new boolean[1]);
  }

  /** As {@link #decode(byte[], int, int, char[], boolean)}; sets {@code invalid[0]} when some
   * bytes were not valid UTF-8. */
  static int decode(byte[] b, int off, int len, char[] out, boolean replace, boolean[] invalid) {
    int i = off;
    int end = off + len;
    int o = 0;
    while (i < end) {
      int b0 = b[i] & 0xff;
      if (b0 < 0x80) {
        out[o++] = (char) b0;
        i++;
        continue;
      }
      int need;
      int lo = 0x80;
      int hi = 0xBF;
      int cp;
      if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
        cp = b0 & 0x1F;
      } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        cp = b0 & 0x0F;
        if (b0 == 0xE0) {
          lo = 0xA0;
        } else if (b0 == 0xED) {
          hi = 0x9F;
        }
      } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        cp = b0 & 0x07;
        if (b0 == 0xF0) {
          lo = 0x90;
        } else if (b0 == 0xF4) {
          hi = 0x8F;
        }
      } else {
        need = 0;
        cp = -1;
      }
      int k = 1;
      if (need > 0) {
        for (; k <= need && i + k < end; k++) {
          int bk = b[i + k] & 0xff;
          if (bk < (k == 1 ? lo : 0x80) || bk > (k == 1 ? hi : 0xBF)) {
            break;
          }
          cp = (cp << 6) | (bk & 0x3F);
        }
      }
      if (need > 0 && k > need) {
        if (cp >= 0x10000) {
          out[o++] = Character.highSurrogate(cp);
          out[o++] = Character.lowSurrogate(cp);
        } else {
          out[o++] = (char) cp;
        }
        i += need + 1;
      } else {
        invalid[0] = true;
        if (replace) {
          out[o++] = '\uFFFD';
        } else {
          for (int m = 0; m < k; m++) {
            out[o++] = (char) (0xDC00 + (b[i + m] & 0xff));
          }
        }
        i += k;
      }
    }
    return o;
  }

  /** Whether {@code c} at {@code i} of {@code s} is an escaped byte (a lone U+DC80..U+DCFF). */
  static boolean isEscapedByte(String s, int i) {
    char c = s.charAt(i);
    return c >= 0xDC80 && c <= 0xDCFF && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
  }

  static boolean hasEscapedByte(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (isEscapedByte(s, i)) {
        return true;
      }
    }
    return false;
  }

  /** The text with its escaped bytes put back and decoded again, invalid subparts as U+FFFD
   * (Python: {@code text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")}). */
  static String replaceEscapedBytes(String s) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length() + 16);
    int start = 0;
    for (int i = 0; i < s.length(); i++) {
      if (isEscapedByte(s, i)) {
        byte[] run = s.substring(start, i).getBytes(StandardCharsets.UTF_8);
        bytes.write(run, 0, run.length);
        bytes.write(s.charAt(i) - 0xDC00);
        start = i + 1;
      }
    }
    byte[] run = s.substring(start).getBytes(StandardCharsets.UTF_8);
    bytes.write(run, 0, run.length);
    byte[] all = bytes.toByteArray();
    char[] out = new char[all.length];
    return new String(out, 0, decode(all, 0, all.length, out, true));
  }
}
