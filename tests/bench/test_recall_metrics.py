"""bench/recall.py's figures: ranks of lists, absent items, wrong resolutions."""
from __future__ import annotations

from bench.recall import Result, metrics, rank_of


def result(category: str, rank: int | None, wrong: bool | None = False) -> Result:
    return Result(ref_id=f"r-{category}-{rank}", category=category, split="train", rank=rank, wrong=wrong,
                  occurrence_ok=None, ms=1.0)


def test_rank_of__a_list_is_rank_1_when_all_of_it_comes_first_in_any_order():
    assert rank_of(["b", "a"], ["a", "b", "c"]) == 1
    assert rank_of(["a", "c"], ["a", "b", "c"]) == 2
    assert rank_of(["a", "z"], ["a", "b", "c"]) is None


def test_rank_of__an_absent_item_has_no_rank():
    assert rank_of([], ["a", "b"]) is None


def test_metrics__absent_counts_only_for_wrong():
    results = [result("partial", 1), result("partial", 7), result("absent", None, wrong=True)]
    figures = metrics([r for r in results if r.category != "absent"] + [results[2]])
    assert figures["n"] == 2
    assert figures["recall@1"] == 0.5 and figures["recall@19"] == 1.0
    assert figures["wrong"] == 1


def test_metrics__absent_alone_has_no_recall():
    figures = metrics([result("absent", None, wrong=False)])
    assert figures["recall@1"] is None and figures["wrong"] == 0
