"""Writes calendar b of the labelled retrieval set: meta.json and items.jsonl.

    .venv/bin/python bench/data/retrieval/b/generate.py

Calendar b is a second person's: Camille, a freelance graphic designer in
Lyon, with a partner (Julien), two children (Léa, 9, and Hugo, 6), a dog
(Biscuit), clients in Germany, Spain, France and the British Isles, a choir,
an allotment plot, a pottery class and a mother in Annecy. Most titles are
English; about a fifth are French, German or Spanish (the clients' languages
and the family's), as a bilingual person's calendar is.

Deterministic (seeded). The committed items.jsonl is the source of truth:
this script is how it was made, from the hand-written vocabularies and
templates below. Some tasks are done (`"status": "COMPLETED"`) and some events
called off (`"status": "CANCELLED"`): they are in the calendar, not live.
A few titles are exact duplicates on purpose (DUPLICATES) and some pairs are
near twins (SIMILAR_TASKS, SIMILAR_EVENTS). The references are written by
hand in references.jsonl, against these items; check.py checks them.

Reference clock: Tuesday 2027-03-02 08:30 in Europe/Paris; the horizon is 90
days (to 31 May). Europe changes to summer time on Sunday 28 March 2027.
"""
from __future__ import annotations

import json
import random
import re
import unicodedata
from collections import Counter
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

HERE = Path(__file__).resolve().parent
TZ = ZoneInfo("Europe/Paris")
NOW = datetime(2027, 3, 2, 8, 30, tzinfo=TZ)
HORIZON_DAYS = 90
SEED = 37
TODAY = NOW.date()

rng = random.Random(SEED)
ITEMS: list[dict] = []
_UIDS: Counter = Counter()
_TITLES: set[tuple[str, str]] = set()


def slug(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:40].strip("-")


def uid_for(kind: str, title: str) -> str:
    base = f"b{kind[0]}-{slug(title)}"
    _UIDS[base] += 1
    return base if _UIDS[base] == 1 else f"{base}-{_UIDS[base]}"


def wall(day: date, hhmm: str) -> datetime:
    h, m = (int(x) for x in hhmm.split(":"))
    return datetime.combine(day, time(h, m)).replace(tzinfo=TZ)


def _fresh(kind: str, title: str, allow_duplicate: bool) -> bool:
    key = (kind, title.casefold())
    if key in _TITLES and not allow_duplicate:
        return False
    _TITLES.add(key)
    return True


def task(collection: str, title: str, *, due: str | date | datetime | None = None, status: str | None = None,
         allow_duplicate: bool = False) -> str | None:
    if not _fresh("task", title, allow_duplicate):
        return None
    item = {"uid": uid_for("task", title), "collection": collection, "kind": "task", "title": title}
    if isinstance(due, datetime):
        item["due"] = due.isoformat()
    elif isinstance(due, date):
        item["due"] = due.isoformat()
    elif due:
        item["due"] = due
    if status:
        item["status"] = status
    ITEMS.append(item)
    return item["uid"]


def event(collection: str, title: str, start: datetime, minutes: int, *, rrule: str | None = None,
          status: str | None = None, allow_duplicate: bool = False, skip: int = 0, move: int = 0) -> str | None:
    """An event; a series skips `skip` of its future occurrences (EXDATE) and moves `move` of them."""
    if not _fresh("event", title, allow_duplicate):
        return None
    item: dict = {"uid": uid_for("event", title), "collection": collection, "kind": "event", "title": title,
                  "start": start.isoformat(), "end": (start + timedelta(minutes=minutes)).isoformat()}
    if rrule:
        item["rrule"] = rrule
        rule = rrulestr(rrule, dtstart=start.replace(tzinfo=None))
        lo = NOW.replace(tzinfo=None) + timedelta(days=2)
        hi = NOW.replace(tzinfo=None) + timedelta(days=HORIZON_DAYS - 5)
        future = [w.replace(tzinfo=TZ) for w in rule.between(lo, hi, inc=True)]
        picked = rng.sample(future, min(len(future) - 1, skip + move)) if len(future) > 2 else []
        picked.sort()
        if skip and picked[:skip]:
            item["exdate"] = [w.isoformat() for w in picked[:skip]]
        if move and picked[skip:]:
            overrides = []
            for w in picked[skip:]:
                shifted = w + timedelta(days=rng.choice([1, -1, 0]), minutes=rng.choice([30, 60, -60, 90]))
                overrides.append({"recurrence_id": w.isoformat(), "start": shifted.isoformat(),
                                  "end": (shifted + timedelta(minutes=minutes)).isoformat()})
            item["overrides"] = overrides
    if status:
        item["status"] = status
    ITEMS.append(item)
    return item["uid"]


def day(offset: int) -> date:
    return TODAY + timedelta(days=offset)


def some_due(overdue_share: float = 0.15, none_share: float = 0.4) -> date | None:
    """A due date as people set them: often none, some overdue, most in the next weeks."""
    roll = rng.random()
    if roll < none_share:
        return None
    if roll < none_share + overdue_share:
        return day(-rng.randint(1, 40))
    return day(rng.choice([0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 21, 25, 30, 40, 45, 60, 75]))


def future_slot(lo: int = 0, hi: int = HORIZON_DAYS - 2, hours=("09:00", "10:00", "11:00", "14:00",
                                                                   "15:30", "16:00", "17:00")) -> datetime:
    while True:
        d = day(rng.randint(lo, hi))
        if d.weekday() < 5 or rng.random() < 0.2:
            start = wall(d, rng.choice(hours))
            if start > NOW:
                return start


# People, places, clients ---------------------------------------------------------------------------

