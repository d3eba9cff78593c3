"""Write the word taxonomy the relevance model reads (resolver/data/relevance/taxonomy.json.gz) from WordNet.

    .venv/bin/python bench/taxonomy.py [--wordnet DIR]   # DIR: WordNet 3.0's database files

The source is Princeton WordNet 3.0 as Debian's `wordnet-base` and
`wordnet-sense-index` packages install it (/usr/share/wordnet): `index.sense`
names each sense of each word and how often it was tagged in the SemCor
corpus; `data.noun` and `data.verb` give each synset's hypernyms. Only this
script reads them; the package ships what it writes and reads no WordNet at
run time (no new dependency, no system package).

What it keeps: every single-word noun and verb, by its English Snowball stem
(the matcher's stems; "cucumbers" and "cucumber" are one key); of each word,
its first sense as a noun and as a verb (`words`: what it names; kin are
judged by these, since a word's rare senses would make near kin of unrelated
words) and its other senses SemCor tagged at least once (`also`: what it can
name; a link by one of these says "another word for it"); of each synset
reached, its hypernyms and its least depth below a root.
`resolver.domain.taxonomy` reads the file: "violin" and "piano" are
co-hyponyms (kin under one near hypernym), "ring" and "call" share a synset.

The file is written in a stable order (the same WordNet gives the same bytes),
and its SHA-256 goes into the model's fingerprint.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OUT = Path(__file__).resolve().parent.parent / "resolver" / "data" / "relevance" / "taxonomy.json.gz"
# WordNet's synset types of index.sense's keys (wndb(5)): 1 noun, 2 verb.
POSES = {"1": "n", "2": "v"}
DATA_FILES = {"n": "data.noun", "v": "data.verb"}
HYPERNYMS = {"@", "@i"}  # a hypernym, an instance's hypernym


def read_senses(path: Path, senses: str = "first") -> dict[str, list[tuple[str, str]]]:
    """Each word's kept senses, (pos, offset), most frequent first (index.sense: key offset number count).

    `senses`: "first", each word's first sense as a noun and as a verb (WordNet numbers a word's senses by
    how often SemCor tagged them); "tagged", also every other sense SemCor tagged at least once.
    """
    found: dict[str, list[tuple[int, str, str]]] = {}
    with path.open(encoding="latin-1") as lines:
        for line in lines:
            key, offset, number, count = line.split()
            lemma, _sep, rest = key.partition("%")
            pos = POSES.get(rest[:1])
            if pos is None or not lemma.isalpha() or not lemma.isascii():
                continue
            if int(number) != 1 and (senses == "first" or int(count) < 1):
                continue
            found.setdefault(lemma.lower(), []).append((int(number), pos, offset))
    return {word: [(pos, offset) for _n, pos, offset in sorted(senses)] for word, senses in found.items()}


def read_hypernyms(folder: Path) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Each synset's hypernyms (data.noun, data.verb: offset lex type count words... pointers...)."""
    parents: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for pos, name in DATA_FILES.items():
        with (folder / name).open(encoding="latin-1") as lines:
            for line in lines:
                if line.startswith(" "):
                    continue  # the licence
                fields = line.split()
                words = int(fields[3], 16)
                at = 4 + 2 * words
                pointers = int(fields[at])
                found = []
                for k in range(pointers):
                    symbol, offset, target_pos = fields[at + 1 + 4 * k: at + 4 + 4 * k]
                    if symbol in HYPERNYMS:
                        found.append((target_pos, offset))
                parents[(pos, fields[0])] = found
    return parents


def _by_stem(senses: dict[str, list[tuple[str, str]]], stemmer: Stemmer.Stemmer) -> dict[str, list[tuple[str, str]]]:
    by_stem: dict[str, list[tuple[str, str]]] = {}
    for word in sorted(senses):
        kept = by_stem.setdefault(stemmer.stemWord(word), [])
        kept.extend(s for s in senses[word] if s not in kept)
    return by_stem


def build(folder: Path) -> dict:
    """Two sense lists per stem: `words`, the first senses (what a word names: "violin" and "piano" are kin
    by theirs), and `also`, the other senses SemCor tagged (what it can name: "book" and "reserve" share
    one, "finish" and "end" another)."""
    stemmer = Stemmer.Stemmer("english")
    first = _by_stem(read_senses(folder / "index.sense", "first"), stemmer)
    tagged = _by_stem(read_senses(folder / "index.sense", "tagged"), stemmer)
    also = {stem: [s for s in kept if s not in first.get(stem, ())] for stem, kept in tagged.items()}
    also = {stem: kept for stem, kept in also.items() if kept}
    parents = read_hypernyms(folder)
    reached: set[tuple[str, str]] = set()
    pending = [s for table in (first, also) for kept in table.values() for s in kept]
    while pending:
        synset = pending.pop()
        if synset not in reached:
            reached.add(synset)
            pending.extend(parents.get(synset, ()))
    order = sorted(reached)
    number = {s: n for n, s in enumerate(order)}
    depth: dict[tuple[str, str], int] = {}

    def depth_of(synset: tuple[str, str]) -> int:
        # Iterative: WordNet's hypernym chains are short, but a recursion limit is no place to learn that.
        stack = [synset]
        while stack:
            top = stack[-1]
            todo = [p for p in parents.get(top, ()) if p not in depth]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            depth[top] = 1 + min((depth[p] for p in parents.get(top, ())), default=-1)
        return depth[synset]

    return {
        "source": "Princeton WordNet 3.0 (Debian wordnet-base, wordnet-sense-index): nouns and verbs, each "
                  "word's first sense as either (words) and the other senses SemCor tagged (also)",
        "licence": "WordNet 3.0 license, Copyright 2006 by Princeton University: WORDNET-LICENSE beside this file",
        "stemmer": "english",
        "words": {stem: [number[s] for s in kept] for stem, kept in sorted(first.items())},
        "also": {stem: [number[s] for s in kept] for stem, kept in sorted(also.items())},
        "parents": [[number[p] for p in parents.get(s, ())] for s in order],
        "depth": [depth_of(s) for s in order],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"),
                        help="WordNet 3.0's database files (index.sense, data.noun, data.verb)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    missing = [n for n in ("index.sense", *DATA_FILES.values()) if not (args.wordnet / n).exists()]
    if missing:
        print(f"{args.wordnet} lacks {', '.join(missing)}: apt-get install wordnet-base wordnet-sense-index",
              file=sys.stderr)
        return 2
    table = build(args.wordnet)
    text = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
    # mtime 0: the same WordNet writes the same bytes.
    args.out.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    print(f"{args.out.name}: {len(table['words'])} stems, {len(table['parents'])} synsets, "
          f"{args.out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
