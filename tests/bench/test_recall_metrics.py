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


def test_absent_breakdown__counts_empty_clarifications_and_offered_candidates_per_type():
    from bench.recall import absent_breakdown

    def absent(absent_type: str, status: str, candidates: int, wrong: bool = False) -> Result:
        return Result(ref_id=f"a-{absent_type}-{candidates}-{status}", category="absent", split="test", rank=None,
                      wrong=wrong, occurrence_ok=None, ms=1.0, status=status, absent_type=absent_type,
                      candidates=candidates)

    results = [absent("similar", "needs_clarification", 0), absent("similar", "needs_clarification", 4),
               absent("similar", "ok", 0, wrong=True), absent("unrelated", "needs_clarification", 0),
               absent("completed", "needs_clarification", 7)]
    other_split = Result(ref_id="x", category="absent", split="train", rank=None, wrong=False, occurrence_ok=None,
                         ms=1.0, status="needs_clarification", absent_type="similar", candidates=0)
    figures = absent_breakdown(results + [other_split], "test")
    assert list(figures) == ["unrelated", "similar", "completed"]
    assert figures["similar"] == {"n": 3, "no_candidates": 1, "wrong": 1, "candidates_median": 0,
                                  "candidates_max": 4}
    assert figures["unrelated"]["no_candidates"] == 1
    assert figures["completed"] == {"n": 1, "no_candidates": 0, "wrong": 0, "candidates_median": 7,
                                    "candidates_max": 7}
