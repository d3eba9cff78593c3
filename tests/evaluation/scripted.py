"""A hand-computed case set and a contract-server responder that answers it.

Twelve task cases, three candidates each (options "1", "2", "3", "no_match").
The responder recognises a case by `state.user_reference` and answers with the
scripted top option and probability; unless a case says otherwise, the
runner-up gets 0.6 of what is left and the other two options 0.2 each, so
every admitted case clears the 0.1 margin.

   case  expected   answer (p)          correct  admitted at t <= p (margin 0.1)?
   a     1          1 (0.97)            yes      yes
   b     2          2 (0.95)            yes      yes
   c     1          1 (0.92)            yes      yes
   d     3          3 (0.90)            yes      yes
   e     1          1 (0.86)            yes      yes
   f     2          2 (0.83)            yes      yes
   g     2          1 (0.78)            NO       yes
   h     1          1 (0.74)            yes      yes
   i     no_match   2 (0.66)            NO       yes  (a no_match case resolved)
   j     no_match   no_match (0.88)     yes      never: no_match resolves nothing
   k     2          2 (0.50, 2nd 0.45)  yes      never: lead 0.05 < margin
   l     1          2 (0.40, 2nd 0.35)  NO       never: lead 0.05 < margin

Threshold points (12 cases), upper = one-sided Clopper-Pearson bound at
1 - delta with delta 0.025 (the two-sided 95% interval's upper limit):

   thresholds    admitted         coverage  errors  risk   upper
   0.00 - 0.66   a-i   9          75.0%     2 (g,i) 2/9    0.6001
   0.67 - 0.74   a-h   8          66.7%     1 (g)   1/8    0.5265
   0.75 - 0.78   a-g   7          58.3%     1 (g)   1/7    0.5787
   0.79 - 0.83   a-f   6          50.0%     0       0      1 - 0.025^(1/6) = 0.4593
   0.84 - 0.86   a-e   5          41.7%     0       0      1 - 0.025^(1/5) = 0.5218
   0.87 - 0.90   a-d   4          33.3%     0       0      1 - 0.025^(1/4) = 0.6024
   0.91 - 0.92   a-c   3
   0.93 - 0.95   a-b   2
   0.96 - 0.97   a     1
   0.98 - 1.00   -     0          0.0%            risk and upper: none

The certificate at alpha 0.46, delta 0.025: a threshold needs at least 6
accepted cases (0.54^5 = 0.0459 > 0.025 >= 0.54^6 = 0.0248), so 1.00 - 0.84
are passed over; 0.83 - 0.79 (6 accepted, no error) have p-value
0.54^6 = 0.0248 <= 0.025 and are rejected; 0.78 (7 accepted, 1 error) has
p-value 0.54^7 + 7 * 0.46 * 0.54^6 = 0.0933 > 0.025: the sequence stops, and
0.79 is certified. At alpha 0.45 a threshold needs 7 (0.55^7 = 0.0152), the
first tested is 0.78 with p-value 0.55^7 + 7 * 0.45 * 0.55^6 = 0.1024:
nothing is certified.

Accuracy of the top option by tag: all 9/12 (g, i, l wrong); typo (a, g, l)
1/3; paraphrase (b, c, k) 3/3; no_match (i, j) 1/2; partial (d, e, f, h) 4/4.
"""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from resolver.judges.registry import judges

from tests.support.jev_contract_server import Behaviour, responder

TITLES = ("Book the dentist", "Renew the passport", "Water the plants")

# id, reference, expected, tags, (top option, top probability[, runner-up probability])
HAND_SET: list[tuple[str, str, int | str, list[str], tuple[Any, ...]]] = [
    ("a", "dentst", 1, ["typo"], ("1", 0.97)),
    ("b", "passport renewal", 2, ["paraphrase"], ("2", 0.95)),
    ("c", "teeth appointment", 1, ["paraphrase"], ("1", 0.92)),
    ("d", "plants", 3, ["partial"], ("3", 0.90)),
    ("e", "dentist", 1, ["partial"], ("1", 0.86)),
    ("f", "passport", 2, ["partial"], ("2", 0.83)),
    ("g", "pasport", 2, ["typo"], ("1", 0.78)),
    ("h", "book", 1, ["partial"], ("1", 0.74)),
    ("i", "feed the cat", "no_match", ["no_match"], ("2", 0.66)),
    ("j", "car insurance", "no_match", ["no_match"], ("no_match", 0.88)),
    ("k", "travel papers", 2, ["paraphrase"], ("2", 0.50, 0.45)),
    ("l", "dntst", 1, ["typo"], ("2", 0.40, 0.35)),
]
ANSWERS = {reference: answer for _, reference, _, _, answer in HAND_SET}
CERTIFIED = 0.79
ALPHA = "0.46"
DELTA = "0.025"

