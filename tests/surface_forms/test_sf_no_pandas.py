"""A surface-form build converts between pyarrow, numpy and Python through the arrays' buffers
(elquery.indexing.surface_forms.arrow_arrays), so pyarrow never imports pandas: about 0.3 s of
CPU in every process of the build (the FACC readers and the merge workers are spawned)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from pathlib import Path
from elquery.indexing.surface_forms import BuildOptions, build_store
sample, facc, out = map(Path, sys.argv[1:4])
report = build_store(out, BuildOptions(dumps=(sample,), facc=(facc,), anchors=True, workers=1, progress=False))
assert report.facc.mapped_rows > 0 and report.dumps.anchor_links > 0 and report.pairs > 0
print("pandas" in sys.modules)
"""


def test_a_build_imports_no_pandas(dbpedia_sample: Path, tmp_path: Path) -> None:
    import bz2

    with bz2.open(dbpedia_sample / "freebase_links_en.ttl.bz2", "rt", encoding="utf-8") as handle:
        mids = [line.split("/ns/m.", 1)[1].split(">", 1)[0] for line in handle if "/ns/m." in line]
    facc = tmp_path / "facc"
    facc.mkdir()
    (facc / "canonical.tsv").write_text("".join(f"Form {i}!\t/m/{mid}\t{i + 1}\n" for i, mid in enumerate(mids)), encoding="utf-8")
    (facc / "spellings.tsv").write_text("".join(f"Forme {i}\tm.{mid}\t{i + 1}\n" for i, mid in enumerate(mids)), encoding="utf-8")
    (facc / "malformed.tsv").write_text(f"São\t/m/{mids[0]}\t2\nbad\t/m/{mids[1]}\tx\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(dbpedia_sample), str(facc), str(tmp_path / "sf.db")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
