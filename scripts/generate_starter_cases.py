"""Generate resolver/evaluation/data/starter.jsonl, the labelled starter set for `reference_match.v1`.

Run it from anywhere:

    python scripts/generate_starter_cases.py          # write the file
    python scripts/generate_starter_cases.py --check  # exit 1 if the file differs from what would be written

Everything is built from the hand-written items in scripts/data/starter_items.jsonl
(one item a line: kind, domain, collection, title, concept, the references
written for it with their tags, and for near duplicates the family and date)
and one seeded RNG, so the output is the same on every run. The items are fictional.

Why a case's label is right, by construction:

- a matching case puts the item the reference was written for into the pool;
  a no_match case leaves it (and anything sharing its concept) out;
- no other candidate shares a content word with the reference, or a concept
  with the item it was written for, except near duplicates, which are put in
  on purpose and which the reference tells apart (the date, name or number
  that differs);
- items that a person could take for one another (a plumber call and a leaking
  tap) share a concept, so they never meet in a pool by accident.
"""
from __future__ import annotations

import json
import random
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

SEED = 20250307
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "resolver" / "evaluation" / "data" / "starter.jsonl"
ITEMS = Path(__file__).resolve().parent / "data" / "starter_items.jsonl"
MIN_POOL, MAX_POOL = 2, 19

# Tags in the order they are written, so a case's tag list reads the same way.
TAG_ORDER = (
    "paraphrase",
    "partial",
    "typo",
    "abbreviation",
    "near_duplicate",
    "numbers_in_text",
    "multilingual",
    "no_match",
)


@dataclass(frozen=True)
class Ref:
    """A reference a user might write for an item, and what kind of reference it is."""

    text: str
    tags: tuple[str, ...]
    foreign: bool = False  # the reference is not in English


@dataclass(frozen=True)
class Seed:
    """One fictional task or event, with the references written for it."""

    kind: str
    domain: str
    collection: str
    title: str
    refs: tuple[Ref, ...]
    concept: str
    family: str = ""
    foreign_title: bool = False
    numbers: bool = False
    when: str = ""  # a fixed date for titles that name one ("Pay rent – May")


def load_seeds(path: Path = ITEMS) -> list[Seed]:
    """The hand-written items, one JSON object a line, in the order they were written."""
    seeds = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        refs = tuple(Ref(text=r["text"], tags=tuple(r["tags"]), foreign=r.get("foreign", False))
                     for r in data.pop("refs"))
        seeds.append(Seed(refs=refs, **data))
    return seeds


SEEDS: list[Seed] = load_seeds()


# --- Choosing what goes into a pool ----------------------------------------

_STOPWORDS = frozenset(
    """
    a an the to for of with at on in into my our me i and or re from about up out off by is are be this
    that it its his her their your next new some all s w do get
    de der die das den dem des und fur zur zum mit im am bei beim la le les l d du et pour au aux chez el los
    las del con para al y e il lo di da per no the
    """.split()
)


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words without accents, stop words or a plural s: the overlap test."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(char for char in folded if not unicodedata.combining(char))
    words = set()
    for word in re.findall(r"\w+", folded):
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s"):
            word = word[:-1]
        words.add(word)
    return frozenset(words)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def _small_numbers(text: str) -> set[int]:
    """Integers in the text that are also possible candidate numbers."""
    return {int(n) for n in re.findall(r"\d+", text) if 1 <= int(n) <= MAX_POOL}


@dataclass
class Draft:
    """A case before dates, statuses and ids are filled in."""

    reference: str
    kind: str
    pool: list[Seed]
    expected: int | None  # 1-based, None for no_match
    tags: set[str] = field(default_factory=set)