# threshold -> (admitted, errors, no_match_resolved, risk upper bound)
EXPECTED_POINTS: dict[float, tuple[int, int, int, float | None]] = {
    0.0: (9, 2, 1, 0.6001),
    0.66: (9, 2, 1, 0.6001),
    0.67: (8, 1, 0, 0.5265),
    0.74: (8, 1, 0, 0.5265),
    0.75: (7, 1, 0, 0.5787),
    0.78: (7, 1, 0, 0.5787),
    0.79: (6, 0, 0, 1 - 0.025 ** (1 / 6)),
    0.83: (6, 0, 0, 1 - 0.025 ** (1 / 6)),
    0.84: (5, 0, 0, 1 - 0.025 ** (1 / 5)),
    0.9: (4, 0, 0, 1 - 0.025 ** (1 / 4)),
    0.92: (3, 0, 0, 1 - 0.025 ** (1 / 3)),
    0.95: (2, 0, 0, 1 - 0.025 ** (1 / 2)),
    0.97: (1, 0, 0, 0.975),
    0.98: (0, 0, 0, None),
}
EXPECTED_BY_TAG = {
    "all": (12, 9),
    "no_match": (2, 1),
    "paraphrase": (3, 3),
    "partial": (4, 4),
    "typo": (3, 1),
}


def case_line(case_id: str, reference: str, expected: int | str, tags: list[str]) -> str:
    candidates = [
        {"title": title, "collection": "personal", "status": "NEEDS-ACTION", "due": f"2025-06-0{n}"}
        for n, title in enumerate(TITLES, start=1)
    ]
    return json.dumps(
        {"id": case_id, "reference": reference, "kind": "task", "candidates": candidates,
         "expected": expected, "tags": tags}
    )


def write_hand_set(path: Path) -> Path:
    path.write_text("".join(case_line(*row[:4]) + "\n" for row in HAND_SET), encoding="utf-8")
    return path


def distribution(options: list[str], answer: tuple[Any, ...]) -> dict[str, float]:
    top_key, top = answer[0], answer[1]
    runner = answer[2] if len(answer) > 2 else round(0.6 * (1 - top), 6)
    others = [o for o in options if o != top_key]
    rest = (1 - top - runner) / (len(others) - 1)
    probabilities = {o: rest for o in others}
    probabilities[others[0]] = runner
    probabilities[top_key] = top
    return {o: probabilities[o] for o in options}


def answer_body(request_json: Any, answer: tuple[Any, ...]) -> dict[str, Any]:
    question = request_json["questions"]["reference_match"]
    probabilities = distribution(list(question["criteria"]), answer)
    return {"answers": {"reference_match": {
        "type": "choice", "choice": answer[0], "confidence": 0.5, "probabilities": probabilities,
    }}}


def hand_set_responder(
    *,
    failing: set[str] | None = None,
    models: dict[str, str] | None = None,
    extra: dict[str, tuple[Any, ...]] | None = None,
) -> Behaviour:
    """Answer the hand set; references in `failing` get a 429 the judge will not wait for.

    `failing` is read on every request, so a test can empty it between runs.
    `models` maps a reference to the model name its response reports;
    `extra` answers references that are not in the hand set.
    """
    answers = {**ANSWERS, **(extra or {})}

    def answer(request_json: Any) -> tuple[int, dict[str, str], Any]:
        reference = request_json["state"]["user_reference"]
        if failing is not None and reference in failing:
            # Longer than any judgment budget: the judge gives up at once.
            return 429, {"retry-after-ms": "600000"}, {"error": {"message": "rate limited"}}
        body = answer_body(request_json, answers[reference])
        if models and reference in models:
            body["model"] = models[reference]
        return 200, {}, body

    return responder(answer)


def fresh_jev_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give the judge a new requests Session for this test.

    The process keeps one judge, with its Session, per configuration (resolver/judges/registry.py),
    and every contract server listens
    on a new port: after about ten of them the Session's pool manager is full,
    and with the installed urllib3 (urllib3-future) several threads asking
    for a new host at once can wait forever for a pool to evict. One Jev host
    per process, as in production, never gets there.
    """
    judges().clear()


def run_command(*args: str) -> tuple[int, str, str]:
    """Run evaluate_reference_match; (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    try:
        call_command("evaluate_reference_match", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    else:
        code = 0
    return code, out.getvalue(), err.getvalue()


def read_report(out_dir: Path) -> dict[str, Any]:
    return json.loads((out_dir / "report.json").read_text(encoding="utf-8"))


def point(report: dict[str, Any], threshold: float) -> dict[str, Any]:
    return next(p for p in report["points"] if p["threshold"] == threshold)
