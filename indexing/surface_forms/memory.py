"""The memory budget of the surface-form stage (``--memory MB`` of ``elquery index surface-forms``,
``elquery index facc-counts`` and ``elquery build``), importable without numpy or pyarrow: the
command line shows it in its help.

``--memory`` is the memory each process of the stage gives to the rows it holds before spilling
them to disk, whatever the input's size:

- a process summing rows (the dumps' aliases and anchors, each FACC reader) holds at most
  :func:`chunk_rows` rows, estimated at :data:`CHUNK_ROW_BYTES` each (a row's key and count, and
  per distinct raw and normalized form its Python string and dictionary entries);
- a merge process holds one partition of the spilled rows, and the partitions are made small
  enough (:func:`partition_input_bytes`) that merging one and writing it as a shard, estimated at
  :data:`MERGE_BYTES_PER_INPUT_BYTE` times its input, fits;
- the process that assembles the store gives SQLite's page cache a quarter of it while it
  inserts the forms (:func:`sqlite_cache_kib`), and all of it to index them (the sort of the
  forms, in one list, without helper threads that would each hold one: about a third less CPU
  than in a quarter at 30M pairs; :func:`sqlite_index_cache_kib`);
- a process gathering the forms of a run of entities (``entity_forms``) holds at most
  :func:`entity_form_pairs` of their (entity, form) pairs, estimated at
  :data:`ENTITY_FORM_PAIR_BYTES` each, however many pairs an entity has;
- a raw FACC1 counter holds ``memory`` of (mention, mid) pairs
  (:mod:`elquery.indexing.surface_forms.facc_annotations`).

Besides it, each process holds about 150 MB of code and buffers, and the processes that map
Freebase ids map the mapping from a file (a hash table, 20 to 40 bytes per mapped mid, one copy in
the page cache); the process reading the dumps holds the entity ids (about 200 bytes per entity)
and the Freebase links as read (16 bytes each).
"""

from elquery.base import ElqueryError

DEFAULT_MEMORY_MB = 512
CHUNK_ROW_BYTES = 256
MERGE_BYTES_PER_INPUT_BYTE = 12
MIN_CHUNK_ROWS = 1_000
ENTITY_FORM_PAIR_BYTES = 128


def check_memory(memory_mb: int) -> int:
    """``memory_mb`` if it is a usable budget (at least 1 MB), else the one-line error."""
    if memory_mb < 1:
        raise ElqueryError(f"--memory must be at least 1 (MB), not {memory_mb}")
    return memory_mb


def chunk_rows(memory_mb: int) -> int:
    """Rows a summing process holds before it spills them."""
    return max(MIN_CHUNK_ROWS, memory_mb * 2**20 // CHUNK_ROW_BYTES)


def partition_input_bytes(memory_mb: int) -> int:
    """Bytes of (uncompressed) input per partition, so that a partition is merged within ``memory_mb``."""
    return max(1, memory_mb * 2**20 // MERGE_BYTES_PER_INPUT_BYTE)


def sqlite_cache_kib(memory_mb: int) -> int:
    """SQLite's page cache in KiB for the process that assembles and indexes the store."""
    return max(2048, memory_mb * 1024 // 4)


def sqlite_index_cache_kib(memory_mb: int) -> int:
    """SQLite's page cache in KiB (and memory for its sorts) while the assembling process indexes the store."""
    return max(2048, memory_mb * 1024)


def entity_form_pairs(memory_mb: int) -> int:
    """(entity, form) pairs a process gathers the entities' forms of at once."""
    return max(1, memory_mb * 2**20 // ENTITY_FORM_PAIR_BYTES)