# (client, contact, language, project)
CLIENTS = [
    ("Kranich", "Jana", "de", "brand refresh"),
    ("Zeller Brauerei", "Markus", "de", "beer labels"),
    ("Nordlicht Verlag", "Anke", "de", "book covers"),
    ("Olivar", "Lucía", "es", "packaging"),
    ("Estudi Mar", "Jordi", "es", "website redesign"),
    ("Bodega Ruiz", "Carmen", "es", "wine labels"),
    ("Maison Vérand", "Sophie", "fr", "catalogue"),
    ("Librairie du Parc", "Hélène", "fr", "posters"),
    ("Théâtre Garance", "Mathieu", "fr", "season programme"),
    ("Kestrel Labs", "Owen", "en", "app onboarding"),
    ("Bluefin", "Siobhan", "en", "annual report"),
    ("Fromagerie Bouvier", "Paul", "fr", "shop signage"),
]

DELIVERABLES = ["moodboard", "logo sketches", "colour palette", "brand guidelines", "label mockups",
                "homepage wireframes", "icon set", "poster draft", "print proofs", "style tiles",
                "packaging dieline", "social media templates", "business cards", "cover roughs",
                "type specimen", "photo selection", "menu layout", "illustration brief", "banner set",
                "slide template"]
DE_DELIVERABLES = ["Etiketten", "Entwürfe", "Druckfreigabe", "Farbpalette", "Logo-Varianten", "Buchcover",
                   "Styleguide", "Korrekturabzug"]
ES_DELIVERABLES = ["las etiquetas", "los bocetos", "el catálogo", "la paleta de colores", "las pruebas de imprenta",
                   "el logotipo", "la web", "el embalaje"]
FR_DELIVERABLES = ["les maquettes", "le devis", "les épreuves", "la charte graphique", "le logo", "les affiches",
                   "le programme", "les étiquettes"]

EN_CLIENT_TASKS = [
    "Send {contact} the {d}", "Finish the {d} for {client}", "Revise the {client} {d}",
    "Export {d} for {client}", "Ask {contact} about the {d}", "Upload the {d} to {client}'s drive",
    "Present the {d} to {contact}", "Print {d} for {client}", "Check {contact}'s comments on the {d}",
    "Archive old {client} {d}",
]
EN_CLIENT_ONCE = [
    "Invoice {client} for the {project}", "Follow up with {contact} on the quote", "Chase {client} for payment",
    "Write the {project} case study", "Update the {client} timeline", "Renew the {client} contract",
    "Send {contact} the final files", "Thank-you card for {contact}",
]
DE_TASKS = ["{d} für {client} überarbeiten", "{contact} wegen {d} anrufen", "{d} an {client} schicken",
            "Feedback von {contact} zu {d} einarbeiten"]
DE_ONCE = ["Angebot für {client} überarbeiten", "Rechnung an {client} schicken", "Vertrag mit {client} prüfen"]
ES_TASKS = ["Enviar {d} a {client}", "Llamar a {contact} sobre {d}", "Revisar {d} de {client}",
            "Corregir {d} para {contact}"]
ES_ONCE = ["Mandar la factura a {client}", "Preparar el presupuesto para {client}", "Reunión con {contact}: preparar notas"]
FR_TASKS = ["Envoyer {d} à {client}", "Relancer {contact} pour {d}", "Finaliser {d} pour {client}",
            "Corriger {d} de {client}"]
FR_ONCE = ["Envoyer le devis à {client}", "Relancer {contact} pour la facture", "Préparer la présentation {client}"]


def client_tasks() -> None:
    for client, contact, lang, project in CLIENTS:
        for template in EN_CLIENT_ONCE:
            title = template.format(client=client, contact=contact, project=project)
            task("studio", title, due=some_due(), status="COMPLETED" if rng.random() < 0.05 else None)
        for template in rng.sample(EN_CLIENT_TASKS, 6):
            d = rng.choice(DELIVERABLES)
            task("studio", template.format(client=client, contact=contact, d=d), due=some_due(),
                 status="COMPLETED" if rng.random() < 0.04 else None)
        native = {"de": (DE_TASKS, DE_ONCE, DE_DELIVERABLES), "es": (ES_TASKS, ES_ONCE, ES_DELIVERABLES),
                  "fr": (FR_TASKS, FR_ONCE, FR_DELIVERABLES)}.get(lang)
        if native:
            templates, once, words = native
            for template in once:
                task("studio", template.format(client=client, contact=contact), due=some_due())
            for template in rng.sample(templates, 3):
                task("studio", template.format(client=client, contact=contact, d=rng.choice(words)),
                     due=some_due(), status="COMPLETED" if rng.random() < 0.04 else None)


# Hand-written tasks per collection --------------------------------------------------------------------

