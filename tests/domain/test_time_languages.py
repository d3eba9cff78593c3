"""Time expressions in German, French and Spanish: each form of issue 29, per language.

The clock is Monday 2027-01-11 09:00 in Europe/Berlin, as in the labelled set:
"tomorrow" is Tuesday the 12th, "Thursday" the 14th, "next week" 18 to 24 January.
"""
from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from resolver.domain.timeexpr import find_time_expression, find_time_expression_in_any, grammar, languages

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=TZ)
D = date


def _days(phrase: str, language: str) -> tuple[date, date, str]:
    found = find_time_expression(phrase, now=NOW, tz=TZ, language=language)
    assert found is not None, phrase
    last = (found.range.end - timedelta(microseconds=1)).date()
    return found.range.start.date(), last, found.rest


# (phrase, first day, last day, what is left for the title)
FORMS = {
    "german": [
        ("Yoga heute", D(2027, 1, 11), D(2027, 1, 11), "Yoga"),
        ("Yoga morgen", D(2027, 1, 12), D(2027, 1, 12), "Yoga"),
        ("Steuer übermorgen", D(2027, 1, 13), D(2027, 1, 13), "Steuer"),
        ("Zahnarzt am Donnerstag", D(2027, 1, 14), D(2027, 1, 14), "Zahnarzt"),
        ("Zahnarzt nächsten Dienstag", D(2027, 1, 12), D(2027, 1, 12), "Zahnarzt"),
        ("Zahnarzt naechsten Montag", D(2027, 1, 18), D(2027, 1, 18), "Zahnarzt"),
        ("Bericht letzten Freitag", D(2027, 1, 8), D(2027, 1, 8), "Bericht"),
        ("Bericht diese Woche", D(2027, 1, 11), D(2027, 1, 17), "Bericht"),
        ("Bericht nächste Woche", D(2027, 1, 18), D(2027, 1, 24), "Bericht"),
        ("Miete nächsten Monat", D(2027, 2, 1), D(2027, 2, 28), "Miete"),
        ("Müll in 3 Tagen", D(2027, 1, 14), D(2027, 1, 14), "Müll"),
        ("Müll in zwei Wochen", D(2027, 1, 25), D(2027, 1, 25), "Müll"),
        ("Elternabend am 3. Februar", D(2027, 2, 3), D(2027, 2, 3), "Elternabend"),
        ("Rechnung fällig am 21.", D(2027, 1, 21), D(2027, 1, 21), "Rechnung"),
        ("Rechnung am 14.1.", D(2027, 1, 14), D(2027, 1, 14), "Rechnung"),
        ("Abgabe bis Ende der Woche", D(2027, 1, 15), D(2027, 1, 17), "Abgabe"),
        ("Abgabe zum Monatsende", D(2027, 1, 25), D(2027, 1, 31), "Abgabe"),
        ("Ausflug am Wochenende", D(2027, 1, 16), D(2027, 1, 17), "Ausflug"),
        ("Urlaub im März", D(2027, 3, 1), D(2027, 3, 31), "Urlaub"),
    ],
    "french": [
        ("yoga aujourd'hui", D(2027, 1, 11), D(2027, 1, 11), "yoga"),
        ("yoga demain", D(2027, 1, 12), D(2027, 1, 12), "yoga"),
        ("impôts après-demain", D(2027, 1, 13), D(2027, 1, 13), "impôts"),
        ("dentiste jeudi", D(2027, 1, 14), D(2027, 1, 14), "dentiste"),
        ("dentiste mardi prochain", D(2027, 1, 12), D(2027, 1, 12), "dentiste"),
        ("rapport vendredi dernier", D(2027, 1, 8), D(2027, 1, 8), "rapport"),
        ("rapport cette semaine", D(2027, 1, 11), D(2027, 1, 17), "rapport"),
        ("rapport la semaine prochaine", D(2027, 1, 18), D(2027, 1, 24), "rapport"),
        ("loyer le mois prochain", D(2027, 2, 1), D(2027, 2, 28), "loyer"),
        ("poubelles dans 3 jours", D(2027, 1, 14), D(2027, 1, 14), "poubelles"),
        ("réunion le 3 février", D(2027, 2, 3), D(2027, 2, 3), "réunion"),
        ("réunion le 1er mars", D(2027, 3, 1), D(2027, 3, 1), "réunion"),
        ("facture pour le 21", D(2027, 1, 21), D(2027, 1, 21), "facture"),
        ("rapport d'ici la fin de la semaine", D(2027, 1, 15), D(2027, 1, 17), "rapport"),
        ("bilan fin du mois", D(2027, 1, 25), D(2027, 1, 31), "bilan"),
        ("randonnée ce week-end", D(2027, 1, 16), D(2027, 1, 17), "randonnée"),
        ("vacances en mars", D(2027, 3, 1), D(2027, 3, 31), "vacances"),
    ],
    "spanish": [
        ("yoga hoy", D(2027, 1, 11), D(2027, 1, 11), "yoga"),
        ("yoga mañana", D(2027, 1, 12), D(2027, 1, 12), "yoga"),
        ("impuestos pasado mañana", D(2027, 1, 13), D(2027, 1, 13), "impuestos"),
        ("dentista el jueves", D(2027, 1, 14), D(2027, 1, 14), "dentista"),
        ("dentista el próximo martes", D(2027, 1, 12), D(2027, 1, 12), "dentista"),
        ("dentista el lunes que viene", D(2027, 1, 18), D(2027, 1, 18), "dentista"),
        ("informe el viernes pasado", D(2027, 1, 8), D(2027, 1, 8), "informe"),
        ("informe esta semana", D(2027, 1, 11), D(2027, 1, 17), "informe"),
        ("informe la semana que viene", D(2027, 1, 18), D(2027, 1, 24), "informe"),
        ("alquiler el mes que viene", D(2027, 2, 1), D(2027, 2, 28), "alquiler"),
        ("basura dentro de 3 días", D(2027, 1, 14), D(2027, 1, 14), "basura"),
        ("reunión el 3 de febrero", D(2027, 2, 3), D(2027, 2, 3), "reunión"),
        ("factura para el 21", D(2027, 1, 21), D(2027, 1, 21), "factura"),
        ("informe a finales de la semana", D(2027, 1, 15), D(2027, 1, 17), "informe"),
        ("balance a fin de mes", D(2027, 1, 25), D(2027, 1, 31), "balance"),
        ("excursión el fin de semana", D(2027, 1, 16), D(2027, 1, 17), "excursión"),
        ("vacaciones en marzo", D(2027, 3, 1), D(2027, 3, 31), "vacaciones"),
    ],
}