class PoolBuilder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._sizes: list[int] = []

    def next_size(self) -> int:
        # Sizes come from shuffled rounds of 2..19, so every size is used
        # about equally often and large pools are as common as small ones.
        if not self._sizes:
            self._sizes = list(range(MIN_POOL, MAX_POOL + 1))
            self.rng.shuffle(self._sizes)
        return self._sizes.pop()

    def distractors(
        self,
        *,
        kind: str,
        count: int,
        reference: str,
        blocked_concepts: set[str],
        taken: Sequence[Seed],
        prefer_domain: str = "",
    ) -> list[Seed]:
        words = content_words(reference)
        titles = {_normal(seed.title) for seed in taken}
        usable = [
            seed
            for seed in SEEDS
            if seed.kind == kind
            and seed.concept not in blocked_concepts
            and _normal(seed.title) not in titles
            and not (content_words(seed.title) & words)
        ]
        if len(usable) < count:
            raise RuntimeError(f"only {len(usable)} distractors for {reference!r}, need {count}")
        picked: list[Seed] = []
        if prefer_domain:
            # Hard no_match cases: fill at least half the pool from the same
            # domain (other dentists' cousins), as far as there are any.
            near = [seed for seed in usable if seed.domain == prefer_domain]
            picked = self.rng.sample(near, min(len(near), max(1, (count + 1) // 2)))
        rest = [seed for seed in usable if seed not in picked]
        picked += self.rng.sample(rest, count - len(picked))
        self.rng.shuffle(picked)
        return picked

    def matching_case(self, seed: Seed, ref: Ref, *, tags: set[str], typo_of: str = "") -> Draft:
        size = self.next_size()
        siblings: list[Seed] = []
        if seed.family and "near_duplicate" in tags:
            siblings = [s for s in SEEDS if s.family == seed.family and s is not seed]
            size = max(size, 2)
            siblings = self.rng.sample(siblings, min(len(siblings), size - 1, self.rng.randint(1, len(siblings))))
        blocked = {seed.concept}
        others = self.distractors(
            kind=seed.kind,
            count=size - 1 - len(siblings),
            reference=typo_of or ref.text,
            blocked_concepts=blocked,
            taken=[seed, *siblings],
        )
        pool = siblings + others
        self.rng.shuffle(pool)
        position = self._position(size, {seed.title, ref.text} if seed.numbers else set())
        pool.insert(position - 1, seed)
        return Draft(reference=ref.text, kind=seed.kind, pool=pool, expected=position, tags=set(tags))

    def _position(self, size: int, number_texts: set[str]) -> int:
        # With numbers in the title or reference ("chapter 5"), keep the item
        # off the candidate number that the text names: the number must not
        # give the answer away.
        avoid = set().union(*(_small_numbers(text) for text in number_texts)) if number_texts else set()
        choices = [n for n in range(1, size + 1) if n not in avoid] or list(range(1, size + 1))
        return self.rng.choice(choices)

    def no_match_case(
        self,
        seed: Seed,
        reference: str,
        *,
        tags: set[str],
        with_siblings: bool = False,
        prefer_domain: str = "",
        filter_text: str = "",
    ) -> Draft:
        size = self.next_size()
        siblings: list[Seed] = []
        if with_siblings:
            siblings = [s for s in SEEDS if s.family == seed.family and s is not seed]
            siblings = self.rng.sample(siblings, min(len(siblings), size, self.rng.randint(1, len(siblings))))
            size = max(size, len(siblings) + 1)
            # A pool of only the siblings is fine when there are two or more.
            if len(siblings) >= 2 and size == len(siblings) + 1 and self.rng.random() < 0.5:
                size = len(siblings)
        if seed.numbers:
            # Make sure the pool is big enough to hold the candidate number the
            # reference names, so that number is a live trap.
            size = max([size, *(n for n in _small_numbers(reference) if n <= MAX_POOL)])
        others = self.distractors(
            kind=seed.kind,
            count=max(0, size - len(siblings)),
            reference=filter_text or reference,
            blocked_concepts={seed.concept},
            taken=[seed, *siblings],
            prefer_domain=prefer_domain,
        )
        pool = siblings + others
        self.rng.shuffle(pool)
        return Draft(reference=reference, kind=seed.kind, pool=pool, expected=None, tags=set(tags) | {"no_match"})


# --- Typos ------------------------------------------------------------------

_KEY_NEIGHBOURS = {
    "a": "qsz", "b": "vn", "c": "xv", "d": "sf", "e": "wr", "f": "dg", "g": "fh", "h": "gj", "i": "uo",
    "j": "hk", "k": "jl", "l": "k", "m": "n", "n": "bm", "o": "ip", "p": "o", "q": "w", "r": "et", "s": "ad",
    "t": "ry", "u": "yi", "v": "cb", "w": "qe", "x": "zc", "y": "tu", "z": "x",
}


def _misspell(rng: random.Random, word: str) -> str:
    """One slip of the fingers inside a word; the first and last letters stay."""
    for _ in range(20):
        i = rng.randrange(1, len(word) - 1)
        slip = rng.choice(("swap", "drop", "double", "neighbour"))
        if slip == "swap" and i + 1 < len(word) - 1 and word[i] != word[i + 1]:
            result = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif slip == "drop":
            result = word[:i] + word[i + 1:]
        elif slip == "double":
            result = word[:i] + word[i] + word[i:]
        elif slip == "neighbour" and word[i].lower() in _KEY_NEIGHBOURS:
            result = word[:i] + rng.choice(_KEY_NEIGHBOURS[word[i].lower()]) + word[i + 1:]
        else:
            continue
        if result.lower() != word.lower():
            return result
    raise RuntimeError(f"could not misspell {word!r}")


def with_typos(rng: random.Random, text: str) -> str | None:
    """The text with one typo (two in longer texts), or None when no word is long enough."""
    spans = [m.span() for m in re.finditer(r"[A-Za-z]{5,}", text)]
    if not spans:
        return None
    count = 2 if len(spans) >= 3 and rng.random() < 0.3 else 1
    chosen = sorted(rng.sample(spans, count), reverse=True)
    for start, end in chosen:
        text = text[:start] + _misspell(rng, text[start:end]) + text[end:]
    return text


# --- Recipes ------------------------------------------------------------------


def _refs(tag: str, *, foreign: bool | None = None) -> list[tuple[Seed, Ref]]:
    return [
        (seed, ref)
        for seed in SEEDS
        for ref in seed.refs
        if tag in ref.tags and (foreign is None or (ref.foreign or seed.foreign_title) == foreign)
    ]


def _extra_tags(seed: Seed, ref: Ref, *, matching: bool) -> set[str]:
    tags = set()
    if ref.foreign or (matching and seed.foreign_title):
        tags.add("multilingual")
    if seed.numbers and matching:
        tags.add("numbers_in_text")
    if not matching and re.search(r"\d", ref.text):
        tags.add("numbers_in_text")
    return tags


def build_drafts(rng: random.Random) -> list[Draft]:
    builder = PoolBuilder(rng)
    drafts: list[Draft] = []

    def take(pairs: list[tuple[Seed, Ref]], count: int) -> list[tuple[Seed, Ref]]:
        return rng.sample(pairs, min(count, len(pairs)))

    # Matching cases: each kind of reference, with the item somewhere in the pool.
    english_plain = [(s, r) for s, r in _refs("paraphrase", foreign=False) if not s.numbers]
    for seed, ref in take(english_plain, 62):
        drafts.append(builder.matching_case(seed, ref, tags={"paraphrase"}))
    partial_plain = [(s, r) for s, r in _refs("partial", foreign=False) if not s.numbers]
    for seed, ref in take(partial_plain, 45):
        drafts.append(builder.matching_case(seed, ref, tags={"partial"}))
    for seed, ref in _refs("abbreviation"):
        if "near_duplicate" in ref.tags:
            continue  # used with its siblings below
        drafts.append(builder.matching_case(seed, ref, tags={"abbreviation"} | _extra_tags(seed, ref, matching=True)))
    for seed, ref in take(_refs("paraphrase", foreign=True) + _refs("partial", foreign=True), 42):
        drafts.append(builder.matching_case(seed, ref, tags=set(ref.tags) | _extra_tags(seed, ref, matching=True)))
    numbered = [(s, r) for s, r in _refs("paraphrase") + _refs("partial") if s.numbers]
    for seed, ref in take(numbered, 30):
        drafts.append(builder.matching_case(seed, ref, tags=set(ref.tags) | _extra_tags(seed, ref, matching=True)))
    for seed, ref in take(_refs("near_duplicate"), 56):
        drafts.append(builder.matching_case(seed, ref, tags=set(ref.tags) | _extra_tags(seed, ref, matching=True)))

    # Typos: of the title itself, or of a partial or paraphrased reference.
    typo_sources = [
        (seed, Ref(seed.title.lower(), ()))
        for seed in SEEDS
        if not seed.foreign_title and not seed.family
    ] + [(s, r) for s, r in _refs("partial", foreign=False) + _refs("paraphrase", foreign=False) if not s.family]
    typo_count = 0
    for seed, ref in rng.sample(typo_sources, len(typo_sources)):
        if typo_count == 40:
            break
        typed = with_typos(rng, ref.text)
        if typed is None:
            continue
        typo_ref = Ref(typed, ("typo", *ref.tags))
        drafts.append(
            builder.matching_case(
                seed, typo_ref, tags={"typo", *ref.tags} | _extra_tags(seed, ref, matching=True), typo_of=ref.text
            )
        )
        typo_count += 1

    # No match: the item the reference was written for is not in the pool.
    plain = [(s, r) for s, r in _refs("paraphrase", foreign=False) + _refs("partial", foreign=False)
             + _refs("abbreviation") if not s.family]
    plain_picks = take(plain, 56)
    for index, (seed, ref) in enumerate(plain_picks):
        tags = {"abbreviation"} & set(ref.tags) | _extra_tags(seed, ref, matching=False)
        # The last 22 are hard: half the pool comes from the reference's own
        # domain (a dentist reference among other health tasks).
        prefer = seed.domain if index >= 34 else ""
        drafts.append(builder.no_match_case(seed, ref.text, tags=tags, prefer_domain=prefer))
    # The sibling is there, the one the reference names is not ("design sync"
    # when only the platform sync is in the pool).
    for seed, ref in take(_refs("near_duplicate"), 28):
        tags = {"near_duplicate"} | ({"abbreviation"} & set(ref.tags)) | _extra_tags(seed, ref, matching=False)
        drafts.append(builder.no_match_case(seed, ref.text, tags=tags, with_siblings=True))
    foreign = [(s, r) for s, r in _refs("paraphrase", foreign=True) + _refs("partial", foreign=True) if r.foreign]
    for seed, ref in take(foreign, 12):
        drafts.append(builder.no_match_case(seed, ref.text, tags=_extra_tags(seed, ref, matching=False)))
    numbered_refs = [(s, r) for s, r in numbered if re.search(r"\d", r.text)]
    for seed, ref in take(numbered_refs, 6):
        drafts.append(builder.no_match_case(seed, ref.text, tags=_extra_tags(seed, ref, matching=False)))
    typo_count = 0
    for seed, ref in rng.sample(plain, len(plain)):
        if typo_count == 6:
            break
        typed = with_typos(rng, ref.text)
        if typed is None:
            continue
        tags = {"typo"} | ({"abbreviation"} & set(ref.tags)) | _extra_tags(seed, ref, matching=False)
        drafts.append(builder.no_match_case(seed, typed, tags=tags, filter_text=ref.text))
        typo_count += 1
    return drafts


# --- Rendering ------------------------------------------------------------------

_START = date(2025, 3, 3)
_SUMMER_TIME = (date(2025, 3, 30), date(2025, 10, 26))  # Europe/Berlin, 2025


def _offset(day: date) -> str:
    return "+02:00" if _SUMMER_TIME[0] <= day < _SUMMER_TIME[1] else "+01:00"


def _when(rng: random.Random, seed: Seed) -> str | None:
    if seed.when:
        return seed.when
    day = _START + timedelta(days=rng.randrange(0, 120))
    if seed.kind == "event":
        hour = rng.choice((8, 9, 9, 10, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20))
        minute = rng.choice((0, 0, 0, 15, 30, 30, 45))
        return f"{day.isoformat()}T{hour:02d}:{minute:02d}:00{_offset(day)}"
    roll = rng.random()
    if roll < 0.1:
        return None  # tasks without a due date are common
    if roll < 0.55:
        return day.isoformat()
    hour = rng.choice((9, 12, 17, 18))
    return f"{day.isoformat()}T{hour:02d}:00:00{_offset(day)}"


def _status(rng: random.Random, kind: str, *, is_answer: bool) -> str:
    roll = rng.random()
    if kind == "task":
        # Completed tasks appear only as distractors, so no label depends on
        # whether a finished task still counts.
        if roll < 0.05 and not is_answer:
            return "COMPLETED"
        return "IN-PROCESS" if roll < 0.25 else "NEEDS-ACTION"
    if roll < 0.03 and not is_answer:
        return "CANCELLED"
    return "TENTATIVE" if roll < 0.15 else "CONFIRMED"


def _candidate(rng: random.Random, seed: Seed, *, is_answer: bool) -> dict[str, object]:
    when_key = "due" if seed.kind == "task" else "start"
    return {
        "title": seed.title,
        "collection": seed.collection,
        "status": _status(rng, seed.kind, is_answer=is_answer),
        when_key: _when(rng, seed),
    }


def _check(draft: Draft) -> None:
    """Guards on the construction: a broken rule here is a bug in this file."""
    titles = [_normal(seed.title) for seed in draft.pool]
    if not MIN_POOL <= len(draft.pool) <= MAX_POOL:
        raise AssertionError(f"pool of {len(draft.pool)} for {draft.reference!r}")
    if len(set(titles)) != len(titles):
        raise AssertionError(f"repeated title in the pool for {draft.reference!r}")
    if _normal(draft.reference) in titles:
        raise AssertionError(f"{draft.reference!r} is an exact title match; the model is never asked")


def build_cases(seed: int = SEED) -> list[dict[str, object]]:
    rng = random.Random(seed)
    drafts = build_drafts(rng)
    rng.shuffle(drafts)
    cases = []
    for number, draft in enumerate(drafts, start=1):
        _check(draft)
        cases.append(
            {
                "id": f"c{number:04d}",
                "reference": draft.reference,
                "kind": draft.kind,
                "candidates": [
                    _candidate(rng, item, is_answer=position == draft.expected)
                    for position, item in enumerate(draft.pool, start=1)
                ],
                "expected": draft.expected if draft.expected is not None else "no_match",
                "tags": [tag for tag in TAG_ORDER if tag in draft.tags],
            }
        )
    return cases


def render(cases: Sequence[dict[str, object]]) -> str:
    return "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases)


def main(argv: Sequence[str]) -> int:
    text = render(build_cases())
    if "--check" in argv:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.name} is out of date; run this script to regenerate it", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines())} cases to {OUTPUT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
