package org.elquery.index;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Texts handed to Python as UTF-8 bytes rather than as Java strings: pyjnius decodes a Java string
 * as UTF-16 and takes its first character for a byte-order mark, so it drops a leading U+FEFF and
 * reads the rest of a string that begins with U+FFFE byte-swapped. Layout (little-endian): int32
 * n, then n int32 end offsets (the end of text i in the UTF-8 that follows), then the texts' UTF-8
 * one after another ({@code elquery.kb.jvm.utf8_texts} reads it).
 */
public final class Utf8Texts {
  private Utf8Texts() {}

  /** The texts in the layout above. */
  public static byte[] encode(String[] texts) {
    byte[][] encoded = new byte[texts.length][];
    int size = 0;
    for (int i = 0; i < texts.length; i++) {
      encoded[i] = texts[i].getBytes(StandardCharsets.UTF_8);
      size += encoded[i].length;
    }
    ByteBuffer out = ByteBuffer.allocate(4 + 4 * texts.length + size).order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(texts.length);
    int end = 0;
    for (byte[] text : encoded) {
      end += text.length;
      out.putInt(end);
    }
    for (byte[] text : encoded) {
      out.put(text);
    }
    return out.array();
  }
}
