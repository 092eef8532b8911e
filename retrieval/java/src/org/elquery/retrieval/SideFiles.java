package org.elquery.retrieval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;

/**
 * The per-docid int32 arrays elquery writes beside a Lucene index (indexing/index_files.py, the
 * format of elquery/kb/index_format.py): {@code FIELD_length.npy} (exact field lengths) and
 * {@code entity_id_rank.npy} (each docid's position in entity-id order), NumPy {@code .npy} files
 * of little-endian int32, one value per docid. They are memory-mapped, not read: opening one costs
 * the same at any index size, and the operating system pages in what scoring touches.
 */
final class SideFiles {
  private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};

  private SideFiles() {}

  /** The folder of the index that {@code leaf} is a segment of, or null (not on a file system). */
  static Path folder(LeafReader leaf) {
    LeafReader reader = FilterLeafReader.unwrap(leaf);
    if (!(reader instanceof SegmentReader)) {
      return null;
    }
    var directory = FilterDirectory.unwrap(((SegmentReader) reader).directory());
    return directory instanceof FSDirectory ? ((FSDirectory) directory).getDirectory() : null;
  }

  /** The file {@code name} of the index of {@code leaf} mapped as {@code count} int32 values, or
   * null when there is no such file or it is not a one-dimensional little-endian int32 array of
   * {@code count} values. */
  static IntBuffer map(LeafReader leaf, String name, int count) throws IOException {
    Path folder = folder(leaf);
    ByteBuffer data = folder == null ? null : map(folder.resolve(name), "<i4", 4, count);
    return data == null ? null : data.asIntBuffer();
  }

  /** The file {@code file} mapped as {@code count} int64 values, or null when there is no such
   * file or it is not a one-dimensional little-endian int64 array of {@code count} values. */
  static LongBuffer mapLongs(Path file, long count) throws IOException {
    ByteBuffer data = map(file, "<i8", 8, count);
    return data == null ? null : data.asLongBuffer();
  }

  private static ByteBuffer map(Path file, String descr, int width, long count) throws IOException {
    if (!Files.isRegularFile(file)) {
      return null;
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer start = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
      while (start.hasRemaining() && channel.read(start) >= 0) {}
      start.flip();
      if (start.remaining() < 12 || !start.slice().limit(MAGIC.length).equals(ByteBuffer.wrap(MAGIC))) {
        return null;
      }
      int major = start.get(6);
      long headerStart = major == 1 ? 10 : 12;
      long headerLength = major == 1 ? Short.toUnsignedInt(start.getShort(8)) : Integer.toUnsignedLong(start.getInt(8));
      ByteBuffer header = ByteBuffer.allocate((int) headerLength);
      channel.position(headerStart);
      while (header.hasRemaining() && channel.read(header) >= 0) {}
      String text = new String(header.array(), StandardCharsets.ISO_8859_1).replace(" ", "");
      long data = headerStart + headerLength;
      if (!text.contains("'descr':'" + descr + "'") || !text.contains("'fortran_order':False")
          || !text.contains("'shape':(" + count + ",)") || channel.size() != data + width * count) {
        return null;
      }
      return channel.map(FileChannel.MapMode.READ_ONLY, data, width * count).order(ByteOrder.LITTLE_ENDIAN);
    }
  }
}
