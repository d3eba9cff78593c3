"""Word forms in ranking: weights, stems, compounds, initialisms, prefixes, typos (no server)."""
from __future__ import annotations

import pytest

from resolver.domain.items import Kind, make_item
from resolver.domain.matching import build_pool, score_candidates
from resolver.domain.times import when_from_iso
from resolver.domain.wordforms import languages, word_forms


def task(uid: str, title: str, *, due: str | None = None, collection: str = "work"):
    return make_item(collection_path=f"/u/{collection}/", uid=uid, title=title, etag='"1"', kind=Kind.TASK,
                     due=when_from_iso(due))


ITEMS = [
    task("toner", "Order toner for the printer"),
    task("lunch", "Order team lunch for the offsite"),
    task("chairs", "Order chairs for the office"),
    task("soy", "Buy soy milk"),
    task("oat", "Buy oat milk"),
    task("checkout", "Check out library books"),
    task("agm", "Annual general meeting"),
    task("agenda", "Annual report agenda"),
    task("invoice", "Send invoice to Acme"),
    task("boxes", "Pack boxes"),
    task("renewal", "Passport renewal"),
    task("intro", "Introduction call with Ana"),
    task("followup", "Follow-up with Bob"),
    task("admin", "Administration paperwork"),
    task("portfolio", "Draft portfolio outline"),
    task("signup", "Signup sheet for the fair"),
]


def first(text: str, items=ITEMS) -> str:
    return score_candidates(text, items)[0].item.uid


def test_rank__a_rare_word_outweighs_a_frequent_one():
    """"order" is in three titles, "toner" in one: the title with "toner" wins."""
    ranked = [c.item.uid for c in score_candidates("order printer toner", ITEMS)]
    assert ranked[0] == "toner"
    assert set(ranked[1:]) == {"lunch", "chairs"}


def test_rank__a_short_title_fully_covered_beats_a_long_one_partly_covered():
    items = [task("long", "Call the bank about the mortgage and the insurance"), task("short", "Call the bank")]
    assert first("call bank", items) == "short"


def test_word_form__stems():
    assert first("invoices") == "invoice"
    assert first("box") == "boxes"
    assert first("renewing passport") == "renewal"


def test_word_form__compound_written_together_in_the_reference():
    assert first("soymilk") == "soy"
    assert first("checkout books") == "checkout"
    assert first("followup bob") == "followup"


def test_word_form__compound_written_apart_in_the_reference():
    assert first("sign up sheet") == "signup"


def test_word_form__initialism():
    assert first("AGM") == "agm"
    assert "agenda" not in {c.item.uid for c in score_candidates("AGM", ITEMS)[:1]}


def test_word_form__prefix_of_three_or_more_letters():
    assert first("intro") == "intro"
    assert first("admin") == "admin"


def test_word_form__typo():
    assert first("protfolio outline") == "portfolio"


def test_word_form__quality_orders_exact_before_stem_before_prefix():
    items = [task("prefix", "Invoiceable hours"), task("stem", "Invoices for March"), task("exact", "Invoice Bob")]
    assert [c.item.uid for c in score_candidates("invoice", items)] == ["exact", "stem", "prefix"]


def test_narrowing__keeps_the_best_when_a_common_word_matches_many():
    """"Marta review" with 30 other reviews: Marta's stays among the 19."""
    items = [task(f"r{n}", f"Review draft {n}") for n in range(30)] + [task("marta", "Quarterly review with Marta")]
    pool = build_pool("Marta review", items, limit=19)
    assert pool.narrowed and pool.matched == 31
    assert pool.candidates[0].item.uid == "marta"


def test_ties__soonest_due_first_then_title_collection_id():
    items = [task("late", "Weekly report", due="2027-03-01"), task("soon", "Weekly report", due="2027-01-20"),
             task("undated", "Weekly report"), task("home", "Weekly report", due="2027-01-20", collection="home")]
    ranked = [c.item.uid for c in score_candidates("weekly report", items)]
    assert ranked[:2] == ["home", "soon"]  # same due date: collection decides
    assert ranked[2:] == ["late", "undated"]


def test_ties__order_does_not_depend_on_input_order():
    items = [task(f"t{n}", f"Weekly report {n % 3}") for n in range(12)]
    forward = [c.item.item_id for c in score_candidates("weekly report", items)]
    backward = [c.item.item_id for c in score_candidates("weekly report", list(reversed(items)))]
    assert forward == backward


def test_language__other_snowball_languages_stem_and_drop_their_stopwords():
    items = [task("de", "Rechnungen an die Firma schicken"), task("other", "Die Katze füttern")]
    ranked = score_candidates("die Rechnung", items, language="german")
    assert [c.item.uid for c in ranked] == ["de"]  # "die" alone never matches in German
    assert "german" in languages() and "die" in word_forms("german").stopwords


def test_language__unknown_language_is_refused():
    with pytest.raises(ValueError):
        word_forms("klingon")
