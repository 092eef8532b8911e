"""The memory a FACC1 count holds per process before it spills to disk (``elquery index
facc-counts --memory``), importable without pyarrow: the command line shows it in its help."""

DEFAULT_MEMORY_MB = 512
