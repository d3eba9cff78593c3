"""Writes bench/data/time_expressions_i18n.jsonl: time expressions in German, French and Spanish.

    .venv/bin/python bench/data/time_languages.py

Hand-written the way people type a reminder or ask an agent (lower case,
accents dropped now and then, a title around the expression), each with the
first day it names on the set's clock (Monday 2027-01-11, Europe/Berlin),
"overdue" for an overdue question, or none for a phrase whose words are no
date (a month that is a name, a number that is a count). Every third phrase
of a language, in written order, is held out. bench/time_languages.py
measures the resolver's grammars and dateparser on them.
"""
from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "time_expressions_i18n.jsonl"

PHRASES = {
    "german": """
yoga morgen|2027-01-12
zahnarzt heute|2027-01-11
was steht heute an|2027-01-11
steuererklärung übermorgen|2027-01-13
uebermorgen muell rausbringen|2027-01-13
elternabend am donnerstag|2027-01-14
bis freitag die präsentation fertig|2027-01-15
friseur samstag|2027-01-16
oma anrufen am sonntag|2027-01-17
nächsten montag jour fixe|2027-01-18
naechsten dienstag physio|2027-01-12
kommenden mittwoch pilates|2027-01-13
letzten freitag rechnung bezahlt?|2027-01-08
bericht diese woche|2027-01-11
was habe ich nächste woche|2027-01-18
nächsten monat miete erhöhen|2027-02-01
in 3 tagen paket abholen|2027-01-14
in zwei wochen urlaub buchen|2027-01-25
in einer woche abgabe|2027-01-18
geburtstag am 3. februar|2027-02-03
am 21. januar zum tüv|2027-01-21
vertrag bis 15. märz kündigen|2027-03-15
steuer am 31.1.|2027-01-31
am 14.01.2027 termin beim amt|2027-01-14
bis ende der woche angebot schicken|2027-01-15
ende nächster woche umzug|2027-01-22
zum monatsende abrechnung|2027-01-25
am wochenende fenster putzen|2027-01-16
im märz reifen wechseln|2027-03-01
im april steuerberater|2027-04-01
überfällige aufgaben|overdue
was ist überfällig|overdue
heute abend kino|2027-01-11
morgen früh joggen|2027-01-12
montag früh standup|2027-01-11
morgen um 15 uhr arzt|2027-01-12
um 9:30 telefonkonferenz|2027-01-11
am 5. mai hochzeit|2027-05-05
freitag den 15. januar|2027-01-15
gestern vergessen: blumen gießen|2027-01-10
vorgestern war der termin|2027-01-09
am 2027-02-10 flug|2027-02-10
was ist am mittwoch fällig|2027-01-13
welche termine habe ich morgen|2027-01-12
kita anmeldung bis zum 29. januar|2027-01-29
nächstes wochenende ausflug|2027-01-23
dienstags chorprobe|2027-01-12
die rechnung vom 3. dezember|2026-12-03
in 10 tagen visum abholen|2027-01-21
abgabe am zwanzigsten|2027-01-20
2 flaschen wein kaufen|
q3 bericht schreiben|
10k lauf anmelden|
mai thai essen bestellen|
zimmer 12 streichen|
sonntagszeitung abbestellen|
morgenroutine aufschreiben|
heizkostenabrechnung prüfen|
wochenplan drucken|
monatskarte verlängern|
""",
    "french": """
yoga demain|2027-01-12
dentiste aujourd'hui|2027-01-11
qu'est-ce que j'ai aujourd'hui|2027-01-11
impôts après-demain|2027-01-13
apres demain sortir les poubelles|2027-01-13
réunion parents jeudi|2027-01-14
finir la présentation pour vendredi|2027-01-15
coiffeur samedi|2027-01-16
appeler mamie dimanche|2027-01-17
lundi prochain point hebdo|2027-01-18
mardi prochain kiné|2027-01-12
mercredi qui vient pilates|2027-01-13
facture payée vendredi dernier ?|2027-01-08
rapport cette semaine|2027-01-11
qu'est-ce que j'ai la semaine prochaine|2027-01-18
augmenter le loyer le mois prochain|2027-02-01
colis à récupérer dans 3 jours|2027-01-14
réserver les vacances dans deux semaines|2027-01-25
rendu dans une semaine|2027-01-18
anniversaire le 3 février|2027-02-03
contrôle technique le 21 janvier|2027-01-21
résilier le contrat avant le 15 mars|2027-03-15
impôts le 31/01|2027-01-31
rdv à la mairie le 14/01/2027|2027-01-14
envoyer le devis d'ici la fin de la semaine|2027-01-15
déménagement fin de la semaine prochaine|2027-01-22
bilan fin du mois|2027-01-25
laver les vitres ce week-end|2027-01-16
changer les pneus en mars|2027-03-01
comptable en avril|2027-04-01
tâches en retard|overdue
qu'est-ce qui est en retard|overdue
cinéma ce soir|2027-01-11
footing demain matin|2027-01-12
lundi matin standup|2027-01-11
médecin demain à 15h|2027-01-12
conf call à 9h30|2027-01-11
mariage le 5 mai|2027-05-05
vendredi 15 janvier|2027-01-15
hier oublié : arroser les plantes|2027-01-10
avant-hier c'était le rdv|2027-01-09
vol le 2027-02-10|2027-02-10
qu'est-ce qui est prévu pour mercredi|2027-01-13
quels rendez-vous demain|2027-01-12
inscription crèche avant le 29 janvier|2027-01-29
sortie le week-end prochain|2027-01-23
chorale le mardi|2027-01-12
la facture du 3 décembre|2026-12-03
récupérer le visa dans 10 jours|2027-01-21
rendu le 1er février|2027-02-01
acheter 2 bouteilles de vin|
rédiger le rapport q3|
s'inscrire à la course 10k|
commander chez may thai|
repeindre la chambre 12|
résilier le journal du dimanche|
écrire la routine du matin|
vérifier le décompte de chauffage|
imprimer le planning de la semaine|
renouveler la carte mensuelle|
""",
    "spanish": """
yoga mañana|2027-01-12
dentista hoy|2027-01-11
qué tengo hoy|2027-01-11
impuestos pasado mañana|2027-01-13
pasado manana sacar la basura|2027-01-13
reunión de padres el jueves|2027-01-14
terminar la presentación para el viernes|2027-01-15
peluquería el sábado|2027-01-16
llamar a la abuela el domingo|2027-01-17
el próximo lunes reunión semanal|2027-01-18
fisio el martes que viene|2027-01-12
pilates este miércoles|2027-01-13
factura pagada el viernes pasado?|2027-01-08
informe esta semana|2027-01-11
qué tengo la semana que viene|2027-01-18
subir el alquiler el mes que viene|2027-02-01
recoger el paquete dentro de 3 días|2027-01-14
reservar vacaciones en dos semanas|2027-01-25
entrega en una semana|2027-01-18
cumpleaños el 3 de febrero|2027-02-03
itv el 21 de enero|2027-01-21
cancelar el contrato antes del 15 de marzo|2027-03-15
impuestos el 31/01|2027-01-31
cita en el ayuntamiento el 14/01/2027|2027-01-14
mandar el presupuesto a finales de la semana|2027-01-15
mudanza a finales de la semana que viene|2027-01-22
balance a fin de mes|2027-01-25
limpiar los cristales el fin de semana|2027-01-16
cambiar las ruedas en marzo|2027-03-01
asesor fiscal en abril|2027-04-01
tareas vencidas|overdue
qué está atrasado|overdue
cine esta noche|2027-01-11
correr mañana por la mañana|2027-01-12
el lunes por la mañana standup|2027-01-11
médico mañana a las 15:00|2027-01-12
llamada a las 9:30|2027-01-11
boda el 5 de mayo|2027-05-05
viernes 15 de enero|2027-01-15
ayer olvidé regar las plantas|2027-01-10
anteayer fue la cita|2027-01-09
vuelo el 2027-02-10|2027-02-10
qué hay para el miércoles|2027-01-13
qué citas tengo mañana|2027-01-12
inscripción guardería antes del 29 de enero|2027-01-29
excursión el próximo fin de semana|2027-01-23
coro los martes|2027-01-12
la factura del 3 de diciembre|2026-12-03
recoger el visado dentro de 10 días|2027-01-21
entrega el primero de febrero|2027-02-01
comprar 2 botellas de vino|
escribir el informe q3|
apuntarse a la carrera 10k|
pedir en may thai|
pintar la habitación 12|
cancelar el periódico del domingo|
escribir la rutina de la mañana|
revisar la factura de la calefacción|
imprimir el plan semanal|
renovar el abono mensual|
""",
}


def main() -> int:
    lines = []
    for language, block in PHRASES.items():
        rows = [row for row in block.strip().splitlines() if row.strip()]
        for n, row in enumerate(rows):
            text, expected = row.rsplit("|", 1)
            lines.append({"id": f"{language[:2]}-{n:03d}", "language": language, "text": text,
                          "expected": expected or None, "split": "heldout" if n % 3 == 2 else "tune"})
    OUT.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} phrases written to {OUT.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
