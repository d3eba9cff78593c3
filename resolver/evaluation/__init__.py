"""Earning a confidence threshold for the `reference_match.v1` question.

`cases` loads the labelled case set, `metrics` turns the model's answers into a
risk/coverage table and a recommended threshold, `report` writes what an
operator reads before approving one; none of these three talks to Jev or
the database. `runner` asks a judge every case and writes the report (plain
Python, no Django), and `proposal` stores a recommendation as an inactive
threshold: `manage.py evaluate_reference_match` drives both.
"""