ADMIN_TASKS = [
    "Call the bank about the mortgage", "Call the bank about the card", "Call the bank about the overdraft",
    "Pay URSSAF contributions", "Declare Q1 turnover on autoentrepreneur.urssaf.fr", "File the VAT return",
    "Send receipts to the accountant", "Book a call with the accountant", "Renew the professional insurance",
    "Check the Adobe subscription renewal", "Cancel the unused Figma seat", "Renew the domain camilleroux.studio",
    "Back up the studio NAS", "Replace the Wacom pen nibs", "Order a new external drive",
    "Update the portfolio website", "Add the Olivar project to the portfolio", "Write the LinkedIn post about Kranich",
    "Reply to the Behance message", "Update rates for 2027", "Send the rate card to Bluefin",
    "Reconcile February expenses", "Scan the train tickets for expenses", "Print the Kbis extract",
    "Impôts : déclaration de revenus", "Payer la CFE", "Mettre à jour le RIB chez Qonto",
    "Rappeler la banque pour le prêt", "Envoyer l'attestation d'assurance au Théâtre Garance",
    "Steuernummer für Kranich heraussuchen", "W-8BEN form for Kestrel Labs", "Reply to Siobhan's email",
    "Clean up the Downloads folder", "Renew the font licences", "Ask Marion for the freelance contract template",
    "Sign the Estudi Mar NDA", "Send the signed NDA back to Jordi", "Research coworking spaces in Croix-Rousse",
    "Cancel the old phone contract", "Compare electricity offers", "Set up the new printer",
    "Calibrate the monitor", "Buy a colour proofing lamp", "Order Pantone swatch book",
    "Register for the Lyon design week", "Apply to the ADC Europe awards", "Prepare the talk for Lyon Design Night",
    "Write the newsletter for March", "Update the CV", "Send the portfolio to Nordlicht Verlag",
]
HOME_TASKS = [
    "Fix the leaking kitchen tap", "Call the plumber about the boiler", "Call the plumber about the shower",
    "Replace the hallway lightbulb", "Buy a new shower curtain", "Clean the oven", "Defrost the freezer",
    "Take the old sofa to the déchetterie", "Book the chimney sweep", "Paint Léa's bedroom",
    "Put up the shelves in Hugo's room", "Repair the bike puncture", "Pump up the bike tyres",
    "Change the smoke detector battery", "Descale the kettle", "Wash the curtains", "Sort the kids' old clothes",
    "Donate toys to Emmaüs", "Sell the high chair on Leboncoin", "Return the Ikea lamp",
    "Order a new vacuum cleaner bag", "Fix the wobbly kitchen chair", "Clean the gutters",
    "Réparer la porte du garage", "Acheter des ampoules", "Faire le plein de la voiture",
    "Contrôle technique de la voiture", "Laver la voiture", "Changer les pneus d'hiver",
    "Ranger la cave", "Vider le lave-vaisselle", "Arroser les plantes du balcon",
    "Pay the rent", "Pay the electricity bill", "Pay the water bill", "Renew the home insurance",
    "Book the car service", "Get a spare key cut", "Call the landlord about the window",
    "Measure the window for blinds", "Order blinds for the living room", "Hang the new mirror",
]
GROCERIES = ["milk", "eggs", "bread", "coffee beans", "oat milk", "butter", "rice", "pasta", "tomatoes",
             "bananas", "apples", "yoghurts", "cheese", "olive oil", "washing powder", "toilet paper",
             "dishwasher tablets", "bin bags", "toothpaste", "nappies for the neighbour's baby shower",
             "birthday candles", "wrapping paper", "batteries", "sunscreen", "plasters", "dog food",
             "cat litter for the neighbour", "flour", "sugar", "lemons"]
FR_GROCERIES = ["des croissants", "une baguette", "du comté", "du saucisson", "de la lessive", "des éponges",
                "de la farine", "du beurre demi-sel"]
FAMILY_TASKS = [
    "Sign Léa's school trip form", "Pay the canteen bill", "Buy Hugo's judo belt", "Label the kids' coats",
    "Book the paediatrician for Hugo", "Book the dentist for Léa", "Renew Léa's passport", "Renew Hugo's ID card",
    "Order Léa's birthday cake", "Send invitations for Léa's party", "Buy a present for Hugo's friend Noah",
    "Wrap the present for Noah", "Find a babysitter for Saturday", "Pay the babysitter", "Call mum",
    "Send mum the photos", "Plan the Easter weekend in Annecy", "Book the train to Annecy",
    "Book the summer holiday in Spain", "Look for a campsite near Girona", "Renew the family rail card",
    "Buy new trainers for Léa", "Buy rain boots for Hugo", "Sew the name tags on Hugo's clothes",
    "Return the library books", "Fill in the summer camp form", "Pay the summer camp deposit",
    "Register Hugo for swimming lessons", "Ask Julien about the weekend", "Julien's birthday present",
    "Anniversary dinner reservation", "Photos for the school photo order", "Buy school supplies",
    "Prendre RDV chez l'orthophoniste pour Hugo", "Inscrire Léa au centre aéré", "Payer la cantine",
    "Acheter un cadeau pour la maîtresse", "Préparer le goûter d'anniversaire", "Appeler Mamie",
    "Cumpleaños de Carmen: comprar regalo", "Vaccination reminder for Hugo", "Léa's piano exam fee",
    "Print the holiday homework", "Book the vet for Biscuit", "Buy Biscuit's flea treatment",
    "Renew Biscuit's pet insurance", "Take Biscuit to the groomer", "Order dog food", "Wash Biscuit's bed",
    "Find a dog sitter for Easter", "Hundepension für Ostern anfragen",
]
GARDEN_TASKS = [
    "Sow tomatoes indoors", "Sow the peas", "Plant the potatoes", "Prune the raspberry canes",
    "Turn the compost", "Buy seed potatoes", "Buy organic slug pellets", "Fix the shed door",
    "Pay the allotment association fee", "Water the seedlings", "Mulch the strawberries",
    "Build a bean frame", "Order wood chips", "Repair the water butt", "Weed the onion bed",
    "Semer les radis", "Tailler les rosiers", "Planter les courgettes", "Acheter du terreau",
    "Récupérer le fumier chez Gérard", "Share seeds with Gérard", "Plant the herb spiral",
    "Net the brassicas", "Sharpen the secateurs", "Return Gérard's wheelbarrow",
]
CHOIR_TASKS = [
    "Learn the alto part of the Fauré Requiem", "Practise the Brahms motet", "Print the scores for rehearsal",
    "Pay the choir membership", "Design the concert poster for the choir", "Send the poster to the printer",
    "Collect ticket money for the spring concert", "Buy a black dress for the concert",
    "Email Françoise about the seating plan", "Book the church for the dress rehearsal",
    "Apprendre le Cantique de Jean Racine", "Répéter la partie d'alto", "Record the alto line for Sandrine",
    "Ask the conductor about the tempo in bar 32",
]
PERSONAL_TASKS = [
    "Book a haircut", "Renew the gym membership", "Cancel the gym membership", "Book the osteopath",
    "Buy running shoes", "Sign up for the Lyon half marathon", "Register for the Run in Lyon 10k",
    "Finish reading Le Consentement for book club", "Return the book to Marion", "Buy a gift for Claire",
    "Write a postcard to Aunt Odile", "Plan the weekend in Berlin", "Book the hotel in Berlin",
    "Learn 20 Spanish verbs", "Spanish homework for Thursday", "Schedule the eye test", "Pick up the glasses",
    "Buy clay for pottery", "Glaze the bowls at the pottery studio", "Sell the old camera",
    "Back up phone photos", "Renew the library card", "Buy tickets for the Nuits de Fourvière",
    "Buy tickets for the Biennale", "Apuntarme al intercambio de idiomas", "Deutschkurs anmelden",
    "Frame the Berlin print", "Book the massage voucher", "Call Claire", "Reply to Inès's wedding invitation",
    "Buy a present for Inès's wedding", "Book the train to Inès's wedding",
]
# Near twins on purpose: a person's own similar titles.
SIMILAR_TASKS = [
    ("admin", "Call the bank about the new account"), ("admin", "Email the bank about the new account"),
    ("family", "Book the dentist for Hugo"), ("home", "Pay the gas bill"), ("home", "Pay the internet bill"),
    ("studio", "Send the invoice to Olivar"), ("studio", "Send the quote to Olivar"),
    ("family", "Buy a birthday card for mum"), ("family", "Buy a birthday present for mum"),
    ("garden", "Buy tomato seeds"), ("garden", "Buy tomato plants"),
    ("choir", "Print the Fauré scores"), ("choir", "Print the Brahms scores"),
    ("personal", "Book the hairdresser for Léa"),
]
# Exact duplicate titles on purpose (both live), as calendars have them.
DUPLICATE_TASKS = [("personal", "Call mum"), ("home", "Order dog food"), ("studio", "Update the invoice template"),
                   ("admin", "Update the invoice template")]


