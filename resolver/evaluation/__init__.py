"""Earning a certified confidence threshold for the `reference_match.v1` question.

`cases` loads the labelled case sets (JSON Lines, or a calendar set),
`metrics` turns the answers into the risk-coverage curve and the certificate
(fixed-sequence Learn-then-Test with exact binomial tests), `report` writes
what an operator reads before approving one; none of these three talks to Jev
or the database. `runner` asks a judge every case, or lets a local scorer
(`ranking`, the built-in ranker) answer them, and writes the report (plain
Python, no Django), and `proposal` stores a certificate as an inactive
threshold: `manage.py evaluate_reference_match` drives both.
"""
