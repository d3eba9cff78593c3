"""Writes the labelled retrieval set: items.jsonl, references.jsonl, meta.json.

    .venv/bin/python bench/data/retrieval/generate.py

Deterministic (seeded). The committed JSON Lines are the source of truth: this
script is how they were first made, kept so that a change to the hand-written
families below can be regenerated and reviewed as a diff. The tricky parts
(targets, their distractors and every reference) are written by hand here;
only the filler titles, which make the calendar the size of a real one and
repeat its frequent words, are combined from word lists.

The families of issue 21 (`realistic()`: date alone, clitics, diacritics,
new time forms, agent sentences, foreign titles, disambiguation, absent
items, more synonyms) come after the fillers, with their own split seed, so
the first set's items, ids and splits are unchanged. A date-alone reference
is labelled by hand as a range; its expected items are listed from the data.

Reference clock: Monday 2027-01-11 09:00 in Europe/Berlin. Every date below
is relative to it: "tomorrow" is Tuesday 2027-01-12, "Thursday" 2027-01-14,
"next week" Monday 18 to Sunday 24 January, "next month" February.
"""
from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent.parent))

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=TZ)
SEED = 10
HELDOUT_SHARE = 0.3

ITEMS: list[dict] = []
REFS: list[dict] = []  # (category, text) pairs attached to a target, without ids yet


def _local(value: str) -> str:
    """`2027-01-12 18:30` (Berlin wall time) -> ISO 8601 with its offset."""
    return datetime.strptime(value, "%Y-%m-%d %H:%M").replace(tzinfo=TZ).isoformat()


def task(collection: str, title: str, uid: str, *, due: str | None = None, refs=()) -> str:
    item = {"uid": uid, "collection": collection, "kind": "task", "title": title}
    if due:
        item["due"] = due if len(due) == 10 else _local(due)
    ITEMS.append(item)
    for ref in refs:
        _ref(ref, "task", [uid])
    return uid