def hand_tasks() -> None:
    for collection, titles in (("admin", ADMIN_TASKS), ("home", HOME_TASKS), ("family", FAMILY_TASKS),
                               ("garden", GARDEN_TASKS), ("choir", CHOIR_TASKS), ("personal", PERSONAL_TASKS)):
        for title in titles:
            task(collection, title, due=some_due(), status="COMPLETED" if rng.random() < 0.06 else None)
    for collection, title in SIMILAR_TASKS:
        task(collection, title, due=some_due())
    for collection, title in DUPLICATE_TASKS:
        task(collection, title, due=some_due(), allow_duplicate=True)
    for thing in GROCERIES:
        task("home", f"Buy {thing}", due=some_due(overdue_share=0.1, none_share=0.6),
             status="COMPLETED" if rng.random() < 0.05 else None)
    for thing in FR_GROCERIES:
        task("home", f"Acheter {thing}", due=some_due(none_share=0.7))


# Filler: the many small tasks of a working year, combined from parts --------------------------------------

# Each object with the verbs a person would put before it.
FILLER = [
    (("Sort", "Clear", "Tidy"), "the inbox"), (("Sort", "Tidy"), "the invoices folder"),
    (("Tidy", "Clean up"), "the shared drive"), (("Archive", "Tidy"), "the moodboard folder"),
    (("Tidy", "Clean up"), "the font folder"), (("Sort", "Rename"), "the reference photos"),
    (("Archive", "Tidy"), "the 2026 client folders"), (("Update", "Finish"), "the press kit"),
    (("Gather", "Sort"), "the tax documents"), (("Sort", "Empty"), "the receipts box"),
    (("Clean up", "Update"), "the newsletter list"), (("Update", "Check"), "the project tracker"),
    (("Update",), "the supplier list"), (("Compare", "Ask for"), "print shop quotes"),
    (("Renew", "Check"), "the stock photo licences"), (("Schedule", "Write"), "the Instagram posts"),
    (("Write", "Proofread"), "the portfolio captions"), (("Update", "Rewrite"), "the business plan"),
    (("Update", "Translate"), "the contract templates"), (("Update", "Shorten"), "the proposal template"),
    (("Update",), "the email signature"), (("Clean up",), "the password manager"),
    (("Upgrade", "Downgrade"), "the cloud storage plan"), (("Organise", "Back up"), "the brand assets folder"),
    (("Order", "Sort"), "paper samples"), (("Scan", "Sort"), "the sketchbook pages"),
    (("Post", "Plan"), "the Dribbble shots"), (("Back up", "Sort"), "the phone photos"),
]
WEEK_NOTES = ["weekly review", "monthly review", "quarterly plan", "goals for April", "goals for May"]
FILLER_PEOPLE = ["Marion", "Claire", "Inès", "Gérard", "Françoise", "Sandrine", "Noah's parents", "Aunt Odile",
                 "Thomas", "Nadia", "Yann", "Bastien", "Chloé", "Élodie", "Karim", "Lukas", "Paloma", "Ben"]
PEOPLE_TASKS = ["Text {p} back", "Lunch plans with {p}", "Return {p}'s book", "Send {p} the photos",
                "Ask {p} for the recipe", "Thank {p} for the dinner", "Birthday card for {p}",
                "Pay {p} back for the tickets"]


def filler_tasks(target: int) -> None:
    combos = [(v, o) for verbs, o in FILLER for v in verbs]
    rng.shuffle(combos)
    work = {f"{v} {o}" for v, o in combos}
    people = [(t, p) for t in PEOPLE_TASKS for p in FILLER_PEOPLE if not (p.endswith("parents") and "{p}'s" in t)]
    rng.shuffle(people)
    notes = [f"{verb} the {n}" for verb in ("Write", "Do", "Plan") for n in WEEK_NOTES]
    pool = [f"{v} {o}" for v, o in combos] + [t.format(p=p) for t, p in people] + notes
    for title in pool:
        if sum(1 for i in ITEMS if i["kind"] == "task") >= target:
            break
        collection = "admin" if title in work else rng.choice(["personal", "family", "personal"])
        task(collection, title, due=some_due(none_share=0.55), status="COMPLETED" if rng.random() < 0.04 else None)


