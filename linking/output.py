"""The outputs of ``elquery link`` (``elq``, ``trec``, ``jsonl``) are the format module
:mod:`elquery.formats.link_output`; its names are re-exported here for the code that imports them
from the linking layer."""

from __future__ import annotations

from elquery.formats.elq import number
from elquery.formats.link_output import (FORMATS, LinkOutput, RunFormat, elq_lines, formatter, jsonl_lines,
                                         jsonl_record, trec_lines, write_results, write_texts)

__all__ = ["FORMATS", "LinkOutput", "RunFormat", "elq_lines", "formatter", "jsonl_lines", "jsonl_record", "number",
           "trec_lines", "write_results", "write_texts"]
