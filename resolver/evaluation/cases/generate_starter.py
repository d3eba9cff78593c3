"""Generate starter.jsonl, the labelled starter set for `reference_match.v1`.

Run it from anywhere; it rewrites starter.jsonl next to this file:

    python generate_starter.py          # write the file
    python generate_starter.py --check  # exit 1 if the file differs from what would be written

Everything is built from the hand-written items below and one seeded RNG, so
the output is the same on every run. The items are fictional.

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
OUTPUT = Path(__file__).resolve().with_name("starter.jsonl")
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


SEEDS: list[Seed] = []


def _as_tuple(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _add(
    kind: str,
    domain: str,
    collection: str,
    title: str,
    *,
    para: str | Sequence[str] | None = None,
    part: str | Sequence[str] | None = None,
    abbr: str | Sequence[str] | None = None,
    foreign: str | Sequence[str] | None = None,
    concept: str = "",
    foreign_title: bool = False,
    numbers: bool = False,
) -> None:
    # In an item with a foreign title, a paraphrase is written in English (so it
    # crosses languages) and a partial reference keeps the title's language.
    refs = (
        *(Ref(text, ("paraphrase",)) for text in _as_tuple(para)),
        *(Ref(text, ("partial",), foreign=foreign_title) for text in _as_tuple(part)),
        *(Ref(text, ("abbreviation",)) for text in _as_tuple(abbr)),
        *(Ref(text, ("paraphrase",), foreign=True) for text in _as_tuple(foreign)),
    )
    SEEDS.append(
        Seed(
            kind=kind,
            domain=domain,
            collection=collection,
            title=title,
            refs=refs,
            concept=concept or title,
            foreign_title=foreign_title,
            numbers=numbers,
        )
    )


def task(domain: str, collection: str, title: str, **kwargs: object) -> None:
    _add("task", domain, collection, title, **kwargs)  # type: ignore[arg-type]


def event(domain: str, collection: str, title: str, **kwargs: object) -> None:
    _add("event", domain, collection, title, **kwargs)  # type: ignore[arg-type]


def family(
    kind: str,
    domain: str,
    collection: str,
    key: str,
    members: Sequence[tuple[str, Sequence[str], str] | tuple[str, Sequence[str]]],
    *,
    concept: str = "",
    numbers: bool = False,
    foreign_title: bool = False,
    abbreviated: Sequence[str] = (),
) -> None:
    """Near duplicates: titles that differ by one word, date or number.

    Each member's references name what sets it apart from its siblings.
    `abbreviated` lists references that use an abbreviation.
    """
    for member in members:
        title, texts = member[0], member[1]
        when = member[2] if len(member) == 3 else ""  # type: ignore[misc]
        refs = tuple(
            Ref(
                text,
                ("near_duplicate", *(("abbreviation",) if text in abbreviated else ())),
                foreign=foreign_title and not text.isascii(),
            )
            for text in texts
        )
        SEEDS.append(
            Seed(
                kind=kind,
                domain=domain,
                collection=collection,
                title=title,
                refs=refs,
                concept=concept or key,
                family=key,
                foreign_title=foreign_title,
                numbers=numbers,
                when=when,
            )
        )


# --- Tasks -----------------------------------------------------------------

task("home", "household", "Fix the dripping kitchen tap", para="sort out the leaky faucet in the kitchen",
     part="kitchen tap", concept="plumbing")
task("home", "household", "Replace smoke alarm batteries", para="new batteries for the smoke detector",
     part="smoke alarm")
task("home", "household", "Clean out the gutters", para="clear the leaves from the roof drains", part="gutters")
task("home", "household", "Descale the kettle", para="get the limescale out of the kettle", part="kettle")
task("home", "household", "Book chimney sweep", para="get someone in to sweep the chimney", part="chimney")
task("home", "household", "Defrost the freezer", para="thaw the freezer and wipe it out", part="freezer")
task("home", "household", "Hang the hallway mirror", para="put the mirror up in the hall", part="hallway mirror")
task("home", "household", "Take old paint tins to the recycling centre", para="drop the leftover paint at the tip",
     part="paint tins")
task("home", "household", "Bleed the radiators", para="let the air out of the heaters", part="radiators")
task("home", "household", "Order new bed slats", para="buy replacement slats for the bed frame", part="bed slats")
task("home", "household", "Call the landlord about the boiler", para="ring the landlord re heating",
     part="boiler", concept="boiler")
task("home", "household", "Change the vacuum cleaner filter", para="new filter for the hoover", part="vacuum filter")
task("home", "household", "Wash the curtains", para="put the drapes through the wash", part="curtains")
task("finance", "personal", "Cancel the gym membership", para="stop paying for the gym", part="gym membership")
task("finance", "personal", "Transfer money to savings account", para="move cash into savings", part="savings")
task("finance", "personal", "Check credit card statement", para="go through the card statement",
     part="credit card", abbr="check CC statement")
task("finance", "household", "Set up standing order for rent", para="create a recurring payment for the rent",
     part="standing order", concept="rent")
task("finance", "personal", "Update pension contributions", para="change how much goes into my pension",
     part="pension")
task("finance", "household", "Compare home broadband deals", para="look for a cheaper internet provider",
     part="broadband deals")
task("health", "personal", "Book dentist check-up", para="make a dental appointment", part="dentist",
     abbr="dentist appt", foreign="Zahnarzttermin ausmachen", concept="dentist")
task("health", "personal", "Pick up prescription from pharmacy", para="collect my meds from the chemist",
     part="prescription", abbr="pick up Rx")
task("health", "personal", "Order contact lenses", para="reorder my lenses", part="contact lenses")
task("health", "personal", "Get flu jab", para="get vaccinated against the flu", part="flu jab")
task("health", "personal", "Schedule blood test", para="arrange to have bloods taken", part="blood test")
task("health", "personal", "Book physio for knee", para="physiotherapy appointment for my knee", part="physio")
task("health", "personal", "Book eye test", para="get my eyes checked at the optician", part="eye test",
     concept="eye_doctor")
task("health", "personal", "Book MRI scan for shoulder", para="arrange the shoulder scan", part="MRI",
     abbr="book magnetic resonance imaging for shoulder")
task("car", "personal", "Take car for MOT", para="get the car its annual inspection", part="MOT")
task("car", "personal", "Top up windscreen washer fluid", para="refill the screen wash", part="washer fluid")
task("car", "personal", "Swap to winter tyres", para="change over to the snow tires", part="winter tyres")
task("car", "personal", "Pay parking fine", para="settle the parking ticket", part="parking fine")
task("car", "personal", "Vacuum the car interior", para="clean inside the car", part="car interior")
task("car", "personal", "Renew car insurance", para="sort out the motor insurance renewal", part="car insurance")
task("admin", "personal", "Renew passport", para="apply for a new passport", part="passport",
     foreign="renouveler mon passeport")
task("admin", "personal", "Register to vote at new address", para="get on the electoral roll",
     part="register to vote")
task("admin", "errands", "Return library books", para="bring the books back to the library", part="library books")
task("admin", "personal", "Update address with the bank", para="tell the bank we moved", part="address change")
task("admin", "errands", "Send back the broken headphones", para="return the faulty headphones", part="headphones")
task("admin", "personal", "Renew driving licence photo", para="get a new photo on my driver's licence",
     part="driving licence")
task("admin", "personal", "Shred old paperwork", para="destroy the old documents", part="paperwork")
task("admin", "personal", "Renew European Health Insurance Card", para="get a new EU health card",
     part="health insurance card", abbr="renew EHIC")
task("shopping", "errands", "Buy a birthday present for Jonas", para="get Jonas something for his birthday",
     part="present for Jonas", abbr="bday present Jonas")
task("shopping", "errands", "Order printer ink", para="buy new cartridges for the printer", part="printer ink")
task("shopping", "errands", "Buy new running shoes", para="get some new trainers for running", part="running shoes")
task("shopping", "errands", "Get a replacement phone charger", para="buy another charging cable", part="charger",
     concept="plugs")
task("shopping", "errands", "Pick up dry cleaning", para="collect the suit from the cleaners", part="dry cleaning")
task("shopping", "errands", "Buy light bulbs for the lounge", para="get new bulbs for the living room",
     part="light bulbs")
task("kids", "family", "Order a new school backpack for Mia", para="get Mia a new rucksack for school",
     part="backpack")
task("kids", "family", "Sign Mia's permission slip", para="fill in the school trip form for Mia",
     part="permission slip")
task("kids", "family", "Pay for Leo's swimming lessons", para="swimming course fee for Leo", part="swimming lessons")
task("kids", "family", "Label the kids' school uniforms", para="put name tags in the school clothes",
     part="uniforms")
task("kids", "family", "Book a babysitter for Saturday", para="find someone to watch the kids on Saturday",
     part="babysitter", abbr="sitter for Sat")
task("kids", "family", "Buy craft supplies for the school project", para="get glue and card for the project",
     part="craft supplies")
task("garden", "household", "Mow the lawn", para="cut the grass", part="lawn", foreign="Rasen mähen")
task("garden", "household", "Repot the monstera", para="move the big plant into a bigger pot", part="monstera",
     concept="soil")
task("garden", "household", "Plant tulip bulbs", para="put the tulips in the ground", part="tulips")
task("garden", "household", "Fix the garden gate latch", para="repair the catch on the gate", part="gate latch")
task("garden", "household", "Order compost", para="buy soil improver for the beds", part="compost", concept="soil")
task("pets", "personal", "Book vet appointment for Luna", para="take Luna to the vet", part="vet",
     abbr="vet appt Luna")
task("pets", "errands", "Buy cat food", para="get food for the cat", part="cat food",
     foreign="comprar comida para el gato")
task("pets", "personal", "Give the dog his worming tablet", para="deworm the dog", part="worming tablet")
task("pets", "personal", "Renew pet insurance", para="sort out cover for the animals", part="pet insurance")
task("eng", "work", "Review pull request for login refactor", para="look at the login refactor changes",
     part="login refactor", abbr="review PR for login refactor")
task("eng", "work", "Write migration for the orders table", para="add a schema change for orders",
     part="orders migration")
task("eng", "work", "Fix flaky checkout test", para="stabilise the checkout test that keeps failing",
     part="flaky test")
task("eng", "work", "Update API documentation", para="bring the interface docs up to date",
     part="API documentation", abbr="update API docs")
task("eng", "work", "Rotate the staging database password", para="change the staging credentials",
     part="staging password", abbr="rotate staging DB pw")
task("eng", "work", "Set up error alerts for the payment service", para="configure alerting on payments",
     part="error alerts")
task("eng", "work", "Write postmortem for Tuesday's outage", para="incident write-up for the outage",
     part="postmortem")
task("eng", "work", "Clean up unused feature flags", para="remove old feature toggles", part="feature flags")
task("eng", "work", "Prepare demo for the sprint review", para="get the demo ready for sprint review", part="demo")
task("eng", "work", "Answer the security questionnaire from Acme", para="fill in Acme's security survey",
     part="security questionnaire")
task("eng", "work", "Add pagination to the search endpoint", para="page the search API results",
     part="pagination")
task("eng", "work", "Write ADR for the caching layer", para="document the caching decision", part="caching",
     abbr="write architecture decision record for caching")
task("eng", "work", "Set up VPN on the new laptop", para="get remote access working on the new computer",
     part="VPN", abbr="set up virtual private network on laptop")
task("eng", "work", "Renew the SSL certificate for the blog", para="the blog's https certificate needs renewing",
     part="SSL certificate", abbr="renew SSL cert blog")
task("office", "work", "Submit timesheet", para="log my hours for the week", part="timesheet")
task("office", "work", "Send slides to Priya", para="email Priya the deck", part="Priya", concept="slides")
task("office", "work", "Approve holiday requests", para="sign off the team's leave requests",
     part="holiday requests")
task("office", "work", "Write performance review for Tom", para="do Tom's appraisal", part="performance review",
     abbr="perf review for Tom")
task("office", "work", "Renew the team's software licences", para="extend the software subscriptions",
     part="licences")
task("office", "work", "Prepare quarterly budget forecast", para="draft the budget projections for the quarter",
     part="budget forecast")
task("office", "work", "Reply to the recruiter", para="get back to the headhunter", part="recruiter", concept="job")
task("office", "personal", "Update my CV", para="refresh my résumé", part="CV", concept="job")
task("office", "work", "Order business cards", para="get new name cards printed", part="business cards")
task("office", "work", "Onboarding checklist for the new hire", para="get things ready for the new starter",
     part="onboarding")
task("office", "work", "Claim travel expenses for Berlin trip", para="submit the Berlin expense claim",
     part="travel expenses", abbr="Berlin trip exp claim", concept="expenses")
task("office", "work", "Follow up with Acme about the contract", para="chase Acme on the contract",
     part="Acme contract", abbr="f/u Acme contract")
task("office", "work", "Prepare slides for the all-hands meeting", para="make the deck for the company meeting",
     part="all-hands slides", abbr="prep slides for all hands mtg", concept="slides")
task("office", "work", "Ask HR about parental leave", para="check with the people team about paternity leave",
     part="parental leave", abbr="ask human resources about parental leave")
task("office", "work", "Finish the OKR draft", para="complete the goals draft for next quarter", part="OKR",
     abbr="finish the objectives and key results draft")
task("office", "work", "Send NDA to the freelancer", para="get the freelancer to sign the confidentiality agreement",
     part="NDA", abbr="send non-disclosure agreement to freelancer")
task("office", "work", "Update the FAQ page", para="refresh the questions page on the website", part="FAQ",
     abbr="update the frequently asked questions page")
task("office", "work", "Reply to Dr. Müller's email", para="answer the email from Dr Müller", part="Müller",
     abbr="reply to Doctor Müller")
task("office", "work", "Check the P&L for March", para="look over March's income figures", part="P&L",
     abbr="check profit and loss March")
task("office", "work", "Send the SOW to Globex", para="share the scope document with Globex", part="Globex",
     abbr="send statement of work to Globex")
task("study", "personal", "Finish chapter summary for statistics course", para="write up the stats notes",
     part="statistics", abbr="stats chapter summary")
task("study", "personal", "Practise Spanish vocabulary", para="learn Spanish words", part="Spanish",
     abbr="Spanish vocab")
task("study", "personal", "Register for the evening pottery class", para="sign up for ceramics at night",
     part="pottery")
task("study", "personal", "Read the book club novel", para="finish the novel for book club", part="book club")
task("social", "personal", "Write thank-you card to Aunt Rosa", para="send Aunt Rosa a thank you note",
     part="Aunt Rosa")
task("social", "personal", "Reply to Emma's wedding invitation", para="answer the invite to Emma's wedding",
     part="wedding invitation", abbr="RSVP Emma's wedding")
task("social", "family", "Call grandma", para="ring Nana", part="grandma", foreign="llamar a la abuela")
task("social", "personal", "Return Ben's drill", para="give Ben his drill back", part="drill")
task("travel", "personal", "Book train tickets to Edinburgh", para="get rail tickets for Edinburgh",
     part="Edinburgh", abbr="train tix Edinburgh")
task("travel", "personal", "Apply for the ESTA visa waiver", para="get the US entry permit sorted", part="ESTA")
task("travel", "personal", "Buy travel adapter", para="get a plug converter for the trip", part="adapter",
     concept="plugs")
task("travel", "personal", "Check in online for the Madrid flight", para="do the web check-in for Madrid",
     part="online check-in")
task("travel", "personal", "Book airport parking", para="reserve a parking space at the airport",
     part="airport parking")
task("travel", "personal", "Pack for the camping trip", para="get the tent and sleeping bags ready", part="camping")
task("kids", "family", "Email the PTA about the bake sale",
     para="write to the school parents' group about the cake sale", part="bake sale",
     abbr="email parent-teacher association re bake sale")

# Tasks whose titles carry numbers that a model could take for candidate numbers.
task("garden", "household", "Buy 3 bags of potting soil", para="get three bags of soil", part="potting soil",
     concept="soil", numbers=True)
task("office", "work", "Order 2 new office chairs", para="get two more desk chairs", part="office chairs", numbers=True)
task("study", "personal", "Read pages 40–60 for the seminar", para="do the seminar reading", part="pages 40-60",
     numbers=True)
task("admin", "personal", "Call the 0800 number about the refund", para="phone the hotline about my refund",
     part="refund", numbers=True)
task("admin", "errands", "Top up 5 euros on the transit card", para="add money to my bus pass", part="transit card",
     numbers=True)
task("home", "household", "Set the thermostat to 19 °C at night", para="lower the heating overnight",
     part="thermostat", numbers=True)
task("admin", "personal", "Print 4 copies of the lease", para="print the rental contract copies",
     part="copies of the lease", numbers=True)
task("shopping", "errands", "Return parcel no. 7 (shoes)", para="send the shoes back", part="parcel 7", numbers=True)
task("office", "work", "Answer 12 unread support tickets", para="work through the support queue",
     part="support tickets", numbers=True)
task("social", "personal", "Book 2 seats for the 7:30 film", para="get cinema seats for the 7:30 showing",
     part="7:30 film", numbers=True)
task("eng", "work", "Upgrade Django to 5.2", para="bump Django to the 5.2 release", part="Django 5.2", numbers=True)
task("social", "family", "Plan surprise party for Dad's 60th", para="organise Dad's surprise birthday",
     part="Dad's 60th", abbr="Dad's 60th bday party", numbers=True)

# Tasks with titles in other languages.
task("home", "household", "Fahrrad zur Inspektion bringen", para="take the bike in for a service",
     part="Fahrrad Inspektion", concept="bike", foreign_title=True)
task("home", "household", "Müll rausbringen", para="take the bins out", part="Müll", foreign_title=True)
task("shopping", "family", "Geschenk für Oma besorgen", para="get a present for granny", part="Geschenk Oma",
     foreign_title=True)
task("finance", "household", "Nebenkostenabrechnung prüfen", para="check the service charge statement",
     part="Nebenkosten", concept="utility_bill", foreign_title=True)
task("health", "personal", "Prendre rendez-vous chez l'ophtalmo", para="eye doctor appointment",
     part="ophtalmo", concept="eye_doctor", foreign_title=True)
task("shopping", "errands", "Acheter du pain pour le pique-nique", para="bread for the picnic",
     part="pique-nique", concept="groceries", foreign_title=True)
task("office", "personal", "Envoyer le dossier de candidature", para="send off the application file",
     part="dossier de candidature", concept="job", foreign_title=True)
task("home", "household", "Réparer la fuite sous l'évier", para="fix the leak under the sink", part="fuite évier",
     concept="plumbing", foreign_title=True)
task("admin", "personal", "Renovar el DNI", para="renew my Spanish ID card", part="DNI", foreign_title=True)
task("shopping", "family", "Comprar regalo para el cumpleaños de Lucía", para="Lucía's birthday present",
     part="regalo Lucía", foreign_title=True)
task("home", "household", "Llamar al fontanero", para="call the plumber", part="fontanero", concept="plumbing",
     foreign_title=True)
task("health", "personal", "歯医者の予約", para="book the dentist", part="歯医者", concept="dentist",
     foreign_title=True)
task("shopping", "errands", "牛乳を買う", para="buy milk", part="牛乳", concept="groceries", foreign_title=True)
task("study", "personal", "英語のレポートを提出する", para="hand in the English report", part="英語のレポート",
     foreign_title=True)
task("finance", "household", "Pagare la bolletta del gas", para="pay the gas bill", part="bolletta del gas",
     concept="utility_bill", foreign_title=True)
task("home", "household", "Fiets repareren", para="fix my bike", part="fiets", concept="bike", foreign_title=True)
task("kids", "family", "Pagar a mensalidade da escola de música", para="pay the music school fee",
     part="escola de música", foreign_title=True)

# Near-duplicate tasks.
family("task", "finance", "household", "rent", [
    ("Pay rent – May", ["May's rent"], "2025-05-01"),
    ("Pay rent – June", ["June rent"], "2025-06-01"),
    ("Pay rent – July", ["rent for July"], "2025-07-01"),
], concept="rent")
family("task", "family", "family", "call_parents", [
    ("Call mum", ["ring my mother"]),
    ("Call dad", ["phone dad"]),
])
family("task", "office", "work", "acme_invoices", [
    ("Invoice #2025-03 to Acme", ["Acme invoice 2025-03"], "2025-03-31"),
    ("Invoice #2025-04 to Acme", ["invoice number 2025-04 for Acme"], "2025-04-30"),
], numbers=True)
family("task", "study", "work", "chapters", [
    ("Review chapter 3 draft", ["chapter 3 draft"]),
    ("Review chapter 5 draft", ["the chapter five draft"]),
    ("Review chapter 7 draft", ["ch. 7 draft"]),
], numbers=True, abbreviated=["ch. 7 draft"])
family("task", "shopping", "family", "kid_gifts", [
    ("Buy birthday gift for Mia", ["Mia's birthday present"]),
    ("Buy birthday gift for Leo", ["present for Leo"]),
])
family("task", "office", "work", "workshop_slides", [
    ("Prepare slides – Monday workshop", ["slides for Monday's workshop"]),
    ("Prepare slides – Friday workshop", ["Friday workshop deck"]),
], concept="slides")
family("task", "travel", "personal", "rome", [
    ("Book flights for Rome", ["flights to Rome"]),
    ("Book hotel for Rome", ["Rome hotel"]),
])
family("task", "eng", "work", "domains", [
    ("Renew domain lindqvist.dev", ["the .dev domain"]),
    ("Renew domain lindqvist.io", ["renew the .io domain"]),
])
family("task", "office", "work", "expense_reports", [
    ("Expense report – January", ["January expenses"], "2025-03-07"),
    ("Expense report – February", ["February expense report"], "2025-03-14"),
    ("Expense report – March", ["expenses for March"], "2025-04-04"),
], concept="expenses")
family("task", "garden", "household", "watering", [
    ("Water the front garden", ["water the front"]),
    ("Water the back garden", ["back garden watering"]),
])
family("task", "finance", "personal", "taxes", [
    ("Submit 2023 tax return", ["the 2023 tax return"], "2025-04-30"),
    ("Submit 2024 tax return", ["file taxes for 2024"], "2025-07-31"),
], numbers=True)
family("task", "shopping", "errands", "grocery_runs", [
    ("Grocery run – Lidl", ["Lidl shopping"]),
    ("Grocery run – Aldi", ["Aldi run"]),
    ("Grocery run – farmers' market", ["shopping at the farmers' market"]),
], concept="groceries")
family("task", "eng", "work", "bugs", [
    ("Fix bug #482 (login timeout)", ["the login timeout bug"]),
    ("Fix bug #428 (search crash)", ["bug 428"]),
    ("Fix bug #824 (export encoding)", ["export encoding bug"]),
], numbers=True)
family("task", "finance", "household", "utilities", [
    ("Pay the electricity bill", ["settle the power bill", "pay elec bill"]),
    ("Pay the gas bill", ["gas bill"]),
    ("Pay the water bill", ["water bill payment"]),
], concept="utility_bill", abbreviated=["pay elec bill"])
family("task", "office", "work", "weber_keller", [
    ("Rechnung an Firma Weber schicken", ["invoice for Weber", "Rechnung Weber"]),
    ("Rechnung an Firma Keller schicken", ["Keller invoice", "Rechnung an Keller"]),
], foreign_title=True)
family("task", "office", "work", "tanaka_sato", [
    ("資料を送る – 田中さん", ["send the documents to Tanaka", "田中さんの資料"]),
    ("資料を送る – 佐藤さん", ["documents for Sato", "佐藤さんに資料"]),
], foreign_title=True)

# --- Events ----------------------------------------------------------------

event("health", "personal", "Dentist appointment with Dr. Okafor", para="my dental check", part="Dr. Okafor",
      abbr="dentist appt Okafor", foreign="Zahnarzt bei Dr. Okafor", concept="dentist")
event("personal", "personal", "Haircut at Salon Verde", para="getting my hair cut", part="Salon Verde",
      foreign="peluquería")
event("kids", "family", "Parent–teacher conference for Mia", para="meeting with Mia's teacher",
      part="parent-teacher conference", concept="parents_evening")
event("fitness", "personal", "Vinyasa yoga at the community hall", para="my yoga session", part="vinyasa",
      concept="yoga")
event("social", "personal", "Dinner with Sofia and Marco", para="eating out with Sofia and Marco", part="Sofia",
      concept="dinner_out")
event("meetings", "work", "Quarterly business review with Initech", para="Initech quarterly review",
      part="Initech", abbr="QBR with Initech")
event("meetings", "work", "Sprint planning", para="planning session for the next sprint", part="planning")
event("meetings", "work", "Product demo for Umbrella Corp", para="showing the product to Umbrella",
      part="Umbrella demo")
event("meetings", "work", "Job interview at Northwind", para="my interview with Northwind", part="Northwind")
event("kids", "family", "Mia's piano recital", para="Mia's piano performance", part="recital")
event("social", "personal", "Book club at Hannah's", para="book group meeting", part="book club")
event("social", "work", "Team lunch at the Thai place", para="eating Thai with the team", part="team lunch",
      concept="team_meal")
event("car", "personal", "Car service at the garage", para="car going in for servicing", part="car service")
event("culture", "personal", "Concert: Arctic Monkeys", para="the Arctic Monkeys gig", part="Arctic Monkeys")
event("culture", "personal", "Theatre – Hamlet", para="seeing Hamlet at the theatre", part="Hamlet")
event("meetings", "work", "Architecture review board", para="the architecture review meeting",
      part="architecture review", abbr="ARB")
event("meetings", "work", "All-hands meeting", para="company-wide meeting", part="all-hands",
      abbr="all hands mtg")
event("meetings", "work", "1:1 with Sam", para="my catch-up with Sam", part="Sam", abbr="one-on-one with Sam")
event("meetings", "work", "Coffee with Jana (mentoring)", para="mentoring chat with Jana", part="Jana")
event("social", "personal", "Wedding: Emma & Luis", para="Emma and Luis getting married", part="Emma & Luis")
event("kids", "family", "Swimming lesson (Leo)", para="Leo's swim class", part="swimming lesson")
event("social", "family", "Visit to Grandma and Grandpa", para="going to see the grandparents",
      part="Grandma and Grandpa")
event("home", "household", "Boiler service visit", para="engineer coming to service the heating",
      part="boiler service", concept="boiler")
event("home", "household", "Broadband installation window", para="internet engineer visit",
      part="broadband installation")
event("fitness", "personal", "Marathon training long run", para="long run for marathon prep", part="long run",
      concept="running")
event("fitness", "personal", "Tennis doubles with Rui", para="playing tennis with Rui", part="tennis")
event("meetings", "work", "Conference talk rehearsal", para="practice run of my conference talk", part="rehearsal")
event("meetings", "work", "Board meeting", para="meeting with the board of directors", part="board")
event("meetings", "work", "Security audit kickoff", para="start of the security audit", part="security audit")
event("meetings", "work", "Customer advisory council", para="advisory council with customers",
      part="advisory council")
event("meetings", "work", "Lunch & learn: GraphQL basics", para="the GraphQL lunch talk", part="GraphQL")
event("kids", "family", "Open day at Riverside Primary", para="school open house at Riverside", part="open day",
      concept="parents_evening")
event("social", "personal", "Farmers' market stall", para="selling at the farmers market", part="market stall")
event("social", "personal", "Volunteer shift at the food bank", para="helping out at the food bank",
      part="food bank", foreign="banque alimentaire")
event("admin", "personal", "Citizenship ceremony", para="naturalisation ceremony", part="citizenship")
event("finance", "personal", "Mortgage advisor call", para="call with the mortgage broker", part="mortgage")
event("home", "personal", "Apartment viewing – Elm Street", para="flat viewing on Elm Street", part="Elm Street",
      concept="flat_visit")
event("health", "personal", "Annual physical with Dr. Patel", para="yearly check-up with Dr Patel",
      part="Dr. Patel", concept="annual_physical")
event("pets", "personal", "Vet – Luna's vaccinations", para="taking Luna for her jabs", part="Luna")
event("social", "personal", "Birthday drinks for Chloe", para="celebrating Chloe's birthday", part="Chloe",
      abbr="Chloe bday drinks")
event("admin", "personal", "Town hall meeting on the new bike lanes", para="council meeting about cycle lanes",
      part="bike lanes")
event("meetings", "work", "Design critique", para="feedback session on the designs", part="critique",
      abbr="design crit")
event("meetings", "work", "Hackathon kickoff", para="start of the hackathon", part="hackathon")
event("meetings", "work", "Photo shoot for the new website", para="website photography session", part="photo shoot")
event("kids", "family", "Pick up Mia from ballet", para="collect Mia after ballet", part="ballet")
event("social", "personal", "Neighbourhood barbecue", para="cookout with the neighbours", part="barbecue",
      abbr="neighbourhood BBQ")
event("admin", "personal", "Passport appointment at the consulate", para="consulate visit for my passport",
      part="consulate")
event("culture", "personal", "Cooking class: fresh pasta", para="pasta making course", part="cooking class")
event("home", "family", "Moving day", para="the day we move house", part="the move", foreign="Umzug")
event("health", "personal", "Physiotherapy – knee", para="knee rehab appointment", part="physiotherapy",
      abbr="physio knee")
event("meetings", "work", "Investor update call", para="call with the investors", part="investor update")
event("social", "work", "Escape room with the team", para="team escape room outing", part="escape room")
event("personal", "personal", "Driving lesson", para="lesson with the driving instructor", part="driving")
event("health", "personal", "Flu vaccination clinic", para="getting my flu shot", part="flu vaccination")
event("meetings", "work", "Webinar: Kubernetes cost control", para="online talk on cutting Kubernetes spend",
      part="Kubernetes", abbr="k8s cost webinar")
event("home", "personal", "Lease renewal meeting with the agent", para="talk to the agent about extending the tenancy",
      part="lease renewal")
event("travel", "personal", "Ski trip departure", para="leaving for the ski holiday", part="ski trip",
      concept="departure")
event("culture", "personal", "Wine tasting at Bodega Sur", para="the wine evening", part="Bodega Sur")
event("health", "personal", "Allergy clinic appointment", para="seeing the allergist", part="allergy clinic")
event("meetings", "work", "Open source meetup", para="community meetup for open source", part="meetup",
      abbr="OSS meetup")
event("meetings", "work", "Steering committee", para="steering group meeting", part="steering",
      abbr="SteerCo")
event("meetings", "work", "Go-live for the billing system", para="billing launch", part="go-live")
event("meetings", "work", "Handover with Marta before her leave", para="Marta's handover", part="handover")
event("kids", "family", "Museum trip with the kids", para="taking the children to the museum", part="museum")
event("home", "household", "Garden centre delivery", para="plants being delivered", part="garden centre")
event("social", "personal", "Sushi night with Kenji", para="dinner with Kenji", part="Kenji", concept="dinner_out")

# Events whose titles carry numbers.
event("travel", "personal", "Flight LH 1234 to Munich", para="my Munich flight", part="LH 1234",
      concept="departure", numbers=True)
event("fitness", "personal", "Charity 10k run", para="the charity race", part="10k", concept="running",
      numbers=True)
event("travel", "personal", "Platform 3 train to Leeds", para="the Leeds train", part="train to Leeds",
      numbers=True)
event("social", "personal", "Table for 6 at Trattoria Sole", para="our booking at the trattoria",
      part="Trattoria Sole", concept="dinner_out", numbers=True)
event("fitness", "personal", "Pilates (class 2 of 8)", para="pilates session", part="pilates", numbers=True)
event("personal", "personal", "Level 1 first aid course", para="first aid training", part="first aid",
      numbers=True)
event("home", "personal", "Apartment 5B inspection", para="inspection of flat 5B", part="5B", concept="flat_visit",
      numbers=True)
event("meetings", "work", "Facilities meeting in room 2.14", para="meeting with facilities", part="room 2.14",
      numbers=True)
event("admin", "personal", "Parking permit pickup at counter 4", para="collect the parking permit",
      part="parking permit", numbers=True)
event("culture", "personal", "Book fair – hall 3, stand 11", para="visiting the book fair", part="stand 11",
      numbers=True)

# Events with titles in other languages.
event("kids", "family", "Elternabend in der Kita", para="parents' evening at nursery", part="Elternabend",
      concept="parents_evening", foreign_title=True)
event("social", "work", "Weihnachtsfeier der Firma", para="the company Christmas party", part="Weihnachtsfeier",
      concept="team_meal", foreign_title=True)
event("social", "personal", "Dîner chez les Dupont", para="dinner at the Duponts'", part="Dupont",
      foreign_title=True)
event("admin", "personal", "Cita con la abogada", para="appointment with my lawyer", part="abogada",
      concept="anna_calls", foreign_title=True)
event("culture", "personal", "Clase de cerámica", para="ceramics class", part="cerámica", foreign_title=True)
event("social", "personal", "花見（上野公園）", para="cherry blossom viewing in Ueno park", part="花見",
      foreign_title=True)
event("health", "personal", "健康診断", para="health check-up", part="健診", concept="annual_physical",
      foreign_title=True)
event("social", "work", "Cena con i colleghi", para="dinner with colleagues", part="colleghi", concept="team_meal",
      foreign_title=True)
event("admin", "personal", "Termin beim Bürgeramt", para="appointment at the registration office", part="Bürgeramt",
      foreign_title=True)
event("fitness", "personal", "Cours de yoga prénatal", para="prenatal yoga class", part="yoga prénatal",
      concept="yoga", foreign_title=True)
event("social", "work", "팀 회식", para="team dinner", part="회식", concept="team_meal", foreign_title=True)
event("kids", "family", "家长会", para="parent meeting at school", part="开家长会", concept="parents_evening",
      foreign_title=True)

# Near-duplicate events.
family("event", "meetings", "work", "weekly_sync", [
    ("Weekly sync – design", ["design weekly sync", "the weekly with design"]),
    ("Weekly sync – platform", ["platform sync"]),
    ("Weekly sync – data", ["weekly sync with the data team"]),
    ("Weekly sync – mobile", ["mobile weekly"]),
], concept="weekly_sync")
family("event", "meetings", "work", "standups", [
    ("Standup – Team Atlas", ["Atlas standup"]),
    ("Standup – Team Boreal", ["Boreal stand-up"]),
    ("Standup – Team Cirrus", ["daily standup for Cirrus"]),
])
family("event", "meetings", "work", "retros", [
    ("Retro – Sprint 41", ["sprint 41 retro"], "2025-03-14T15:00:00+01:00"),
    ("Retro – Sprint 42", ["retrospective for sprint 42"], "2025-03-28T15:00:00+01:00"),
    ("Retro – Sprint 43", ["the sprint 43 retro"], "2025-04-11T15:00:00+02:00"),
], numbers=True)
family("event", "social", "family", "parents_dinner", [
    ("Dinner at Mum's", ["dinner at my mother's"]),
    ("Dinner at Dad's", ["dinner at dad's place"]),
])
family("event", "meetings", "work", "interviews", [
    ("Interview – backend candidate", ["backend interview"]),
    ("Interview – frontend candidate", ["interview for the frontend role"]),
    ("Interview – data engineer candidate", ["data engineer interview"]),
])
family("event", "kids", "family", "leo_football", [
    ("Leo's football training", ["Leo's training"]),
    ("Leo's football match", ["Leo's match"]),
])
family("event", "meetings", "work", "offsite", [
    ("Team offsite – day 1", ["first day of the offsite"], "2025-05-14T09:00:00+02:00"),
    ("Team offsite – day 2", ["offsite day two"], "2025-05-15T09:00:00+02:00"),
], numbers=True)
family("event", "travel", "personal", "lisbon", [
    ("Flight to Lisbon", ["outbound flight to Lisbon"], "2025-05-10T07:40:00+02:00"),
    ("Flight back from Lisbon", ["return flight from Lisbon"], "2025-05-17T18:15:00+02:00"),
], concept="departure")
family("event", "meetings", "work", "budget_reviews", [
    ("Budget review – marketing", ["marketing budget review"]),
    ("Budget review – sales", ["sales budget meeting"]),
    ("Budget review – engineering", ["engineering budget review"]),
])
family("event", "kids", "family", "piano_lessons", [
    ("Piano lesson (Mia)", ["Mia's piano lesson"]),
    ("Piano lesson (Leo)", ["Leo's piano"]),
])
family("event", "culture", "personal", "lectures", [
    ("Guest lecture: climate policy", ["the climate policy lecture"]),
    ("Guest lecture: energy policy", ["energy policy talk"]),
])
family("event", "meetings", "work", "quarter_planning", [
    ("Q3 planning", ["planning for the third quarter"], "2025-06-16T10:00:00+02:00"),
    ("Q4 planning", ["Q4 planning session"], "2025-09-15T10:00:00+02:00"),
], numbers=True)
family("event", "meetings", "work", "anna_calls", [
    ("Call with Anna (lawyer)", ["call with my lawyer Anna"]),
    ("Call with Anna (accountant)", ["accountant call with Anna"]),
], concept="anna_calls")
family("event", "meetings", "work", "workshop_rooms", [
    ("Workshop in room 12", ["the room 12 workshop"]),
    ("Workshop in room 14", ["workshop in 14"]),
    ("Workshop in room 21", ["room 21 workshop"]),
], numbers=True)
family("event", "meetings", "work", "point_hebdo", [
    ("Point hebdo – équipe produit", ["point hebdo produit", "weekly with the product team"]),
    ("Point hebdo – équipe ventes", ["weekly with the sales team", "point hebdo ventes"]),
], concept="weekly_sync", foreign_title=True)
family("event", "social", "family", "cumpleanos", [
    ("Cumpleaños de Lucía", ["Lucía's birthday party"]),
    ("Cumpleaños de Pablo", ["cumple de Pablo"]),
], foreign_title=True)


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
