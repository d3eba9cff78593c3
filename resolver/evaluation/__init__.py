"""Earning a confidence threshold for the `reference_match.v1` question.

`cases` loads the labelled case set, `metrics` turns the model's answers into a
risk/coverage table and a recommended threshold, `report` writes what an
operator reads before approving one. Nothing here talks to Jev or the
database: the evaluation command does that and hands the results over.
"""
