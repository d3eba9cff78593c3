"""The taxonomy's builder (bench/taxonomy.py), on a WordNet of a few synsets in its own file format."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from bench.taxonomy import build, main
from resolver.domain.taxonomy import Kin, Taxonomy

LICENCE = "  1 This software and database is being provided to you, the LICENSEE, by Princeton University\n"
# data.noun: offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt pointers (symbol offset pos st) | gloss
NOUNS = [
    "00000100 03 n 01 entity 0 000 | that which exists",
    "00000200 03 n 01 object 0 001 @ 00000100 n 0000 | a thing",
    "00000300 06 n 01 artifact 0 001 @ 00000200 n 0000 | made",
    "00000400 06 n 01 device 0 001 @ 00000300 n 0000 | a device",
    "00000500 06 n 02 musical_instrument 0 instrument 0 001 @ 00000400 n 0000 | makes music",
    "00000600 06 n 01 violin 0 002 @ 00000500 n 0000 ~ 00000100 n 0000 | bowed",
    "00000700 06 n 01 piano 0 001 @ 00000500 n 0000 | keys",
    "00000800 06 n 02 fiddle 0 violin 0 001 @i 00000500 n 0000 | a second sense",
    "00000900 06 n 01 fiddle 1 001 @ 00000300 n 0000 | an untagged third sense",
]
VERBS = ["00001000 41 v 02 call 0 ring 0 000 | telephone"]
SENSES = [  # sense_key offset sense_number tag_count
    "violin%1:06:00:: 00000600 1 3",
    "piano%1:06:00:: 00000700 1 9",
    "fiddle%1:06:00:: 00000800 1 2",
    "fiddle%1:06:01:: 00000600 2 1",  # tagged: kept among what it can name
    "fiddle%1:06:02:: 00000900 3 0",  # never tagged, not its first: left out
    "musical_instrument%1:06:00:: 00000500 1 4",  # two words: not a word of a reference
    "call%2:41:00:: 00001000 1 40",
    "ring%2:41:00:: 00001000 1 1",
    "ring%2:41:01:: 00000900 2 0",
]


def wordnet(folder: Path) -> Path:
    (folder / "data.noun").write_text(LICENCE + "\n".join(NOUNS) + "\n", encoding="latin-1")
    (folder / "data.verb").write_text(LICENCE + "\n".join(VERBS) + "\n", encoding="latin-1")
    (folder / "index.sense").write_text("\n".join(SENSES) + "\n", encoding="latin-1")
    return folder


def test_build__first_senses_tagged_senses_hypernyms_and_depths(tmp_path):
    table = build(wordnet(tmp_path))
    number = {n: k for k, n in enumerate(sorted({("n", o) for o in ("00000100", "00000200", "00000300", "00000400",
                                                                   "00000500", "00000600", "00000700",
                                                                   "00000800")} | {("v", "00001000")}))}
    assert table["words"]["violin"] == [number[("n", "00000600")]]
    assert table["words"]["fiddl"] == [number[("n", "00000800")]]  # by the English stem
    assert table["also"]["fiddl"] == [number[("n", "00000600")]]  # tagged; the untagged third sense is not kept
    assert table["words"]["ring"] == [number[("v", "00001000")]] and "ring" not in table["also"]
    assert "musical_instrument" not in table["words"]
    violin = number[("n", "00000600")]
    assert table["parents"][violin] == [number[("n", "00000500")]]  # the hypernym, not the other pointer
    assert table["parents"][number[("n", "00000800")]] == [number[("n", "00000500")]]  # an instance's too
    assert table["depth"][violin] == 5 and table["depth"][number[("n", "00000100")]] == 0


def test_main__writes_a_table_the_runtime_reads_the_same_bytes_each_time(tmp_path):
    out = tmp_path / "taxonomy.json.gz"
    assert main(["--wordnet", str(wordnet(tmp_path)), "--out", str(out)]) == 0
    first = out.read_bytes()
    assert main(["--wordnet", str(tmp_path), "--out", str(out)]) == 0
    assert out.read_bytes() == first
    table = Taxonomy.load(out)
    stems = lambda words: [w.rstrip("e") for w in words]  # noqa: E731  (the fixture's stems: "fiddle" -> "fiddl")
    assert table.compare(("violin",), ("piano",), stems=stems) == Kin(cohyponym=True)
    assert table.compare(("ring",), ("call",), stems=stems) == Kin(linked=True)
    assert json.loads(gzip.decompress(first))["stemmer"] == "english"


def test_main__a_folder_without_wordnet_says_what_to_install(tmp_path, capsys):
    assert main(["--wordnet", str(tmp_path), "--out", str(tmp_path / "t.json.gz")]) == 2
    assert "wordnet-base wordnet-sense-index" in capsys.readouterr().err
    assert not (tmp_path / "t.json.gz").exists()