@pytest.mark.parametrize("language, phrase, first, last, rest",
                         [(lang, *form) for lang, forms in FORMS.items() for form in forms])
def test_time_language__each_form_reads_its_days(language, phrase, first, last, rest):
    assert _days(phrase, language) == (first, last, rest)


@pytest.mark.parametrize("language, phrase, rest", [
    ("german", "überfällige Rechnungen", "Rechnungen"),
    ("french", "factures en retard", "factures"),
    ("spanish", "facturas vencidas", "facturas"),
])
def test_time_language__overdue_is_due_before_now(language, phrase, rest):
    found = find_time_expression(phrase, now=NOW, tz=TZ, language=language)
    assert found is not None and found.range.whole and found.range.end == NOW and found.rest == rest


@pytest.mark.parametrize("language, phrase, clock", [
    ("german", "Termin morgen um 15 Uhr", time(15, 0)),
    ("german", "Termin morgen um 9:30", time(9, 30)),
    ("french", "rendez-vous demain à 15h", time(15, 0)),
    ("french", "rendez-vous demain à 8h30", time(8, 30)),
    ("spanish", "cita mañana a las 15:00", time(15, 0)),
    ("spanish", "cita mañana a las 5 de la tarde", time(17, 0)),
])
def test_time_language__clock_times_on_a_day(language, phrase, clock):
    found = find_time_expression(phrase, now=NOW, tz=TZ, language=language)
    assert found is not None
    assert found.range.start == datetime.combine(D(2027, 1, 12), clock, tzinfo=TZ)