# Events ------------------------------------------------------------------------------------------------

CALL_TOPICS = ["kickoff", "feedback", "review", "check-in", "sign-off", "budget", "planning", "handover"]
EVENT_TEMPLATES = ["{client} {topic} call", "Call with {contact} ({topic})", "{client} {project} {topic}",
                   "Workshop with {client}", "Present {project} to {contact}", "{contact} – {topic}"]
DE_EVENTS = ["Telefonat mit {contact}", "{client}: Abstimmung {topic}", "Workshop bei {client} in Berlin"]
ES_EVENTS = ["Llamada con {contact}", "{client}: reunión de {topic}", "Videollamada {client}"]
FR_EVENTS = ["Rendez-vous {client}", "Point {topic} avec {contact}", "Visite chez {client}"]
PERSONAL_EVENTS = [
    ("family", "Dentist", 45), ("family", "Paediatrician: Hugo", 30), ("family", "Orthodontist: Léa", 30),
    ("family", "Parent-teacher meeting: Léa", 30), ("family", "Parent-teacher meeting: Hugo", 30),
    ("family", "School play: Hugo", 90), ("family", "Léa's birthday party", 180), ("family", "Hugo's friend Noah's party", 150),
    ("family", "Vet: Biscuit's vaccination", 30), ("family", "Dog groomer", 60), ("family", "Easter in Annecy", 2880),
    ("family", "Mum visits", 1440), ("family", "Julien's work dinner", 180), ("family", "Anniversary dinner", 150),
    ("family", "Réunion parents d'élèves", 90), ("family", "Kermesse de l'école", 240), ("family", "Spectacle de danse de Léa", 120),
    ("family", "Carnaval de l'école", 120), ("family", "Swimming gala", 120), ("family", "Judo competition", 240),
    ("personal", "Haircut", 45), ("personal", "Osteopath", 45), ("personal", "Eye test", 30),
    ("personal", "Dinner at Marion's", 180), ("personal", "Drinks with Claire", 120), ("personal", "Book club", 120),
    ("personal", "Inès's wedding", 600), ("personal", "Run in Lyon 10k", 120), ("personal", "Pottery open day", 120),
    ("personal", "Concert at the Auditorium", 150), ("personal", "Cinema with Claire", 150),
    ("personal", "Nuits Sonores", 300), ("personal", "Massage", 60), ("personal", "Blood test", 30),
    ("personal", "Cena con Paloma", 150), ("personal", "Kaffee mit Lukas", 60), ("personal", "Apéro chez Yann", 150),
    ("choir", "Spring concert", 180), ("choir", "Dress rehearsal at Saint-Bruno", 180), ("choir", "Choir weekend in Cluny", 2880),
    ("choir", "Concert de printemps: répétition générale", 180), ("choir", "Sectional: altos", 90),
    ("garden", "Allotment work party", 180), ("garden", "Seed swap at the community garden", 120),
    ("garden", "Plant sale at the Parc de la Tête d'Or", 120), ("garden", "Fête du jardin partagé", 240),
    ("studio", "Lyon Design Night talk", 120), ("studio", "Print shop visit", 60), ("studio", "Photo shoot for Olivar", 240),
    ("studio", "Accountant meeting", 60), ("studio", "Coworking open day", 120), ("studio", "Portfolio review at the ESAA", 180),
    ("studio", "Bank appointment: mortgage", 45), ("studio", "Bank appointment: business account", 45),
    ("studio", "Train to Paris", 120), ("studio", "Train back from Paris", 120), ("studio", "Flight to Berlin", 120),
    ("studio", "Flight back from Berlin", 120), ("studio", "Train to Madrid", 480), ("studio", "Design week Milan", 1440),
    ("studio", "Webinar: variable fonts", 60), ("studio", "Typography meetup", 120),
]
SIMILAR_EVENTS = [("studio", "Kranich logo review", 60), ("studio", "Kranich label review", 60),
                  ("family", "Dentist for Léa", 30), ("family", "Dentist for Hugo", 30),
                  ("personal", "Lunch with Claire", 90), ("personal", "Lunch with Marion", 90),
                  ("choir", "Choir concert in Vienne", 150), ("choir", "Choir concert in Villeurbanne", 150)]
DUPLICATE_EVENTS = [("family", "Dentist", 45), ("studio", "Accountant meeting", 60), ("personal", "Swimming", 60),
                    ("personal", "Swimming", 60)]
FRIENDS = ["Marion", "Claire", "Inès", "Thomas", "Nadia", "Yann", "Bastien", "Chloé", "Élodie", "Karim", "Ben"]
SOCIAL = ["Coffee with {p}", "Lunch with {p}", "Dinner with {p}", "Drinks with {p}", "{p}'s birthday",
          "Walk with {p} and the dogs", "Call {p}", "Tennis with {p}", "Brunch with {p}", "Climbing with {p}"]
KIDS = ["Noah", "Jade", "Louis", "Chloé", "Gabriel", "Emma", "Adam", "Manon", "Sacha", "Zoé", "Mia", "Ethan"]
KID_EVENTS = ["Playdate with {k}", "{k}'s birthday party", "Sleepover at {k}'s", "Pick up Hugo from {k}'s",
              "Goûter chez {k}"]
TRAVEL = ["Train to {c}", "Train back from {c}", "Flight to {c}", "Flight back from {c}", "Hotel in {c}",
          "Client visit in {c}"]
