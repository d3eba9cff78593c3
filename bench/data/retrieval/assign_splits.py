"""Assign a references file's splits: seeded, stratified by category, 50% test / 40% calibrate / 10% train.

    .venv/bin/python bench/data/retrieval/assign_splits.py bench/data/retrieval/references_a2.jsonl          # rewrite
    .venv/bin/python bench/data/retrieval/assign_splits.py --check bench/data/retrieval/references_a2.jsonl  # verify

Within each category the references are taken in file order in blocks of ten;
each block gets the pattern five test, four calibrate, one train in an order
shuffled by a seed made of SEED, the category and the block's number. So every
full block holds exactly the proportions, and appending references later only
fills the last block: no reference already written changes split (the test
split stays blind).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

SEED = "references-a2"
PATTERN = ("test",) * 5 + ("calibrate",) * 4 + ("train",)


def split_for(category: str, position: int, seed: str = SEED) -> str:
    """The split of the `position`-th reference (from 0, in file order) of `category`."""
    block, offset = divmod(position, len(PATTERN))
    digest = hashlib.sha256(f"{seed}/{category}/{block}".encode()).hexdigest()
    order = list(PATTERN)
    random.Random(int(digest, 16)).shuffle(order)
    return order[offset]


def assign(refs: list[dict], seed: str = SEED) -> list[str]:
    seen: dict[str, int] = defaultdict(int)
    splits = []
    for ref in refs:
        category = ref["category"]
        splits.append(split_for(category, seen[category], seed))
        seen[category] += 1
    return splits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--check", action="store_true", help="only report references whose split differs")
    args = parser.parse_args(argv)
    lines = [line for line in args.path.read_text(encoding="utf-8").splitlines() if line.strip()]
    refs = [json.loads(line) for line in lines]
    splits = assign(refs)
    if args.check:
        wrong = [r["id"] for r, s in zip(refs, splits) if r.get("split") != s]
        for rid in wrong:
            print(f"{rid}: split differs from the rule")
        print(f"{len(refs)} references, {len(wrong)} with another split than the rule")
        return 1 if wrong else 0
    out = []
    for ref, split in zip(refs, splits):
        ref["split"] = split
        out.append(json.dumps(ref, ensure_ascii=False))
    args.path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