@pytest.mark.parametrize("language, phrase, hours", [
    ("german", "Montag früh", (6, 12)),
    ("german", "heute Abend Kino", (18, 24)),
    ("french", "lundi matin", (6, 12)),
    ("french", "ce soir cinéma", (18, 24)),
    ("spanish", "el lunes por la mañana", (6, 12)),
    ("spanish", "esta noche cine", (18, 24)),
])
def test_time_language__parts_of_a_day(language, phrase, hours):
    found = find_time_expression(phrase, now=NOW, tz=TZ, language=language)
    assert found is not None and found.range.start.date() == D(2027, 1, 11)
    assert (found.range.start.hour, (found.range.end - found.range.start).seconds // 3600 + hours[0]) == hours


@pytest.mark.parametrize("language, phrase", [
    # Words of titles that are no dates in that language.
    ("german", "Morgenroutine aufschreiben"),
    ("german", "Heizkostenabrechnung prüfen"),
    ("french", "Préparer la présentation pour Lyon"),
    ("spanish", "Comprar regalo para Lucía"),
    ("spanish", "Lavar el coche"),
])
def test_time_language__title_words_stay_words(language, phrase):
    assert find_time_expression(phrase, now=NOW, tz=TZ, language=language) is None


def test_time_language__english_words_are_not_read_in_german():
    """The grammar is the language's: "tomorrow" is a title word to a German reader, "morgen" to an English one."""
    assert find_time_expression("yoga tomorrow", now=NOW, tz=TZ, language="german") is None
    assert find_time_expression("Yoga morgen", now=NOW, tz=TZ, language="english") is None


def test_time_language__a_language_without_a_grammar_reads_english():
    assert grammar("italian").language == "english"
    assert set(languages()) == {"english", "french", "german", "spanish"}


# -- a reference in a language the request does not name (find_time_expression_in_any) ----------------------

def _in_any(phrase: str, language: str = "english", titled=lambda expression: False):
    return find_time_expression_in_any(phrase, now=NOW, tz=TZ, language=language, titled=titled)


@pytest.mark.parametrize("language, phrase, first, last, rest",
                         [(lang, *form) for lang, forms in FORMS.items() for form in forms])
def test_in_any__each_form_reads_as_in_its_own_language_where_english_is_set(language, phrase, first, last, rest):
    """Every form of every language, asked where English is configured, reads as its own grammar reads it."""
    own = find_time_expression(phrase, now=NOW, tz=TZ, language=language)
    found = _in_any(phrase)
    assert found is not None and (found.range, found.rest) == (own.range, own.rest) and found.rest == rest


def test_in_any__the_grammar_that_reads_the_most_wins():
    """English reads "15:00" alone (today at 3 pm); Spanish reads the whole "mañana a las 15:00"."""
    assert find_time_expression("médico mañana a las 15:00", now=NOW, tz=TZ, language="english").expression \
        == "15:00"
    found = _in_any("médico mañana a las 15:00")
    assert found.range.start == datetime(2027, 1, 12, 15, 0, tzinfo=TZ) and found.rest == "médico"


def test_in_any__the_configured_language_reads_first_and_alone_when_it_reads_all():
    found = _in_any("yoga tomorrow", titled=lambda expression: True)  # its own reading is never a title's
    assert found.range.start.date() == D(2027, 1, 12) and found.rest == "yoga"
    assert _in_any("Yoga morgen", language="german").expression == "morgen"


def test_in_any__another_grammars_reading_of_title_words_is_not_a_time():
    """German reads "morgen" as tomorrow; where a title holds the word (`titled`: "Call Morgen", a name) it is
    that title's word."""
    seen = []

    def titled(expression: str) -> bool:
        seen.append(expression)
        return expression.lower() == "morgen"

    assert _in_any("call Morgen", titled=titled) is None and seen == ["Morgen"]
    found = _in_any("call Morgen")
    assert (found.range.start.date(), found.rest) == (D(2027, 1, 12), "call")


def test_in_any__another_grammars_reading_of_words_the_language_declines_is_not_taken():
    """French reads "weekend" alone; English reads "this weekend" and declines "weekend" alone, which here is a
    topic. A reading with a number is taken ("am 31.1.": English holds "am", and reads no such date)."""
    assert find_time_expression("call mum about the weekend", now=NOW, tz=TZ, language="french") is not None
    assert _in_any("call mum about the weekend") is None
    assert _in_any("this weekend's hike").range.start.date() == D(2027, 1, 16)  # English's own reading
    found = _in_any("Steuer am 31.1.")
    assert (found.range.start.date(), found.rest) == (D(2027, 1, 31), "Steuer")
    assert "am" in grammar("english").vocabulary and "morgen" not in grammar("english").vocabulary


@pytest.mark.parametrize("phrase", [
    "Morgenroutine aufschreiben", "Préparer la présentation pour Lyon", "Lavar el coche", "Comprar regalo para Lucía",
    "quarterly board review", "Call the plumber",
])
def test_in_any__words_no_grammar_reads_stay_words(phrase):
    assert _in_any(phrase) is None