CITIES = ["Paris", "Berlin", "Munich", "Hamburg", "Madrid", "Barcelona", "Logroño", "Grenoble", "Marseille",
          "Geneva", "Dublin", "London", "Annecy", "Milan"]

# Recurring series: (collection, title, first start (local), minutes, rrule, skip, move, status)
SERIES = [
    ("choir", "Choir rehearsal", "2026-09-10 20:00", 120, "FREQ=WEEKLY;BYDAY=TH", 1, 1),
    ("choir", "Répétition pupitre alto", "2026-09-14 19:00", 60, "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", 1, 0),
    ("family", "Hugo's judo", "2026-09-09 14:00", 60, "FREQ=WEEKLY;BYDAY=WE", 1, 0),
    ("family", "Léa's swimming", "2026-09-12 10:00", 60, "FREQ=WEEKLY;BYDAY=SA", 1, 1),
    ("family", "Léa piano lesson", "2026-09-08 17:15", 45, "FREQ=WEEKLY;BYDAY=TU", 0, 1),
    ("family", "Cours de piano de Léa: audition", "2027-03-20 15:00", 90, None, 0, 0),
    ("personal", "Pottery class", "2026-09-07 19:00", 150, "FREQ=WEEKLY;BYDAY=MO", 1, 0),
    ("personal", "Run with Claire", "2026-09-06 08:00", 60, "FREQ=WEEKLY;BYDAY=SU", 1, 1),
    ("personal", "Spanish conversation class", "2026-09-10 12:30", 60, "FREQ=WEEKLY;BYDAY=TH", 1, 0),
    ("personal", "Yoga", "2026-09-08 07:00", 60, "FREQ=WEEKLY;BYDAY=TU,FR", 0, 1),
    ("personal", "Book club night", "2026-09-22 20:00", 120, "FREQ=MONTHLY;BYDAY=-1TU", 0, 0),
    ("family", "Sunday call with mum", "2026-09-06 18:00", 30, "FREQ=WEEKLY;BYDAY=SU", 1, 1),
    ("family", "Family movie night", "2026-09-11 20:00", 120, "FREQ=WEEKLY;BYDAY=FR", 0, 0),
    ("family", "Dog training class", "2026-09-12 11:30", 60, "FREQ=WEEKLY;BYDAY=SA", 1, 0),
    ("family", "Bin day", "2026-09-07 07:00", 15, "FREQ=WEEKLY;BYDAY=MO,TH", 0, 0),
    ("family", "Ménage: Mme Da Silva", "2026-09-09 09:00", 180, "FREQ=WEEKLY;INTERVAL=2;BYDAY=WE", 0, 1),
    ("garden", "Allotment watering rota", "2026-09-05 18:30", 30, "FREQ=WEEKLY;BYDAY=SA", 1, 0),
    ("garden", "Garden association meeting", "2026-09-03 19:00", 90, "FREQ=MONTHLY;BYDAY=1TH", 0, 0),
    ("studio", "Weekly planning", "2026-09-07 09:00", 30, "FREQ=WEEKLY;BYDAY=MO", 1, 0),
    ("studio", "Kranich weekly sync", "2026-09-08 10:00", 45, "FREQ=WEEKLY;BYDAY=TU", 1, 1),
    ("studio", "Olivar stand-up", "2026-09-10 09:30", 15, "FREQ=WEEKLY;BYDAY=TH", 1, 0),
    ("studio", "Estudi Mar: revisión semanal", "2026-09-09 16:00", 45, "FREQ=WEEKLY;BYDAY=WE", 0, 1),
    ("studio", "Jour fixe Nordlicht", "2026-09-11 11:00", 30, "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR", 0, 0),
    ("studio", "Invoicing hour", "2026-09-01 16:00", 60, "FREQ=MONTHLY;BYMONTHDAY=1", 0, 0),
    ("studio", "Coworking day at La Cordée", "2026-09-10 09:00", 480, "FREQ=WEEKLY;BYDAY=TH", 1, 0),
    ("studio", "Deep work block", "2026-09-08 14:00", 120, "FREQ=WEEKLY;BYDAY=TU,WE", 0, 1),
    ("studio", "Bluefin monthly report call", "2026-09-15 15:00", 30, "FREQ=MONTHLY;BYDAY=3TU", 0, 0),
    ("studio", "Design critique circle", "2026-09-16 18:30", 90, "FREQ=MONTHLY;BYDAY=3WE", 0, 0),
    ("personal", "Deutschkurs", "2026-09-09 19:00", 90, "FREQ=WEEKLY;BYDAY=WE", 1, 0),
    ("personal", "Intercambio de idiomas", "2026-09-17 19:30", 90, "FREQ=WEEKLY;INTERVAL=2;BYDAY=TH", 0, 0),
    ("family", "Léa's drama club", "2026-09-09 16:30", 90, "FREQ=WEEKLY;BYDAY=WE", 1, 0),
    ("family", "School pick-up (Julien away)", "2027-03-03 16:20", 20, "FREQ=DAILY;COUNT=5", 0, 0),
    ("personal", "Physio for the knee", "2027-02-22 11:00", 30, "FREQ=WEEKLY;BYDAY=MO;COUNT=8", 0, 0),
    ("choir", "Choir committee", "2026-09-29 20:00", 60, "FREQ=MONTHLY;BYDAY=-1MO", 0, 0),
    ("studio", "Office hours for students", "2026-09-18 14:00", 60, "FREQ=MONTHLY;BYDAY=3FR", 0, 0),
]