def event(collection: str, title: str, uid: str, start: str, *, minutes: int = 60, rrule: str | None = None,
          exdate: tuple[str, ...] = (), overrides: tuple[tuple[str, str, int], ...] = (), refs=()) -> str:
    begin = datetime.strptime(start, "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
    item = {"uid": uid, "collection": collection, "kind": "event", "title": title,
            "start": begin.isoformat(), "end": (begin + timedelta(minutes=minutes)).isoformat()}
    if rrule:
        item["rrule"] = rrule
    if exdate:
        item["exdate"] = [_local(d) for d in exdate]
    if overrides:
        item["overrides"] = [
            {"recurrence_id": _local(rid), "start": _local(new),
             "end": (datetime.strptime(new, "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
                     + timedelta(minutes=length)).isoformat()}
            for rid, new, length in overrides
        ]
    ITEMS.append(item)
    for ref in refs:
        _ref(ref, "event", [uid])
    return uid


def _ref(ref: tuple, kind: str, expected: list[str]) -> None:
    category, text, *rest = ref
    entry = {"text": text, "kind": kind, "category": category, "expected": expected}
    for extra in rest:
        if isinstance(extra, str) and extra[:4] == "2027":
            entry["expected_occurrence_start"] = _local(extra)
        elif isinstance(extra, str):
            entry["note"] = extra
    REFS.append(entry)


def dup(kind: str, title: str, uids_by_collection: list[tuple[str, str]], refs: list[str],
        **when: str) -> None:
    """Several items sharing one title: the expected outcome is a clarification listing them all."""
    offset = 0
    for collection, uid in uids_by_collection:
        if kind == "task":
            task(collection, title, uid, due=when.get("due"))
        else:
            day = datetime.strptime(when["start"], "%Y-%m-%d %H:%M") + timedelta(days=7 * offset)
            event(collection, title, uid, day.strftime("%Y-%m-%d %H:%M"))
        offset += 1
    for text in refs:
        _ref(("duplicates", text), kind, [uid for _c, uid in uids_by_collection])


P, R, T, C, I, W, X, E, S, D, TX = ("partial", "reordered", "typo", "compound", "initialism", "word_form",
                                     "prefix", "exact", "synonym_paraphrase", "duplicates", "time_expression")


def hand_tasks() -> None:
    # Frequent verbs ("order", "buy", "finish", "review") against one rare word each.
    task("work", "Order toner for the printer", "t-toner", due="2027-01-14",
         refs=[(E, "Order toner for the printer"), (P, "order toner"), (R, "printer toner order"), (T, "order tonner"), (P, "toner")])
    task("work", "Order team lunch for the offsite", "t-offsite-lunch", due="2027-01-20",
         refs=[(P, "offsite lunch"), (X, "order team lunch offs")])
    task("work", "Order printer paper", "t-printer-paper", refs=[(P, "printer paper")])
    task("work", "Order new business cards", "t-business-cards",
         refs=[(P, "business cards"), (T, "order new busines cards")])
    task("personal", "Buy eggs and flour", "t-eggs", refs=[(P, "eggs"), (R, "flour and eggs")])
    task("personal", "Buy soy milk", "t-soymilk", refs=[(C, "buy soymilk"), (C, "soymilk")])
    task("home", "Buy a new lightbulb for the hallway", "t-lightbulb",
         refs=[(C, "light bulb hallway"), (P, "hallway lightbulb")])
    task("work", "Finish portfolio outline", "t-portfolio-outline", due="2027-01-15",
         refs=[(P, "finish portfolio"), (R, "outline portfolio"), (T, "finsh portfolio outline"),
               (E, "Finish portfolio outline"), (S, "complete the showcase plan")])
    task("work", "Review portfolio slides", "t-portfolio-slides", due="2027-01-18",
         refs=[(P, "portfolio slides"), (W, "review portfolio slide")])
    task("work", "Finish the onboarding guide", "t-onboarding",
         refs=[(P, "onboarding guide"), (X, "finish onboard"), (S, "wrap up the new-hire handbook")])
    task("work", "Finish the budget slides", "t-budget-slides", due="2027-01-13",
         refs=[(P, "budget slides"), (T, "budgte slides")])
    # A name plus a common word: 20+ titles contain "review".
    task("work", "Performance review with Marta", "t-marta-review", due="2027-01-22",
         refs=[(P, "Marta review"), (R, "Marta performance review"), (T, "perfomance review marta")])
    task("work", "Send Marta the hiring plan", "t-marta-hiring", refs=[(P, "hiring plan for Marta")])
    task("work", "Marta onboarding checklist", "t-marta-checklist", refs=[(W, "marta checklists")])
    task("work", "Review contract draft from legal", "t-contract-review",
         refs=[(P, "contract draft"), (R, "legal contract review"), (T, "reveiw contract draft")])
    task("work", "Review the pull request for billing", "t-pr-billing",
         refs=[(P, "billing pull request"), (I, "review billing PR")])
    task("work", "Review Jonas's pull request", "t-pr-jonas", refs=[(P, "Jonas pull request")])
    task("work", "Review travel policy", "t-travel-policy", refs=[(P, "travel policy")])
    task("work", "Review Q1 hiring budget", "t-q1-hiring", refs=[(P, "Q1 hiring budget")])
    task("work", "Review security audit findings", "t-audit",
         refs=[(P, "security audit findings"), (T, "secruity audit"), (W, "review security audits")])
    task("work", "Review the vendor shortlist", "t-vendor",
         refs=[(P, "vendor shortlist"), (C, "vendor short list")])
    task("work", "Review expense claims", "t-expense-claims", refs=[(W, "expense claim review")])
    task("work", "Review Priya's design mockups", "t-priya-mockups",
         refs=[(P, "Priya mockups"), (C, "review Priya's mock-ups")])
    task("work", "Peer review for Lena", "t-lena-review", refs=[(P, "Lena peer review")])
    task("work", "Review the roadmap with Tom", "t-roadmap-tom", refs=[(P, "roadmap Tom")])
    task("work", "Review customer feedback survey", "t-survey",
         refs=[(P, "feedback survey"), (T, "custmer feedback survey")])
    task("work", "Review and merge the docs update", "t-docs-merge", refs=[(P, "merge docs update")])
    task("work", "Review API rate limits", "t-api-limits",
         refs=[(P, "API rate limits"), (W, "review API rate limit")])
    task("work", "Annual general meeting agenda", "t-agm-agenda", due="2027-02-01",
         refs=[(I, "AGM agenda"), (P, "general meeting agenda")])
    task("work", "Write the incident report", "t-incident", due="2027-01-19",
         refs=[(P, "incident report"), (T, "incidnet report")])
    task("work", "Submit expense report", "t-expense-report", due="2027-01-15",
         refs=[(TX, "report due Friday"), (P, "submit expense"), (E, "Submit expense report"), (T, "sumbit expense report")])
    task("work", "Quarterly report draft", "t-quarterly-draft", due="2027-01-29",
         refs=[(P, "quarterly report"), (X, "quart report draft")])
    # Compounds both ways.
    task("work", "Fix the checkout page bug", "t-checkout",
         refs=[(C, "check out page bug"), (P, "checkout bug")])
    task("home", "Check out the new library", "t-library", refs=[(C, "checkout library")])
    task("work", "Send follow-up to Acme", "t-acme-followup",
         refs=[(C, "followup Acme"), (C, "follow up with acme")])
    task("work", "Followup email to the recruiter", "t-recruiter",
         refs=[(C, "follow-up email recruiter"), (P, "recruiter email")])
    task("work", "Set up the new laptop", "t-laptop",
         refs=[(C, "setup new laptop"), (P, "new laptop")])
    task("work", "Log in issue on the staging server", "t-staging-login",
         refs=[(C, "staging login issue"), (P, "staging server")])
    task("home", "Clean the dishwasher filter", "t-dishwasher",
         refs=[(C, "dish washer filter"), (X, "dishw filter")])
    task("home", "Fix the bookshelf in the kids room", "t-bookshelf",
         refs=[(C, "book shelf kids room"), (P, "bookshelf")])
    task("personal", "Pick up dry cleaning", "t-drycleaning",
         refs=[(C, "pickup drycleaning"), (P, "dry cleaning")])
    task("home", "Replace the door mat", "t-doormat", refs=[(C, "doormat"), (R, "mat for the door")])
    task("work", "Back up the project database", "t-backup", refs=[(C, "backup project database")])
    task("personal", "Book a weekend getaway", "t-getaway",
         refs=[(C, "weekend get-away"), (P, "getaway")])
    task("work", "Update the e-mail signature", "t-signature",
         refs=[(C, "email signature"), (P, "signature")])
    task("home", "Mow the backyard", "t-backyard", refs=[(C, "back yard"), (R, "backyard mow"), (E, "Mow the backyard")])
    # Initialisms.
    task("work", "Prepare the key performance indicators deck", "t-kpi",
         refs=[(I, "KPI deck"), (P, "performance indicators deck")])
    task("work", "Draft the request for proposal", "t-rfp", refs=[(I, "draft RFP"), (I, "RFP")])
    task("work", "Sign the non disclosure agreement", "t-nda",
         refs=[(I, "sign NDA"), (C, "non-disclosure agreement")])
    task("work", "Update the frequently asked questions page", "t-faq",
         refs=[(I, "FAQ page"), (P, "questions page")])
    task("work", "Book the end of year party venue", "t-eoy", refs=[(I, "EOY party venue")])
    task("work", "Close the service level agreement with Brightline", "t-sla",
         refs=[(I, "Brightline SLA"), (I, "SLA")])
    task("work", "Submit the profit and loss statement", "t-pnl",
         refs=[(P, "profit and loss"), (W, "submit loss statements")])
    task("personal", "Renew the annual travel insurance", "t-travel-insurance",
         refs=[(W, "renewing travel insurance"), (P, "travel insurance")])
    # Word forms.
    task("work", "Send invoice to Acme", "t-invoice-acme", due="2027-01-20",
         refs=[(W, "send invoices acme"), (P, "acme invoice")])
    task("home", "Pay the electricity invoice", "t-invoice-power", due="2027-01-12",
         refs=[(TX, "the invoice due tomorrow"), (P, "electricity invoice"), (W, "paying electricity invoices")])
    task("work", "Chase the overdue invoice from Brightline", "t-invoice-overdue",
         refs=[(W, "chasing overdue invoices"), (P, "overdue invoice")])
    task("home", "Pay invoice for the roofer", "t-invoice-roofer", due="2027-01-25",
         refs=[(W, "roofers invoice"), (TX, "roofer invoice due January 25")])
    task("home", "Pack the moving boxes", "t-boxes",
         refs=[(E, "pack the moving boxes"), (W, "pack moving box"), (W, "packing the boxes"), (X, "moving box")])
    task("home", "Label storage box for the attic", "t-attic-box", refs=[(W, "label storage boxes")])
    task("work", "Passport renewal form", "t-passport-form",
         refs=[(W, "renewing passport form"), (P, "passport form")])
    task("personal", "Renew passport", "t-passport", due="2027-01-29",
         refs=[(TX, "renew passport this month"), (W, "passport renewal"), (E, "renew passport")])
    task("personal", "Renew car insurance", "t-car-insurance", due="2027-03-01",
         refs=[(W, "car insurance renewal"), (P, "car insurance")])
    task("work", "Organise the team offsite", "t-offsite", refs=[(W, "organising team offsite")])
    task("work", "Schedule interviews for the designer role", "t-interviews",
         refs=[(W, "schedule interview designer"), (P, "designer role")])
    task("home", "Water the tomatoes", "t-tomatoes", refs=[(W, "watering tomato"), (P, "tomatoes")])
    task("personal", "Return the library books", "t-library-books",
         refs=[(W, "returning library book"), (P, "library books")])
    task("home", "Wash the curtains", "t-curtains", refs=[(W, "washing curtain")])
    task("personal", "Sort the family photos", "t-photos", refs=[(W, "sorting family photo")])
    task("home", "Assemble the wardrobe", "t-wardrobe",
         refs=[(W, "assembling wardrobes"), (W, "wardrobe assembly")])
    task("work", "Migrate the analytics dashboards", "t-dashboards",
         refs=[(W, "migration of analytics dashboard"), (X, "migr analytics")])
    task("work", "Translate the product descriptions", "t-translate",
         refs=[(W, "translation of product descriptions"), (X, "translat product")])
    task("home", "Descale the kettle", "t-kettle", refs=[(W, "descaling kettle"), (P, "kettle")])
    # Prefixes.
    task("work", "Introduction email for the new intern", "t-intro-email",
         refs=[(X, "intro email intern"), (X, "intro intern")])
    task("work", "Administration fees for the conference", "t-admin-fees",
         refs=[(X, "admin fees"), (X, "admin conference")])
    task("work", "Reconcile accounts for December", "t-reconcile",
         refs=[(X, "reconc december"), (X, "reconcile acc")])
    task("work", "Presentation for the board", "t-board-pres",
         refs=[(X, "pres board"), (X, "presentation boa")])
    task("home", "Repair the garage door", "t-garage", refs=[(X, "garage repa"), (X, "gara door")])
    task("personal", "Appointment reminder for the optician", "t-optician",
         refs=[(X, "opti appointment"), (X, "optic reminder")])
    task("work", "Documentation for the deployment pipeline", "t-deploy-docs",
         refs=[(X, "docs deployment pipeline"), (X, "deploy documentation")])
    task("work", "Configuration of the staging environment", "t-staging-config",
         refs=[(X, "config staging env"), (X, "staging config")])
    task("home", "Vacuum the stairs", "t-stairs", refs=[(X, "vac stairs")])
    # Typos and reordering over common verbs.
    task("personal", "Call the plumber", "t-plumber", due="2027-01-11",
         refs=[(TX, "call the plumber today"), (T, "cal the plumbr"), (E, "call the plumber")])
    task("home", "Call the electrician", "t-electrician", due="2027-01-13", refs=[(T, "call the electrican"), (TX, "call the electrician on Wednesday")])
    task("personal", "Buy groceries", "t-groceries", due="2027-01-12",
         refs=[(TX, "groceries tomorrow"), (T, "buy grocceries")])
    task("personal", "Buy groceries for Omar's birthday party", "t-party-groceries", due="2027-01-22",
         refs=[(P, "groceries Omar party"), (R, "Omar birthday party groceries")])
    task("personal", "Pay property tax", "t-property-tax", due="2027-02-15",
         refs=[(TX, "taxes due next month"), (R, "tax on property"), (T, "pay proprety tax")])
    task("personal", "Gather tax documents for the accountant", "t-tax-docs",
         refs=[(P, "tax documents accountant"), (S, "collect paperwork for the bookkeeper")])
    task("home", "Defrost the freezer", "t-freezer", refs=[(T, "defrost the freezr"), (E, "Defrost the freezer")])
    task("home", "Bleed the radiators", "t-radiators",
         refs=[(T, "bleed the radiaters"), (W, "bleeding radiator")])
    task("work", "Prepare slides for the client pitch", "t-pitch",
         refs=[(R, "client pitch slides"), (T, "prepare slides for the cliant pitch"), (S, "deck for the customer proposal meeting")])
    task("work", "Draft newsletter for February", "t-newsletter",
         refs=[(R, "February newsletter draft"), (T, "newslettr february")])
    task("work", "Book flights for the Berlin conference", "t-conf-flights",
         refs=[(R, "Berlin conference flights"), (T, "book flihgts berlin")])
    task("personal", "Book a table at Luigi's", "t-luigi",
         refs=[(T, "book a table at luigis"), (S, "reserve dinner at the Italian place")])
    task("personal", "Send birthday card to grandma", "t-grandma-card",
         refs=[(R, "grandma birthday card"), (T, "birthdya card grandma"), (S, "mail granny her greeting")])
    task("home", "Unclog the bathroom sink", "t-sink",
         refs=[(P, "bathroom sink"), (T, "unclog the bathrom sink"), (S, "fix the blocked basin")])
    task("home", "Change the smoke alarm batteries", "t-smoke-alarm",
         refs=[(R, "smoke alarm batteries change"), (W, "smoke alarm battery")])
    task("personal", "Cancel the gym membership", "t-gym",
         refs=[(R, "gym membership cancel"), (T, "cancel gym membershp"), (S, "quit the fitness club")])
    task("work", "Renew the SSL certificate", "t-ssl",
         refs=[(R, "SSL certificate renew"), (W, "ssl certificate renewal"), (E, "Renew the SSL certificate")])
    task("work", "Clean up the shared drive", "t-shared-drive",
         refs=[(R, "shared drive clean up"), (C, "cleanup shared drive"), (S, "tidy the team file storage")])
    task("home", "Sweep the chimney", "t-chimney", refs=[(R, "chimney sweep"), (E, "sweep the chimney")])
    task("personal", "Practise Spanish vocabulary", "t-spanish",
         refs=[(R, "Spanish vocabulary practise"), (T, "practise spansh vocabulary"), (S, "learn new words in the language class")])
    task("work", "Write the quarterly OKRs", "t-okrs", refs=[(P, "quarterly OKRs"), (W, "write quarterly OKR")])
    task("work", "Reply to Omar about the budget", "t-omar-budget",
         refs=[(P, "reply Omar budget"), (R, "budget reply to Omar"), (S, "respond regarding the finances")])
    task("home", "Take the recycling out", "t-recycling",
         refs=[(R, "recycling out take"), (E, "take the recycling out")])
    task("home", "Order a birthday cake for Mia", "t-cake",
         refs=[(P, "birthday cake Mia"), (T, "birtday cake for mia"), (S, "pick up a gateau for the little one")])
    task("personal", "Write thank-you notes", "t-thankyou",
         refs=[(C, "thank you notes"), (C, "thankyou notes")])
    task("home", "Paint the fence", "t-fence", refs=[(E, "Paint the fence"), (T, "paint the fnce")])
    task("personal", "Schedule the car service", "t-car-service",
         refs=[(R, "car service schedule"), (S, "book a garage slot for the vehicle")])
    task("work", "Prepare the team retrospective notes", "t-retro-notes",
         refs=[(X, "retro notes"), (P, "retrospective notes")])
    task("work", "Collect receipts for reimbursement", "t-receipts",
         refs=[(W, "collect receipt reimbursements"), (S, "gather proof of purchase to get paid back")])
    # Precision traps that must not be read as dates or times.
    task("personal", "Buy 2 bottles of wine for the dinner", "t-wine",
         refs=[(TX, "2 bottles of wine", "precision trap: a quantity, not a date"), (P, "wine for dinner")])
    task("work", "Close the Q3 audit findings", "t-q3-audit",
         refs=[(TX, "Q3 audit", "precision trap: a quarter's name, not a date")])
    task("personal", "Buy May's birthday present", "t-may-present",
         refs=[(TX, "May birthday present", "precision trap: May is a person"), (P, "present for May")])
    task("home", "Update the sat nav maps", "t-satnav",
         refs=[(TX, "sat nav maps", "precision trap: Sat is not Saturday"), (C, "satnav update")])
    task("personal", "Sign up for the 10k run", "t-10k-signup",
         refs=[(TX, "10k run sign up", "precision trap: a distance, not a time")])
    task("personal", "Plan the anniversary trip", "t-anniversary", refs=[(P, "anniversary trip")])
    task("personal", "Prepare SAT practice test for Jonas", "t-sat-test",
         refs=[(TX, "SAT practice test", "precision trap: the exam, not Saturday")])


def hand_events() -> None:
    # Recurring series named by time. DTSTARTs in the past: the series is running.
    event("personal", "Yoga class", "e-yoga", "2026-09-01 18:30", minutes=75, rrule="FREQ=WEEKLY;BYDAY=TU",
          overrides=(("2027-01-19 18:30", "2027-01-20 19:00", 75),), exdate=("2027-02-16 18:30",),
          refs=[(TX, "yoga tomorrow", "2027-01-12 18:30"), (TX, "yoga on January 20", "2027-01-20 19:00"),
                (TX, "yoga next week", "2027-01-20 19:00"), (TX, "yoga on Feb 23", "2027-02-23 18:30"), (E, "Yoga class"), (W, "yoga classes"),
                (S, "my stretching session")])
    event("personal", "Hot yoga workshop", "e-hot-yoga", "2027-02-06 10:00", minutes=180,
          refs=[(P, "hot yoga"), (T, "hot yoga workshp")])
    event("work", "Team standup", "e-standup", "2026-06-01 09:30", minutes=15,
          rrule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
          refs=[(TX, "standup tomorrow", "2027-01-12 09:30"), (TX, "standup on Friday", "2027-01-15 09:30"),
                (TX, "today's standup", "2027-01-11 09:30"), (TX, "standup in 2 days", "2027-01-13 09:30"), (C, "team stand-up"),
                (E, "team standup")])
    event("work", "Platform standup with the infra team", "e-infra-standup", "2027-01-13 11:00", minutes=15,
          rrule="FREQ=WEEKLY;BYDAY=WE", refs=[(P, "infra standup"), (R, "infra team platform standup")])
    event("work", "Budget review", "e-budget-review", "2026-10-01 14:00", rrule="FREQ=WEEKLY;BYDAY=TH",
          refs=[(TX, "Thursday's budget review", "2027-01-14 14:00"),
                (TX, "budget review on Jan 28", "2027-01-28 14:00"), (T, "budget reveiw"), (E, "budget review")])
    event("work", "Marketing budget planning", "e-mkt-budget", "2027-01-27 10:00",
          refs=[(P, "marketing budget"), (W, "marketing budgets plan")])
    event("personal", "Vet appointment", "e-vet", "2027-03-03 10:00", minutes=30,
          refs=[(TX, "the vet appointment on March 3", "2027-03-03 10:00"), (E, "Vet appointment")])
    event("personal", "Vet appointment for Luna's vaccines", "e-vet-luna", "2027-02-10 16:30", minutes=30,
          refs=[(P, "Luna vaccines"), (W, "vaccine appointment luna")])
    event("work", "Call with Omar", "e-omar-call", "2026-11-04 16:00", minutes=30, rrule="FREQ=WEEKLY;BYDAY=WE",
          refs=[(TX, "call with Omar at 4pm", "2027-01-13 16:00"),
                (TX, "Wednesday's call with Omar", "2027-01-13 16:00")])
    event("work", "Call with Omar's accountant", "e-omar-accountant", "2027-01-19 11:00", minutes=30,
          refs=[(P, "Omar accountant"), (T, "call with omar's acountant")])
    event("work", "1:1 with Omar", "e-omar-1on1", "2026-09-04 10:00", minutes=30, rrule="FREQ=WEEKLY;BYDAY=FR",
          refs=[(TX, "1:1 with Omar", "2027-01-15 10:00", "precision trap: 1:1 is a meeting, not a time")])
    event("work", "1:1 with Marta", "e-marta-1on1", "2026-09-07 15:30", minutes=30, rrule="FREQ=WEEKLY;BYDAY=MO",
          refs=[(TX, "Marta 1:1", "2027-01-11 15:30", "precision trap: 1:1 is a meeting, not a time")])
    event("personal", "Lunch with May", "e-may-lunch", "2027-01-20 12:30",
          refs=[(TX, "lunch with May", "2027-01-20 12:30", "precision trap: May is a person")])
    event("personal", "Dinner with May and Tom", "e-may-dinner", "2027-01-16 19:30", minutes=150,
          refs=[(TX, "dinner with May on Saturday", "2027-01-16 19:30")])
    event("personal", "Charity 10k run", "e-10k", "2027-02-07 09:00", minutes=120,
          refs=[(TX, "10k run", "2027-02-07 09:00", "precision trap: a distance, not a time")])
    event("personal", "Morning run", "e-morning-run", "2026-10-03 08:00", minutes=45, rrule="FREQ=WEEKLY;BYDAY=SA",
          refs=[(TX, "morning run on Saturday", "2027-01-16 08:00")])
    event("personal", "Piano lesson", "e-piano", "2026-09-03 17:00", minutes=45, rrule="FREQ=WEEKLY;BYDAY=TH",
          refs=[(TX, "piano lesson this week", "2027-01-14 17:00"),
                (TX, "piano lesson on Jan 21", "2027-01-21 17:00"), (W, "piano lessons"), (E, "Piano lesson"), (TX, "piano lesson on April 1", "2027-04-01 17:00")])
    event("personal", "Dentist check-up", "e-dentist", "2027-01-15 08:30", minutes=45,
          refs=[(TX, "dentist on Friday", "2027-01-15 08:30"), (C, "dentist checkup")])
    event("personal", "Dentist check-up for Mia", "e-dentist-mia", "2027-02-09 14:00", minutes=30,
          refs=[(P, "Mia dentist")])
    event("work", "Design review", "e-design-review", "2026-09-01 11:00", rrule="FREQ=WEEKLY;BYDAY=TU",
          refs=[(TX, "design review tomorrow", "2027-01-12 11:00"), (E, "Design review")])
    event("work", "Design review with the agency", "e-design-agency", "2027-01-13 15:00",
          refs=[(TX, "the design review at 15:00", "2027-01-13 15:00"), (P, "agency design review")])
    event("work", "Design retro", "e-design-retro", "2027-01-20 14:00", refs=[(X, "design retrospective")])
    event("personal", "School concert", "e-concert", "2027-01-14 18:00", minutes=90,
          refs=[(TX, "school concert in 3 days", "2027-01-14 18:00"), (R, "concert at school")])
    event("work", "All hands meeting", "e-all-hands", "2026-09-01 16:00", rrule="FREQ=MONTHLY;BYDAY=1TU",
          refs=[(TX, "all hands next month", "2027-02-02 16:00"), (TX, "all-hands on March 2", "2027-03-02 16:00"), (TX, "the all hands on February 2", "2027-02-02 16:00"),
                (C, "allhands meeting")])
    event("personal", "Haircut", "e-haircut", "2027-01-22 17:30", minutes=45,
          refs=[(TX, "haircut on 2027-01-22", "2027-01-22 17:30"), (E, "haircut"), (W, "hair cutting")])
    event("work", "Sprint retro", "e-sprint-retro", "2027-01-01 15:00", rrule="FREQ=WEEKLY;INTERVAL=2;BYDAY=FR",
          refs=[(TX, "the retro on Friday", "2027-01-15 15:00"), (TX, "sprint retro on January 29", "2027-01-29 15:00"),
                (X, "sprint retrospective"), (E, "Sprint retro")])
    event("work", "Sprint planning", "e-sprint-planning", "2027-01-12 10:00", minutes=90,
          rrule="FREQ=WEEKLY;INTERVAL=2;BYDAY=TU",
          refs=[(TX, "sprint planning tomorrow", "2027-01-12 10:00"), (W, "sprint plan")])
    event("personal", "Book club", "e-book-club", "2026-09-14 19:30", minutes=120, rrule="FREQ=MONTHLY;BYDAY=2MO",
          refs=[(TX, "book club tonight", "2027-01-11 19:30"), (TX, "book club on 8 February", "2027-02-08 19:30"),
                (C, "bookclub"), (E, "book club")])
    event("personal", "Swim session", "e-swim", "2026-09-02 07:00", rrule="FREQ=WEEKLY;BYDAY=MO,WE",
          refs=[(TX, "swim at 7am", "2027-01-13 07:00"), (W, "swimming session"), (E, "Swim session"), (TX, "swim on Wednesday at 7:00", "2027-01-13 07:00")])
    event("personal", "Physio session", "e-physio", "2027-01-14 11:15", minutes=45,
          refs=[(TX, "physio on Thursday", "2027-01-14 11:15"), (X, "physiotherapy session")])
    event("personal", "Physio follow-up", "e-physio-followup", "2027-01-28 11:15", minutes=30,
          refs=[(C, "physio followup")])
    event("personal", "Flight to Lisbon", "e-flight-lisbon", "2027-02-12 07:10", minutes=180,
          refs=[(TX, "the flight to Lisbon on Feb 12", "2027-02-12 07:10")])
    event("personal", "Flight back from Lisbon", "e-flight-back", "2027-02-15 18:40", minutes=180,
          refs=[(P, "flight back")])
    event("personal", "Choir rehearsal", "e-choir", "2026-09-01 19:45", minutes=90, rrule="FREQ=WEEKLY;BYDAY=TU",
          refs=[(TX, "Tuesday's choir rehearsal", "2027-01-12 19:45"), (T, "choir reherasal"), (TX, "choir rehearsal on 30 March", "2027-03-30 19:45")])
    event("home", "Meeting with the landlord", "e-landlord", "2027-01-12 10:30", minutes=30,
          refs=[(TX, "meeting with the landlord tomorrow at 10:30am", "2027-01-12 10:30"), (P, "landlord"), (TX, "the landlord meeting tomorrow", "2027-01-12 10:30")])
    event("work", "Quarterly planning with finance", "e-q-planning", "2027-01-12 15:00", minutes=60,
          refs=[(TX, "tomorrow at 3pm", "2027-01-12 15:00", "only a time expression: the one live event then"),
                (P, "planning with finance")])
    event("work", "Annual general meeting", "e-agm", "2027-03-18 10:00", minutes=180,
          refs=[(I, "AGM"), (I, "the AGM"), (E, "annual general meeting")])
    event("work", "Quarterly business review", "e-qbr", "2027-02-24 13:00", minutes=120,
          refs=[(I, "QBR"), (P, "business review")])
    event("work", "Open source office hours", "e-oss", "2026-10-06 17:00", rrule="FREQ=WEEKLY;BYDAY=TU",
          refs=[(I, "OSS office hours"), (C, "opensource office hours"), (TX, "office hours tomorrow", "2027-01-12 17:00")])
    event("work", "Human resources town hall", "e-hr-townhall", "2027-02-17 11:00",
          refs=[(I, "HR town hall"), (C, "HR townhall")])
    event("work", "Customer advisory board", "e-cab", "2027-03-09 09:00", minutes=240,
          refs=[(I, "CAB meeting"), (P, "advisory board")])
    event("personal", "Parent teacher association meeting", "e-pta", "2027-01-26 19:00",
          refs=[(I, "PTA meeting"), (I, "PTA")])
    event("work", "Product requirements document walkthrough", "e-prd", "2027-01-21 13:00",
          refs=[(I, "PRD walkthrough"), (X, "product req walkthrough")])
    event("work", "Chief technology officer roundtable", "e-cto", "2027-02-03 16:00",
          refs=[(I, "CTO roundtable"), (C, "round table CTO")])
    event("home", "Home owners association meeting", "e-hoa", "2027-02-22 19:00",
          refs=[(I, "HOA meeting"), (C, "homeowners association")])
    event("work", "Quarterly all-company kickoff", "e-kickoff", "2027-01-25 09:00", minutes=240,
          refs=[(C, "kick-off"), (C, "all company kick off")])
    event("work", "Offsite kick-off dinner", "e-offsite-dinner", "2027-01-27 19:00", minutes=150,
          refs=[(C, "offsite kickoff dinner"), (P, "offsite dinner")])
    event("personal", "Birthday party for Omar", "e-omar-party", "2027-01-23 18:00", minutes=240,
          refs=[(R, "Omar's party birthday"), (S, "our friend's fortieth celebration")])
    event("work", "Interview with a designer candidate", "e-interview", "2027-01-18 14:00",
          refs=[(W, "interviewing designer candidates"), (P, "designer interview")])
    event("work", "Workshop on data privacy", "e-privacy", "2027-02-04 10:00", minutes=120,
          refs=[(R, "data privacy workshop"), (T, "workshop on data privasy"), (S, "GDPR training day")])
    event("work", "Conference call with the Tokyo office", "e-tokyo", "2027-01-21 08:00",
          refs=[(P, "Tokyo call"), (T, "conferance call tokyo")])
    event("personal", "Parents' evening at school", "e-parents", "2027-02-02 18:30", minutes=90,
          refs=[(R, "school parents evening"), (W, "parent evening")])
    event("home", "Boiler maintenance visit", "e-boiler", "2027-01-28 08:00", minutes=120,
          refs=[(P, "boiler visit"), (T, "boiler maintainance"), (S, "heating engineer comes round")])
    event("home", "Window cleaner", "e-window-cleaner", "2027-02-01 09:00", rrule="FREQ=MONTHLY;BYMONTHDAY=1",
          refs=[(W, "window cleaning"), (C, "windowcleaner"), (TX, "window cleaner next month", "2027-02-01 09:00")])
    event("personal", "Cinema night", "e-cinema", "2027-01-15 20:00", minutes=150,
          refs=[(W, "cinema nights"), (S, "watch a film out")])
    event("personal", "Wedding of Lena and Jonas", "e-wedding", "2027-03-27 14:00", minutes=600,
          refs=[(R, "Jonas and Lena wedding"), (S, "the marriage ceremony")])
    event("work", "Release planning", "e-release-planning", "2026-12-07 13:30", minutes=60,
          rrule="FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
          refs=[(R, "planning of the release"), (T, "relaese planning"), (W, "releases plan"), (TX, "release planning next week", "2027-01-18 13:30")])
    event("work", "Architecture review board", "e-arb", "2027-01-19 15:00",
          refs=[(I, "ARB"), (X, "arch review board")])
    event("work", "Security training", "e-sec-training", "2027-02-11 10:00", minutes=120,
          refs=[(X, "sec training"), (T, "securty training")])
    event("personal", "Guitar lesson", "e-guitar", "2026-09-05 11:00", minutes=45, rrule="FREQ=WEEKLY;BYDAY=SA",
          refs=[(E, "guitar lesson"), (W, "guitar lessons"), (TX, "guitar lesson on Saturday", "2027-01-16 11:00"), (S, "my weekly strumming class")])
    event("home", "Chimney inspection", "e-chimney", "2027-02-19 13:00",
          refs=[(X, "chim inspection"), (W, "chimney inspections")])
    event("work", "Investor update call", "e-investor", "2027-02-16 17:00",
          refs=[(R, "call investor update"), (X, "invest update")])
    event("personal", "Date night", "e-date-night", "2026-09-04 19:30", minutes=180, rrule="FREQ=WEEKLY;BYDAY=FR",
          refs=[(E, "date night"), (S, "evening out with my partner"), (TX, "Friday's date night", "2027-01-15 19:30")])
    event("home", "Bin collection", "e-bins", "2026-09-03 07:00", minutes=30, rrule="FREQ=WEEKLY;BYDAY=TH",
          refs=[(W, "bins collection"), (S, "rubbish day"), (TX, "bin collection on Thursday", "2027-01-14 07:00")])
    event("personal", "Mum's birthday dinner", "e-mum-dinner", "2027-01-30 19:00", minutes=180,
          refs=[(P, "mum birthday"), (T, "mums birthday diner")])
    event("work", "Code freeze", "e-code-freeze", "2027-02-26 18:00", minutes=30,
          refs=[(E, "Code freeze"), (W, "code freezing")])
    event("work", "Onboarding session for new hires", "e-onboarding", "2027-01-18 10:00", minutes=120,
          refs=[(W, "onboarding sessions new hire"), (X, "onboard session")])
    event("work", "Performance calibration", "e-calibration", "2027-02-18 09:30", minutes=180,
          refs=[(X, "perf calibration"), (T, "performance calbration")])
    event("work", "Team lunch at the Thai place", "e-team-lunch-thai", "2027-01-29 12:00",
          refs=[(P, "Thai team lunch")])
    # Daily series.
    event("personal", "Walk the dog", "e-dog-walk", "2026-08-01 07:15", minutes=30, rrule="FREQ=DAILY",
          refs=[(TX, "dog walk tomorrow", "2027-01-12 07:15"), (TX, "walk the dog on Sunday", "2027-01-17 07:15"),
                (W, "walking the dog")])
    event("personal", "Evening meditation", "e-meditation", "2026-10-01 21:00", minutes=20, rrule="FREQ=DAILY",
          refs=[(TX, "meditation tonight", "2027-01-11 21:00"), (X, "meditat evening")])


def duplicates() -> None:
    dup("task", "Call mum", [("personal", "t-dup-callmum-1"), ("home", "t-dup-callmum-2")],
        ["Call mum", "call mum"])
    dup("task", "Pay rent", [("personal", "t-dup-rent-1"), ("home", "t-dup-rent-2")], ["pay rent", "Pay rent "])
    dup("task", "Weekly report", [("work", "t-dup-weekly-1"), ("work", "t-dup-weekly-2"),
                                  ("personal", "t-dup-weekly-3")], ["Weekly report", "weekly REPORT"])
    dup("task", "Water the plants", [("home", "t-dup-plants-1"), ("personal", "t-dup-plants-2")],
        ["water the plants", "Water the plants"])
    dup("task", "Book dentist", [("personal", "t-dup-dentist-1"), ("home", "t-dup-dentist-2")],
        ["book dentist"])
    dup("task", "Expense report", [("work", "t-dup-expense-1"), ("personal", "t-dup-expense-2")],
        ["expense report", "Expense Report"])
    dup("task", "Update timesheet", [("work", "t-dup-timesheet-1"), ("work", "t-dup-timesheet-2")],
        ["update timesheet"])
    dup("task", "Clean the kitchen", [("home", "t-dup-kitchen-1"), ("personal", "t-dup-kitchen-2")],
        ["clean the kitchen"])
    dup("event", "Team lunch", [("work", "e-dup-lunch-1"), ("personal", "e-dup-lunch-2")],
        ["team lunch", "Team lunch"], start="2027-01-22 12:30")
    dup("event", "Parents' meeting", [("personal", "e-dup-parents-1"), ("home", "e-dup-parents-2")],
        ["parents' meeting"], start="2027-02-05 17:00")
    dup("event", "Doctor appointment", [("personal", "e-dup-doctor-1"), ("home", "e-dup-doctor-2"),
                                        ("work", "e-dup-doctor-3")],
        ["doctor appointment", "Doctor Appointment"], start="2027-01-26 09:00")
    dup("event", "Planning session", [("work", "e-dup-planning-1"), ("work", "e-dup-planning-2")],
        ["planning session"], start="2027-02-09 10:00")
    dup("event", "Board meeting", [("work", "e-dup-board-1"), ("home", "e-dup-board-2")],
        ["board meeting", "Board meeting"], start="2027-03-04 15:00")


# Fillers: plausible titles that repeat the calendar's frequent words.
# (verbs, objects): each verb makes sense with each of its objects.
TASK_GROUPS = [
    (["Buy", "Order"], ["coffee beans", "dog food", "cat litter", "bike lights", "winter tyres", "new headphones",
                        "a phone charger", "batteries", "light bulbs", "stamps", "printer ink", "a birthday gift for Tom",
                        "a doormat for the cabin"]),
    (["Call", "Email"], ["the bank", "the insurance company", "the school office", "Priya about the demo",
                         "Tom about the launch", "Lena about the wiki", "the phone company", "the supplier",
                         "the letting agent", "the doctor's surgery", "the council", "the removal company"]),
    (["Book", "Schedule"], ["the train tickets", "the hotel", "the museum tickets", "the meetup venue", "a massage",
                            "the car wash", "the team dinner", "the window fitter", "a babysitter"]),
    (["Clean", "Fix", "Check"], ["the garden hose", "the pantry", "the guest room", "the shoe rack", "the balcony chairs",
                                 "the coffee machine", "the bike brakes", "the broadband router", "the fridge",
                                 "the oven", "the gutters", "the shed"]),
    (["Pay", "Check"], ["the phone bill", "the internet bill", "the water bill", "the parking fine",
                        "the bank statement", "the credit card bill"]),
    (["Plan"], ["the summer holiday", "the garden party", "the weekend", "the spring clean", "the kids' playdate",
                "the team dinner"]),
]
DOC_VERBS = ["Review", "Update", "Finish", "Draft", "Prepare", "Send", "Print"]
DOC_OBJECTS = ["the sales forecast", "the project timeline", "the release notes", "the test plan", "the press release",
               "the monthly summary", "the brand guidelines", "the launch checklist", "the demo script",
               "the style guide", "the training schedule", "the meeting notes", "the quarterly numbers",
               "the sponsorship deck", "the partner contract", "the holiday rota", "the team wiki",
               "the support rota", "the pricing page copy", "the job description"]
DOC_SUFFIXES = ["", "", " for the client", " for the team", " with Tom", " with Lena"]
REVIEW_FILLERS = [
    "Code review for the search service", "Review the hiring rubric", "Review Lena's blog post",
    "Review the sales playbook", "Review Tom's estimates", "Review onboarding feedback",
    "Review the marketing plan", "Review supplier quotes", "Review the quarterly numbers",
    "Review Priya's test plan", "Review mobile app screenshots", "Review the board minutes",
]
EVENT_TOPICS = ["Team", "Product", "Marketing", "Sales", "Finance", "Design", "Engineering", "Support",
                "Partner", "Hiring", "Roadmap", "Platform", "Data", "Mobile", "Growth", "Ops"]
EVENT_KINDS = ["sync", "meeting", "workshop", "catch-up", "demo", "review", "offsite", "lunch", "briefing",
               "deep dive", "brainstorm", "check-in", "presentation", "training"]
EVENT_PERSONAL = ["Coffee with Priya", "Coffee with Tom", "Drinks with Lena", "Brunch with the neighbours",
                  "Kids swimming lesson", "Football practice", "Museum visit", "Theatre evening",
                  "Pottery class", "Climbing session", "Language exchange", "Farmers market",
                  "Garden centre trip", "Car inspection", "Bike repair shop", "Optician appointment",
                  "Massage appointment", "Visit grandma", "Family dinner", "Barbecue at Tom's",
                  "Board games night", "Quiz night", "Jazz concert", "Stand-up comedy show",
                  "Volunteering at the food bank", "Ski trip planning call", "Babysitter evening",
                  "Kids birthday party", "Plumber visit", "Electrician visit", "Internet technician visit",
                  "Furniture delivery", "Grocery delivery slot", "Parcel pickup", "Open house viewing"]
EVENT_WEEKDAYS = ["MO", "TU", "WE", "TH", "FR"]

FREQUENT = {"order", "buy", "review", "finish", "call", "send", "book", "check", "update", "prepare",
            "schedule", "email", "fix", "plan", "draft", "clean", "pay", "print", "sort", "return", "team",
            "meeting", "lunch", "notes", "plan", "list", "project", "office", "priya", "tom", "lena",
            "client", "home", "trip", "sprint", "quarterly", "design", "product", "marketing", "planning",
            "session", "training", "workshop", "sync", "dinner", "visit", "appointment", "party", "birthday",
            "class", "lesson", "kids", "concert", "night", "swimming", "catch", "up", "data", "numbers",
            "board", "demo", "presentation", "finance", "support", "platform", "hiring", "mobile", "run"}

_WORD = re.compile(r"\w+")
STOP = {"a", "an", "the", "to", "of", "for", "on", "in", "at", "by", "and", "or", "with", "from", "my", "s"}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in STOP}


def fillers(rng: random.Random) -> None:
    target_vocab = set().union(*(_words(i["title"]) for i in ITEMS)) - FREQUENT
    titles = {i["title"].casefold() for i in ITEMS}

    def fresh(title: str) -> bool:
        key = title.casefold()
        return key not in titles and not (_words(title) & target_vocab)

    n = 0
    for title in REVIEW_FILLERS:
        if fresh(title):
            titles.add(title.casefold())
            task("work", title, f"t-fill-r{n:03d}", due=_maybe_due(rng))
            n += 1
    simple = [(v, o) for verbs, objects in TASK_GROUPS for v in verbs for o in objects]
    docs = [(v, o + suffix) for v in DOC_VERBS for o in DOC_OBJECTS for suffix in DOC_SUFFIXES]
    rng.shuffle(docs)
    home_collections = ["personal", "home"]
    count = 0
    for k, (verb, obj) in enumerate(simple + docs):
        if count >= 250:
            break
        title = f"{verb} {obj}"
        if not fresh(title):
            continue
        titles.add(title.casefold())
        collection = rng.choice(home_collections) if k < len(simple) else rng.choice(["work", "work", "personal"])
        task(collection, title, f"t-fill-{count:03d}", due=_maybe_due(rng))
        count += 1
    count = 0
    pairs = [(t, k) for t in EVENT_TOPICS for k in EVENT_KINDS]
    rng.shuffle(pairs)
    for topic, kind in pairs:
        if count >= 120:
            break
        title = f"{topic} {kind}"
        if not fresh(title):
            continue
        titles.add(title.casefold())
        uid = f"e-fill-{count:03d}"
        if count % 6 == 0:
            day = NOW.date() - timedelta(days=rng.randint(20, 200))
            weekday = rng.choice(EVENT_WEEKDAYS)
            start = datetime.combine(day, datetime.min.time()).replace(hour=rng.choice([8, 10, 13, 16]),
                                                                       minute=rng.choice([0, 15, 45]))
            event("work", title, uid, start.strftime("%Y-%m-%d %H:%M"), minutes=rng.choice([30, 60]),
                  rrule=f"FREQ=WEEKLY;BYDAY={weekday}")
        else:
            day = NOW.date() + timedelta(days=rng.randint(1, 85))
            start = datetime.combine(day, datetime.min.time()).replace(hour=rng.choice([8, 9, 10, 11, 13, 14, 16]),
                                                                       minute=rng.choice([0, 30, 45]))
            event("work", title, uid, start.strftime("%Y-%m-%d %H:%M"), minutes=rng.choice([30, 60, 90]))
        count += 1
    for k, title in enumerate(EVENT_PERSONAL):
        if not fresh(title):
            continue
        day = NOW.date() + timedelta(days=rng.randint(2, 85))
        start = datetime.combine(day, datetime.min.time()).replace(hour=rng.choice([10, 11, 17, 18, 19, 20]),
                                                                   minute=rng.choice([0, 15, 30]))
        event(rng.choice(["personal", "home"]), title, f"e-fill-p{k:03d}", start.strftime("%Y-%m-%d %H:%M"),
              minutes=rng.choice([60, 90, 120]))


def _maybe_due(rng: random.Random) -> str | None:
    if rng.random() < 0.5:
        return None
    day = NOW.date() + timedelta(days=rng.randint(3, 80))
    if rng.random() < 0.5:
        return day.isoformat()
    return f"{day.isoformat()} {rng.choice(['09:00', '12:00', '17:00'])}"


def assign_ids_and_splits(rng: random.Random) -> list[dict]:
    by_category: dict[str, list[dict]] = defaultdict(list)
    for ref in REFS:
        by_category[ref["category"]].append(ref)
    out = []
    for category in sorted(by_category):
        refs = by_category[category]
        order = list(range(len(refs)))
        rng.shuffle(order)
        heldout = set(order[: round(len(refs) * HELDOUT_SHARE)])
        for k, ref in enumerate(refs):
            ref["split"] = "calibrate" if k in heldout else "train"
    for n, ref in enumerate(REFS, start=1):
        entry = {"id": f"r{n:04d}", **ref}
        out.append(entry)
    return out


def check(references: list[dict]) -> list[str]:
    """Ambiguity the labels would hide: another item of the kind holding every word of a lexical reference."""
    problems = []
    by_uid = {i["uid"]: i for i in ITEMS}
    titles = Counter(i["title"].casefold() for i in ITEMS)
    for ref in references:
        if ref["category"] in ("partial", "reordered"):
            words = _words(ref["text"])
            others = [i for i in ITEMS if i["kind"] == ref["kind"] and i["uid"] not in ref["expected"]
                      and words <= _words(i["title"])]
            if not all(words <= _words(by_uid[u]["title"]) for u in ref["expected"]):
                problems.append(f"{ref['id']} {ref['text']!r} has a word its target lacks")
            if others:
                problems.append(f"{ref['id']} {ref['text']!r} also fully in {[o['title'] for o in others]}")
        if ref["category"] == "exact":
            title = by_uid[ref["expected"][0]]["title"]
            if ref["text"].strip().casefold() != title.casefold() or titles[title.casefold()] != 1:
                problems.append(f"{ref['id']} exact {ref['text']!r} vs {title!r}")
    dupes = [t for t, n in titles.items() if n > 1]
    expected_dupes = {by_uid[u]["title"].casefold() for r in references if r["category"] == "duplicates"
                      for u in r["expected"]}
    if set(dupes) != expected_dupes:
        problems.append(f"unlabelled shared titles: {sorted(set(dupes) - expected_dupes)}")
    return problems


# -- issue 21: references written the way people and agents write them ---------------------------------
# New categories, appended after the fillers so that the first set (items, ids, splits) is unchanged.
DA, CL, DI, TF, SN, FL, NG, AB = ("date_alone", "clitic", "diacritic", "time_form", "sentence", "foreign_title",
                                  "disambiguation", "absent")
NEW_SEED = 21
# Date-alone references: (kind, text, first day, last day, collection or None, "overdue" or None).
# Their expected items are every live item of the kind due (tasks) or occurring (events) in the
# range, listed first in any order (scored like duplicates); with a collection, that collection's only.
DATED: list[tuple] = [
    ("task", "what do I have due on Friday", "2027-01-15", "2027-01-15", None, None),
    ("task", "anything due on Tuesday the 19th?", "2027-01-19", "2027-01-19", None, None),
    ("task", "the task due the 3rd", "2027-02-03", "2027-02-03", None, None),
    ("task", "whatever was due yesterday", "2027-01-10", "2027-01-10", None, None),
    ("task", "what's overdue", None, None, None, "overdue"),
    ("task", "anything overdue?", None, None, None, "overdue"),
    ("task", "which tasks are overdue at home", None, None, "home", "overdue"),
    ("task", "what's due tomorrow", "2027-01-12", "2027-01-12", None, None),
    ("task", "stuff due this weekend", "2027-01-16", "2027-01-17", None, None),
    ("task", "the home stuff due next week", "2027-01-18", "2027-01-24", "home", None),
    ("task", "anything due on the 25th", "2027-01-25", "2027-01-25", None, None),
    ("task", "what was due last week", "2027-01-04", "2027-01-10", None, None),
    ("task", "todo for today", "2027-01-11", "2027-01-11", None, None),
    ("task", "the thing due on Wednesday", "2027-01-13", "2027-01-13", None, None),
    ("task", "what do I need to do the day after tomorrow", "2027-01-13", "2027-01-13", None, None),
    ("task", "tasks due a week from today", "2027-01-18", "2027-01-18", None, None),
    ("task", "what's due on the 21st", "2027-01-21", "2027-01-21", None, None),
    ("task", "personal stuff due this week", "2027-01-11", "2027-01-17", "personal", None),
    ("event", "my meetings on the 21st", "2027-01-21", "2027-01-21", None, None),
    ("event", "what's on tomorrow evening", "2027-01-12 18:00", "2027-01-13 00:00", None, None),
    ("event", "anything happening Saturday", "2027-01-16", "2027-01-16", None, None),
    ("event", "what do I have the day after tomorrow", "2027-01-13", "2027-01-13", None, None),
    ("event", "events this weekend", "2027-01-16", "2027-01-17", None, None),
    ("event", "personal stuff this weekend", "2027-01-16", "2027-01-17", "personal", None),
    ("event", "what's on the 3rd", "2027-02-03", "2027-02-03", None, None),
    ("event", "my work meetings on the 19th", "2027-01-19", "2027-01-19", "work", None),
    ("event", "what have I got on Sunday", "2027-01-17", "2027-01-17", None, None),
    ("event", "anything at home in February?", "2027-02-01", "2027-02-28", "home", None),
]


def realistic() -> None:
    # Possessives and contractions (pattern 2): "Zara's" must not become a word "s".
    task("personal", "Renew Zara's passport", "t-r-zara-passport", due="2027-02-19",
         refs=[(CL, "renew Zara's passport"), (CL, "zaras passport renewal"), (CL, "Zara’s passport")])
    task("personal", "Zara's school trip permission slip", "t-r-zara-slip",
         refs=[(CL, "sign zara's permission slip"), (CL, "what's happening with Zara's school trip")])
    task("home", "Fix Zara's bike", "t-r-zara-bike", refs=[(CL, "zara's bike"), (CL, "I can't forget to fix Zara's bike")])
    task("work", "Whatsapp group for the launch team", "t-r-whatsapp", refs=[(CL, "the whatsapp group")])
    event("personal", "Zara's piano recital", "e-r-zara-recital", "2027-02-06 15:00", minutes=90,
          refs=[(CL, "when's Zara's recital"), (CL, "zara's piano recital"), (TF, "the recital on the 6th", "2027-02-06 15:00")])
    task("work", "Don't forget the vendor survey", "t-r-vendor-survey",
         refs=[(CL, "don't forget vendor survey"), (CL, "vendor survey I shouldn't forget")])
    task("home", "Sharpen the kids' pencils", "t-r-pencils", refs=[(CL, "kids pencils"), (CL, "the kid's pencils")])
    # Diacritics and German transliterations (pattern 3), both directions.
    task("work", "Call Björn about the lease renewal", "t-r-bjorn",
         refs=[(DI, "call bjorn about the lease"), (DI, "bjoern lease"), (DI, "Bjorn")])
    event("work", "Lunch with André", "e-r-andre", "2027-01-21 12:30",
          refs=[(DI, "lunch with andre"), (DI, "Andre"), (TF, "lunch with andre on the 21st", "2027-01-21 12:30")])
    event("work", "Zürich office visit", "e-r-zurich", "2027-02-09 09:00", minutes=480,
          refs=[(DI, "zurich visit"), (DI, "zuerich office"), (DI, "Zurich trip")])
    task("home", "Pick up keys at Hauptstraße 12", "t-r-strasse",
         refs=[(DI, "keys hauptstrasse"), (DI, "pick up keys at hauptstrasse")])
    task("personal", "Birthday present for Zoë", "t-r-zoe", refs=[(DI, "present for zoe"), (DI, "zoe birthday present")])
    task("work", "Send the Müller contract", "t-r-muller",
         refs=[(DI, "mueller contract"), (DI, "muller contract"), (DI, "send the muller contract")])
    event("personal", "Dinner at Café Noël", "e-r-cafe", "2027-01-29 19:30", minutes=120,
          refs=[(DI, "cafe noel dinner"), (DI, "dinner at cafe noel")])
    task("work", "Approve Renée's expenses", "t-r-renee", refs=[(DI, "renee's expenses"), (DI, "approve renee expenses")])
    task("personal", "Book the Malmö ferry", "t-r-malmo", refs=[(DI, "malmo ferry"), (DI, "book malmoe ferry")])
    event("work", "Workshop with Søren", "e-r-soren", "2027-02-10 13:00", minutes=120,
          refs=[(DI, "soren workshop"), (DI, "workshop with soeren")])
    task("work", "Plan the São Paulo visit", "t-r-saopaulo", refs=[(DI, "sao paulo visit")])
    task("personal", "Update my resume", "t-r-resume", refs=[(DI, "update my résumé"), (DI, "résumé")])
    task("home", "Order the Crème brûlée set for Zoé", "t-r-creme", refs=[(DI, "creme brulee set")])
    # Titles in German, French and Spanish (written without their accents, or in English).
    event("work", "Réunion mensuelle de l'équipe Madrid", "e-r-reunion", "2026-10-21 10:00",
          rrule="FREQ=MONTHLY;BYDAY=3WE",
          refs=[(FL, "reunion equipe madrid"), (FL, "réunion mensuelle"), (NG, "the Madrid team monthly"),
                (TF, "the Madrid reunion on the 20th", "2027-01-20 10:00")])
    task("personal", "Steuererklärung abgeben", "t-r-steuer", due="2027-03-01",
         refs=[(FL, "steuererklarung"), (FL, "steuererklaerung abgeben"), (S, "do my taxes")])
    task("home", "Müll rausbringen", "t-r-muell", refs=[(FL, "muell rausbringen"), (FL, "mull raus")])
    event("personal", "Cita con el médico", "e-r-medico", "2027-01-26 16:00", minutes=30,
          refs=[(FL, "cita medico"), (FL, "cita con el medico")])
    task("work", "Préparer la présentation pour Lyon", "t-r-lyon",
         refs=[(FL, "preparer presentation lyon"), (FL, "la presentation de Lyon")])
    task("personal", "Comprar regalo para Lucía", "t-r-lucia",
         refs=[(FL, "regalo lucia"), (FL, "comprar regalos para lucia")])
    event("personal", "Fußballtraining der Kinder", "e-r-fussball", "2026-09-02 17:00", minutes=90,
          rrule="FREQ=WEEKLY;BYDAY=WE",
          refs=[(FL, "fussballtraining"), (FL, "fussball training kinder"), (TF, "fussballtraining the day after tomorrow", "2027-01-13 17:00")])
    task("work", "Rechnung an Kühne schicken", "t-r-kuehne", refs=[(FL, "rechnung kuehne"), (FL, "kuhne rechnung")])
    event("work", "Déjeuner avec l'équipe de Genève", "e-r-geneve", "2027-02-04 12:00",
          refs=[(FL, "dejeuner geneve"), (FL, "déjeuner équipe genève"), (NG, "lunch with the Geneva team")])
    task("home", "Wäsche aufhängen", "t-r-waesche", refs=[(FL, "waesche aufhaengen"), (FL, "wasche")])
    # Disambiguation and negation (pattern 5): the judge's job; retrieval must put the target in the pool.
    task("work", "Send proposal to Acme", "t-r-proposal-acme", refs=[(NG, "the Acme proposal, not the Brightline one")])
    task("work", "Send proposal to Brightline", "t-r-proposal-bright",
         refs=[(NG, "the proposal, not the one for Acme"), (NG, "the other proposal, for Brightline")])
    # Overdue and dated tasks for the date-alone questions.
    task("personal", "Return the rental car keys", "t-r-carkeys", due="2027-01-10")
    task("work", "Submit the December timesheet", "t-r-dec-timesheet", due="2027-01-05 17:00")
    task("home", "File the insurance claim for the leak", "t-r-claim", due="2027-01-08")
    task("personal", "Renew the domain name", "t-r-domain", due="2027-02-03", refs=[(S, "keep the website address from lapsing")])
    task("home", "Order seeds for the vegetable patch", "t-r-seeds", due="2027-01-21")
    task("work", "Invoice from Volt & Co", "t-r-volt", due="2027-01-27", refs=[(S, "pay the electrician")])
    event("personal", "Dr. Okafor 9:30", "e-r-okafor", "2027-02-02 09:30", minutes=30,
          refs=[(S, "see my GP"), (P, "Okafor")])

    NG_REFS = [
        ("event", "the other standup, with the infra people", "e-infra-standup"),
        ("event", "not the team lunch, the one at the Thai place", "e-team-lunch-thai"),
        ("event", "the yoga workshop, not the weekly class", "e-hot-yoga"),
        ("event", "my own dentist check-up, not Mia's", "e-dentist"),
        ("event", "the Tuesday design review, not the agency one", "e-design-review"),
        ("event", "the call with Omar himself, not his accountant", "e-omar-call"),
        ("task", "the passport for Zara, not mine", "t-r-zara-passport"),
        ("task", "the car insurance, not the travel one", "t-car-insurance"),
    ]
    for kind, text, uid in NG_REFS:
        _ref((NG, text), kind, [uid])

    SYNONYMS = [
        ("event", "going to the pictures", "e-cinema"),
        ("task", "sort out the heating", "t-radiators"),
        ("task", "take out the trash", "t-r-muell"),
        ("event", "the broadband guy comes round", "e-fill-p030"),
        ("task", "hang up the laundry", "t-r-waesche"),
        ("event", "the local produce stalls", "e-fill-p011"),
    ]
    for kind, text, uid in SYNONYMS:
        _ref((S, text), kind, [uid])

    # New time forms (pattern 4) on existing series.
    TIME_FORMS = [
        ("standup on the 21st", "e-standup", "2027-01-21 09:30"),
        ("yoga on the 26th", "e-yoga", "2027-01-26 18:30"),
        ("book club on the 8th", "e-book-club", "2027-02-08 19:30"),
        ("yoga on the twentieth", "e-yoga", "2027-01-20 19:00"),
        ("window cleaner on the 1st", "e-window-cleaner", "2027-02-01 09:00"),
        ("CTO roundtable on the 3rd", "e-cto", "2027-02-03 16:00"),
        ("sprint planning on the twelfth", "e-sprint-planning", "2027-01-12 10:00"),
        ("mum's birthday dinner on the thirtieth", "e-mum-dinner", "2027-01-30 19:00"),
        ("standup a week from today", "e-standup", "2027-01-18 09:30"),
        ("release planning a week from today", "e-release-planning", "2027-01-18 13:30"),
        ("design review a week from tomorrow", "e-design-review", "2027-01-19 11:00"),
        ("swim in a fortnight", "e-swim", "2027-01-25 07:00"),
        ("standup two weeks from today", "e-standup", "2027-01-25 09:30"),
        ("date night this coming Friday", "e-date-night", "2027-01-15 19:30"),
        ("the retro this coming Friday", "e-sprint-retro", "2027-01-15 15:00"),
        ("choir this coming Tuesday", "e-choir", "2027-01-12 19:45"),
        ("call with Omar the day after tomorrow", "e-omar-call", "2027-01-13 16:00"),
        ("dog walk the day after tomorrow", "e-dog-walk", "2027-01-13 07:15"),
        ("guitar lesson end of next week", "e-guitar", "2027-01-23 11:00"),
        ("morning run at the end of next week", "e-morning-run", "2027-01-23 08:00"),
        ("cinema at the end of the week", "e-cinema", "2027-01-15 20:00"),
        ("ARB on the 19th", "e-arb", "2027-01-19 15:00"),
        ("piano lesson a fortnight from Thursday", "e-piano", "2027-01-28 17:00"),
    ]
    for text, uid, start in TIME_FORMS:
        _ref((TF, text, start), "event", [uid])
    for text, uid in [("the roofer invoice on the 25th", "t-invoice-roofer"),
                      ("Marta review end of next week", "t-marta-review"),
                      ("passport due on the 29th", "t-passport"),
                      ("the seeds due a week from Thursday", "t-r-seeds")]:
        _ref((TF, text), "task", [uid])

    # Agent sentences, casual speech, rambles.
    SENTENCES = [
        ("task", "Please mark the task 'Order toner for the printer' as done", "t-toner", None),
        ("event", "Can you move my yoga class tomorrow to 7pm?", "e-yoga", "2027-01-12 18:30"),
        ("task", "hey, did I already book the flights for the Berlin conference?", "t-conf-flights", None),
        ("task", "ok so I need to, um, finally get around to unclogging that bathroom sink before the weekend",
         "t-sink", None),
        ("event", "Remind me what's on for the sprint retro on Friday", "e-sprint-retro", "2027-01-15 15:00"),
        ("event", "The user is referring to their weekly budget review meeting on Thursday", "e-budget-review",
         "2027-01-14 14:00"),
        ("task", "I think there was something about renewing the SSL cert, can you find it", "t-ssl", None),
        ("task", "the thing with Marta's performance review", "t-marta-review", None),
        ("event", "User wants to reschedule 'Piano lesson' on January 21 to later", "e-piano", "2027-01-21 17:00"),
        ("task", "need to call the electrician back about the wiring", "t-electrician", None),
        ("task", "whats the status of the incident report", "t-incident", None),
        ("task", "Could you pull up the security audit findings task for me?", "t-audit", None),
        ("task", "i gotta pay the roofer's invoice", "t-invoice-roofer", None),
        ("event", "Find the event: Quarterly business review (Feb 24)", "e-qbr", "2027-02-24 13:00"),
        ("event", "so what time is choir on tuesday", "e-choir", "2027-01-12 19:45"),
        ("event", "what's happening with the boiler maintenance visit?", "e-boiler", None),
        ("event", "the landlord thing tomorrow", "e-landlord", "2027-01-12 10:30"),
        ("event", "when is the kids' swimming lesson", "e-fill-p004", None),
        ("event", "remind me about mum's birthday dinner", "e-mum-dinner", None),
        ("task", "please complete \"Descale the kettle\"", "t-kettle", None),
        ("event", "Delete the 'Haircut' event on January 22", "e-haircut", "2027-01-22 17:30"),
        ("task", "the user asked me to tick off buying soy milk", "t-soymilk", None),
        ("task", "uh the thing for Acme, the follow up", "t-acme-followup", None),
        ("event", "is the physio on thursday still on?", "e-physio", "2027-01-14 11:15"),
        ("task", "Mark 'Water the tomatoes' complete for the user", "t-tomatoes", None),
        ("event", "What time does Zara's recital start?", "e-r-zara-recital", None),
    ]
    for kind, text, uid, start in SENTENCES:
        _ref((SN, text) + ((start,) if start else ()), kind, [uid])

    # Things that are not in the calendar: the right answer is a clarification.
    # With why each names nothing (bench/retrieval.py ABSENT_TYPES): each shares words with a title, a near miss.
    ABSENT = [
        ("task", "cancel the netflix subscription", "similar"),
        ("event", "the meeting with the Paris office", "similar"),
        ("task", "buy a new kayak paddle", "similar"), ("event", "Zara's swimming gala", "similar"),
        ("task", "renew Bjorn's passport", "similar"), ("event", "the dentist on Sunday", "similar"),
        ("task", "submit the expense report for March", "similar"), ("event", "lunch with Giulia", "similar"),
    ]
    for kind, text, absent_type in ABSENT:
        _ref((AB, text), kind, [])
        REFS[-1]["absent_type"] = absent_type



def dated_references(meta) -> None:
    """Each date-alone reference, with its expected items from the data (`dated_expected`)."""
    for (kind, text, *_rest), expected in zip(DATED, dated_expected(ITEMS, meta)):
        if not 1 <= len(expected) <= 15:
            print(f"date-alone {text!r}: {len(expected)} expected items; choose another range")
        REFS.append({"text": text, "kind": kind, "category": DA, "expected": expected})


def dated_expected(items: list[dict], meta) -> list[list[str]]:
    """For each of DATED, the uids of `items` of its kind in its range (and its collection, when it names one).

    Also called by the scripts that add items to the set later (issue29.py), so a question by date names every
    item the calendar has then."""
    from bench import retrieval
    from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM

    zone = meta.zone
    out = []
    for kind, text, first, last, collection, special in DATED:
        if special == "overdue":
            def hit(item):
                due = item.get("due")
                if not due:
                    return False
                if len(due) == 10:
                    return datetime.fromisoformat(due).date() < NOW.date()
                return datetime.fromisoformat(due) < NOW
        else:
            lo = datetime.fromisoformat(first).replace(tzinfo=zone)
            hi = datetime.fromisoformat(last).replace(tzinfo=zone)
            if len(last) == 10:
                hi += timedelta(days=1)

            def hit(item, lo=lo, hi=hi):
                if item["kind"] == "task":
                    due = item.get("due")
                    if not due:
                        return False
                    when = datetime.fromisoformat(due)
                    if len(due) == 10:
                        when = when.replace(tzinfo=zone)
                    return lo <= when < hi
                spans = retrieval.occurrences(item, meta, limit=MAX_OCCURRENCES_PER_ITEM)
                return any(s < hi and e > lo for s, e, _rid in spans)
        out.append([i["uid"] for i in items if i["kind"] == kind and hit(i)
                    and (collection is None or i["collection"] == collection)])
    return out


def assign_new(references: list[dict], start: int) -> list[dict]:
    """Ids and splits for the references added after the first set, with their own seed."""
    rng = random.Random(NEW_SEED)
    fresh = REFS[start:]
    by_category: dict[str, list[dict]] = defaultdict(list)
    for ref in fresh:
        by_category[ref["category"]].append(ref)
    for category in sorted(by_category):
        refs = by_category[category]
        order = list(range(len(refs)))
        rng.shuffle(order)
        heldout = set(order[: round(len(refs) * HELDOUT_SHARE)])
        for k, ref in enumerate(refs):
            ref["split"] = "calibrate" if k in heldout else "train"
    return references + [{"id": f"r{n:04d}", **ref} for n, ref in enumerate(fresh, start=len(references) + 1)]


def main() -> int:
    rng = random.Random(SEED)
    hand_tasks()
    hand_events()
    duplicates()
    fillers(rng)
    references = assign_ids_and_splits(rng)
    first = len(REFS)
    realistic()
    from bench import retrieval
    dated_references(retrieval.Meta(now=NOW, time_zone="Europe/Berlin", horizon_days=90))
    references = assign_new(references, first)
    for problem in check(references):
        print("check:", problem)
    (HERE / "meta.json").write_text(json.dumps(
        {"now": NOW.isoformat(), "time_zone": "Europe/Berlin", "horizon_days": 90,
         "heldout_share": HELDOUT_SHARE, "seed": SEED}, indent=2) + "\n", encoding="utf-8")
    with open(HERE / "items.jsonl", "w", encoding="utf-8") as out:
        for item in ITEMS:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    with open(HERE / "references.jsonl", "w", encoding="utf-8") as out:
        for ref in references:
            out.write(json.dumps(ref, ensure_ascii=False) + "\n")
    kinds = Counter(i["kind"] for i in ITEMS)
    cats = Counter(r["category"] for r in references)
    splits = Counter((r["category"], r["split"]) for r in references)
    print(f"{len(ITEMS)} items {dict(kinds)}; {len(references)} references")
    for cat in sorted(cats):
        print(f"  {cat:20} {cats[cat]:3}  heldout {splits[(cat, 'calibrate')]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
