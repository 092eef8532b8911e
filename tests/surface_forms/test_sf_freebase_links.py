"""The Freebase mapping read from the dumps: a mid linked to several entities keeps the smallest
entity id and each link naming another entity than the one kept so far is a conflict (in link
order), for mids short enough to be encoded as numbers and for longer ones; a link from a
redirect page counts for its target; repeated links are no conflict."""

from __future__ import annotations

from pathlib import Path

from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.kb.surface_forms.store import SurfaceFormStore

LONG = "0toolongmid_abcdef"  # 18 characters: too long for a number code
LINKS = [("Zeta", "0abc"), ("Alpha", "0abc"), ("Zeta", "0abc"), ("Beta", "0xyz"), ("Beta", "0xyz"),
         ("Mu", LONG), ("Gamma", LONG), ("Mu", LONG), ("Old_name", "0red"), ("Delta", "0dd")]


def _dumps(folder: Path) -> Path:
    folder.mkdir()
    (folder / "freebase_links_en.ttl").write_text("".join(
        f"<http://dbpedia.org/resource/{title}> <http://www.w3.org/2002/07/owl#sameAs> <http://rdf.freebase.com/ns/m.{mid}> .\n"
        for title, mid in LINKS), encoding="utf-8")
    (folder / "transitive_redirects_en.ttl").write_text(
        "<http://dbpedia.org/resource/Old_name> <http://dbpedia.org/ontology/wikiPageRedirects> "
        "<http://dbpedia.org/resource/Target> .\n", encoding="utf-8")
    return folder


def test_conflicting_links_keep_the_smallest_id(tmp_path: Path) -> None:
    facc = tmp_path / "facc.tsv"
    mids = ["0abc", "0xyz", LONG, "0red", "0dd", "0none"]
    facc.write_text("".join(f"form {mid}\t/m/{mid}\t{n + 1}\n" for n, mid in enumerate(mids)), encoding="utf-8")
    report = build_store(tmp_path / "sf.db", BuildOptions(dumps=(_dumps(tmp_path / "dumps"),), facc=(facc,),
                                                          kb_aliases=False, progress=False))
    with SurfaceFormStore(tmp_path / "sf.db") as store:
        pairs = {(p.form, p.entity): p.facc for p in store.pairs()}
    assert pairs == {("form 0abc", "<dbpedia:Alpha>"): 1, ("form 0xyz", "<dbpedia:Beta>"): 2,
                     (f"form {LONG.replace('_', ' ')}", "<dbpedia:Gamma>"): 3, ("form 0red", "<dbpedia:Target>"): 4,
                     ("form 0dd", "<dbpedia:Delta>"): 5}
    # 0abc: Alpha against Zeta, then Zeta against Alpha; LONG: Gamma against Mu, then Mu against Gamma
    assert (report.dumps.freebase_links, report.dumps.freebase_conflicts) == (10, 4)
    assert (report.facc.mapped_rows, report.facc.unmapped_rows, report.facc.unmapped_examples) == (5, 1, ["/m/0none"])