def series_events() -> None:
    for collection, title, first, minutes, rrule, skip, move in SERIES:
        start = datetime.strptime(first, "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
        event(collection, title, start, minutes, rrule=rrule, skip=skip, move=move)
    # A series called off as a whole: in the calendar, not live.
    event("personal", "Aquagym", wall(date(2026, 9, 10), "12:15"), 45, rrule="FREQ=WEEKLY;BYDAY=TH",
          status="CANCELLED")
    event("studio", "Zeller weekly call", wall(date(2026, 10, 5), "11:00"), 30, rrule="FREQ=WEEKLY;BYDAY=MO",
          status="CANCELLED")


# Days that are not any day: a holiday, a wedding, a concert.
FIXED = {"Easter in Annecy": "2027-03-27 09:00", "Inès's wedding": "2027-05-22 14:00",
         "Spring concert": "2027-04-24 20:00", "Dress rehearsal at Saint-Bruno": "2027-04-22 19:30",
         "Concert de printemps: répétition générale": "2027-04-17 14:00", "Léa's birthday party": "2027-04-10 14:00",
         "Run in Lyon 10k": "2027-04-18 09:00", "Choir weekend in Cluny": "2027-05-15 09:00",
         "Design week Milan": "2027-04-12 09:00", "Mum visits": "2027-03-12 18:00",
         "Kermesse de l'école": "2027-05-29 10:00", "Carnaval de l'école": "2027-03-19 14:00",
         "Nuits Sonores": "2027-05-14 20:00", "Fête du jardin partagé": "2027-05-08 11:00",
         "Anniversary dinner": "2027-04-16 20:00", "Swimming gala": "2027-05-29 15:00",
         "Judo competition": "2027-04-03 09:00", "Pottery open day": "2027-03-13 10:00",
         "Seed swap at the community garden": "2027-03-20 10:00", "Allotment work party": "2027-03-06 10:00",
         "Plant sale at the Parc de la Tête d'Or": "2027-04-25 10:00"}
# The hours a meeting of that kind happens at.
MEAL_HOURS = {"Brunch": ("11:00", "11:30"), "Lunch": ("12:30", "13:00"), "Déjeuner": ("12:30", "13:00"),
              "Comida": ("13:30", "14:00"), "Dinner": ("19:30", "20:00"), "Dîner": ("19:30", "20:00"),
              "Cena": ("20:30", "21:00"), "Abendessen": ("19:00", "19:30"), "Coffee": ("10:00", "16:00"),
              "Café": ("10:00", "16:30"), "Kaffee": ("10:00", "15:00"), "Drinks": ("18:30", "19:00"),
              "Apéro": ("18:30", "19:00"), "Tennis": ("12:30", "18:00"), "Climbing": ("18:00", "19:00")}


def social_slot(title: str) -> datetime:
    return future_slot(hours=MEAL_HOURS.get(title.split()[0], ("12:30", "18:30", "19:30")))


def one_off_events(target: int) -> None:
    for collection, title, minutes in PERSONAL_EVENTS + SIMILAR_EVENTS:
        long = minutes >= 600
        start = future_slot(hours=("09:00",) if long else ("09:00", "10:30", "14:00", "16:00", "18:30", "19:30"))
        if title in FIXED:
            start = datetime.strptime(FIXED[title], "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
        event(collection, title, start, minutes, status="CANCELLED" if rng.random() < 0.04 else None)
    for collection, title, minutes in DUPLICATE_EVENTS:
        event(collection, title, future_slot(), minutes, allow_duplicate=True)
    for client, contact, lang, project in CLIENTS:
        for template in EVENT_TEMPLATES:
            for _ in range(3):
                topic = rng.choice(CALL_TOPICS)
                title = template.format(client=client, contact=contact, project=project, topic=topic)
                event("studio", title, future_slot(), rng.choice([30, 45, 60, 90]),
                      status="CANCELLED" if rng.random() < 0.04 else None)
        native = {"de": DE_EVENTS, "es": ES_EVENTS, "fr": FR_EVENTS}.get(lang, [])
        for template in native:
            topic = rng.choice({"de": ["Entwürfe", "Budget"], "es": ["bocetos", "presupuesto"]}.get(
                lang, ["maquettes", "budget"]))
            title = template.format(client=client, contact=contact, topic=topic)
            event("studio", title, future_slot(), 60, status="CANCELLED" if rng.random() < 0.04 else None)
    for template in KID_EVENTS:
        for kid in rng.sample(KIDS, 6):
            event("family", template.format(k=kid), future_slot(hours=("14:00", "16:30", "17:00", "18:00")),
                  120, status="CANCELLED" if rng.random() < 0.04 else None)
    for template in TRAVEL:
        for city in rng.sample(CITIES, 7):
            event("studio" if "Client" in template or rng.random() < 0.5 else "personal", template.format(c=city),
                  future_slot(hours=("06:45", "07:30", "12:10", "17:40")), rng.choice([90, 120, 180, 240]),
                  status="CANCELLED" if rng.random() < 0.04 else None)
    socials = [(t, p) for t in SOCIAL for p in FRIENDS]
    rng.shuffle(socials)
    for template, person in socials:
        if sum(1 for i in ITEMS if i["kind"] == "event") >= target:
            break
        title = template.format(p=person)
        event("personal", title, social_slot(title), rng.choice([60, 90, 120]),
              status="CANCELLED" if rng.random() < 0.04 else None)


# Dated variants: the same kind of appointment on many days (a real calendar repeats its titles with detail).
DATED_EVENTS = ["Delivery: {x}", "Pick up {x}", "Call about {x}"]
DATED_THINGS = ["the new desk", "printer paper", "the framed prints", "the sample boxes", "the Olivar mockups",
                "Léa's glasses", "the dry cleaning", "the parcel from Berlin", "the car at the garage",
                "the vegetable box", "the concert tickets", "the repaired bike", "the passport", "the kiln pieces"]
MORE_TASK_TEMPLATES = ["Email {p} about {x}", "Remind Julien about {x}", "Ask Gérard about {x}"]
MORE_THINGS = ["the school trip", "the car insurance", "the holiday rental", "the garden hose", "the tax form",
               "the kids' swimming bags", "Easter lunch", "the choir poster", "the Berlin trip", "the dog sitter",
               "the babysitting rota", "the seedlings", "the parking permit", "the new boiler", "the bike rack",
               "the moving boxes", "the recycling bins", "the neighbours' party", "the broken fence",
               "the apartment viewing"]


def more_events_and_tasks(task_target: int) -> None:
    for template in DATED_EVENTS:
        for thing in DATED_THINGS:
            event(rng.choice(["family", "personal", "studio"]), template.format(x=thing),
                  future_slot(hours=("08:00", "12:00", "13:30", "17:30")), 30,
                  status="CANCELLED" if rng.random() < 0.04 else None)
    combos = [(t, p, x) for t in MORE_TASK_TEMPLATES for p in FILLER_PEOPLE[:8] for x in MORE_THINGS]
    rng.shuffle(combos)
    for template, person, thing in combos:
        if sum(1 for i in ITEMS if i["kind"] == "task") >= task_target:
            break
        title = template.format(p=person, x=thing)
        task(rng.choice(["family", "personal", "home"]), title, due=some_due(none_share=0.6),
             status="COMPLETED" if rng.random() < 0.04 else None)


# The same small work in the household's and the clients' languages.
FR_FILLER = [
    (("Trier", "Classer"), "les factures"), (("Trier", "Imprimer"), "les photos de vacances"),
    (("Mettre à jour", "Envoyer"), "le dossier de la CAF"), (("Ranger", "Classer"), "les papiers de la voiture"),
    (("Trier", "Encadrer"), "les dessins des enfants"), (("Mettre à jour",), "le tableau des dépenses"),
    (("Trier", "Répondre à"), "les mails de l'école"), (("Ranger", "Vider"), "le placard de l'entrée"),
    (("Trier", "Donner"), "les jouets"), (("Préparer", "Classer"), "le dossier impôts"),
    (("Retrouver", "Mettre à jour"), "les carnets de santé"), (("Signer", "Classer"), "les bulletins scolaires"),
    (("Ranger", "Nettoyer"), "le garage"), (("Réserver", "Annuler"), "le restaurant pour samedi"),
]
FR_MORE_GROCERIES = ["Acheter du pain de mie", "Acheter des compotes", "Acheter du liquide vaisselle",
                     "Acheter des croquettes pour Biscuit", "Acheter des fraises", "Acheter du café moulu",
                     "Acheter des piles", "Acheter un cadeau pour Jade", "Acheter des graines de capucine",
                     "Acheter du papier cadeau", "Acheter des chaussettes pour Hugo", "Acheter un cartable pour Léa"]
DE_CLIENTS = ["Kranich", "Zeller Brauerei", "Nordlicht Verlag"]
DE_FILLER = ["Zeiterfassung für {c} ausfüllen", "Dateien für {c} hochladen", "Mail von {c} beantworten",
             "Skizzen für {c} scannen", "Termin mit {c} bestätigen", "Lieferadresse von {c} prüfen"]
ES_CLIENTS = ["Olivar", "Estudi Mar", "Bodega Ruiz"]
ES_FILLER = ["Contestar el correo de {c}", "Subir los archivos de {c}", "Confirmar la cita con {c}",
             "Escanear los bocetos de {c}", "Actualizar el calendario de {c}", "Revisar el contrato de {c}"]
FR_SOCIAL = ["Café avec {p}", "Déjeuner avec {p}", "Dîner chez {p}", "Apéro avec {p}"]
ES_FRIENDS = ["Paloma", "Lucía", "Jordi", "Carmen", "Nuria"]
ES_SOCIAL = ["Cena con {p}", "Comida con {p}", "Videollamada con {p}"]
DE_FRIENDS = ["Lukas", "Jana", "Anke", "Markus", "Sabine"]
DE_SOCIAL = ["Kaffee mit {p}", "Abendessen mit {p}", "Videocall mit {p}"]


def other_languages() -> None:
    for verbs, obj in FR_FILLER:
        for verb in verbs:
            task(rng.choice(["home", "family", "admin"]), f"{verb} {obj}", due=some_due(none_share=0.6),
                 status="COMPLETED" if rng.random() < 0.04 else None)
    for title in FR_MORE_GROCERIES:
        task("home", title, due=some_due(none_share=0.6))
    for clients, templates in ((DE_CLIENTS, DE_FILLER), (ES_CLIENTS, ES_FILLER)):
        for client in clients:
            for template in templates:
                task("studio", template.format(c=client), due=some_due(),
                     status="COMPLETED" if rng.random() < 0.04 else None)
    for friends, templates, collection in ((FRIENDS, FR_SOCIAL, "personal"), (ES_FRIENDS, ES_SOCIAL, "personal"),
                                           (DE_FRIENDS, DE_SOCIAL, "personal")):
        for template in templates:
            for person in friends:
                title = template.format(p=person)
                event(collection, title, social_slot(title), rng.choice([60, 90, 120]),
                      status="CANCELLED" if rng.random() < 0.04 else None)


def main() -> None:
    hand_tasks()
    client_tasks()
    filler_tasks(target=900)
    series_events()
    one_off_events(target=640)
    more_events_and_tasks(task_target=1300)
    other_languages()
    meta = {"now": NOW.isoformat(), "time_zone": "Europe/Paris", "horizon_days": HORIZON_DAYS, "seed": SEED,
            "person": "Camille, freelance graphic designer in Lyon"}
    (HERE / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with open(HERE / "items.jsonl", "w", encoding="utf-8") as out:
        for item in ITEMS:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    kinds = Counter((i["kind"], i.get("status", "live")) for i in ITEMS)
    print(f"{len(ITEMS)} items: {dict(kinds)}; collections {dict(Counter(i['collection'] for i in ITEMS))}")


if __name__ == "__main__":
    main()
