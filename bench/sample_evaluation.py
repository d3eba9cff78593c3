"""A sample evaluation report: the starter case set against a synthetic loopback Jev.

    .venv/bin/python bench/sample_evaluation.py               # seed 7, output in a temp dir
    .venv/bin/python bench/sample_evaluation.py --seed 3 --out /some/dir

It starts the project's Jev contract server on loopback with a deterministic,
seeded responder, runs `manage.py evaluate_reference_match` over
resolver/evaluation/data/starter.jsonl and prints the summary.

The answers are SYNTHETIC: the responder looks up the labelled answer and is
right with a probability that depends on the case's tags. The figures show
what the report looks like and that the pipeline of evaluation, metrics and
certificate works end to end; they say nothing about Jev's real accuracy.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from io import StringIO
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django  # noqa: E402

SYNTHETIC_MODEL = "loopback-synthetic-1.0"
NO_MATCH = "no_match"
# How often the synthetic model's top option is right, by tag; a case with
# several tags takes the hardest one.
TAG_ACCURACY = {
    "paraphrase": 0.92,
    "partial": 0.95,
    "typo": 0.90,
    "near_duplicate": 0.80,
    "no_match": 0.85,
    "multilingual": 0.88,
    "numbers_in_text": 0.90,
    "abbreviation": 0.87,
}
UNTAGGED_ACCURACY = 0.95
# Tags on which a wrong answer may still come with high confidence.
CONFIDENTLY_WRONG_TAGS = frozenset({"near_duplicate", "numbers_in_text"})
LABEL = "From the loopback contract server: synthetic answers, no claim about Jev's real accuracy."


def _state_key(state: Any) -> str:
    return json.dumps(state, sort_keys=True, ensure_ascii=False)


def synthetic_answer(case: Any, options: list[str], seed: int) -> tuple[str, dict[str, float]]:
    """A deterministic (choice, probabilities) for one case: same seed, same answer."""
    rng = random.Random(f"{seed}:{case.id}")
    accuracy = min((TAG_ACCURACY.get(tag, UNTAGGED_ACCURACY) for tag in case.tags), default=UNTAGGED_ACCURACY)
    expected = str(case.expected)
    if rng.random() < accuracy:
        top_option = expected
        # Right answers are mostly confident.
        top = 0.55 + 0.445 * rng.random() ** 0.2
        runner_up = rng.choice([o for o in options if o != top_option])
    else:
        top_option = rng.choice([o for o in options if o != expected])
        ceiling = 0.9 if CONFIDENTLY_WRONG_TAGS & set(case.tags) else 0.8
        top = 0.4 + (ceiling - 0.4) * rng.random()
        # A wrong answer is usually torn with the right one.
        runner_up = expected
    second = min((1 - top) * (0.5 + 0.4 * rng.random()), top - 0.02)
    others = [o for o in options if o not in (top_option, runner_up)]
    rest = (1 - top - second) / len(others) if others else 0.0
    probabilities = {o: rest for o in options}
    probabilities[top_option] = top
    probabilities[runner_up] = second
    return top_option, {o: round(p, 6) for o, p in probabilities.items()}


def make_responder(cases: list[Any], seed: int) -> Any:
    from resolver.evaluation.runner import question_for
    from tests.support.jev_contract_server import responder

    by_state = {_state_key(question_for(case).state): case for case in cases}

    def answer(request_json: Any) -> tuple[int, dict[str, str], Any]:
        case = by_state.get(_state_key(request_json["state"]))
        if case is None:
            return 422, {}, {"error": {"message": "not a starter case"}}
        options = list(request_json["questions"]["reference_match"]["criteria"])
        choice, probabilities = synthetic_answer(case, options, seed)
        return 200, {}, {"answers": {"reference_match": {
            "type": "choice", "choice": choice, "confidence": 0.5, "probabilities": probabilities,
        }}}

    return responder(answer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7, help="Seed of the synthetic answers (default 7).")
    parser.add_argument("--out", type=Path, default=None,
                        help="Keep the report in this directory (default: a temp dir, removed afterwards).")
    parser.add_argument("--concurrency", type=int, default=4, help="Questions in flight (default 4).")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="sample-evaluation-"))
    try:
        configure_django(workdir)
        from django.conf import settings
        from django.core.management import call_command
        from django.test import override_settings

        from resolver.evaluation.cases import STARTER_CASES_PATH, load_cases
        from tests.support.jev_contract_server import JevContractServer

        cases = load_cases(STARTER_CASES_PATH)
        out_dir = args.out or workdir / "report"
        with JevContractServer(model=SYNTHETIC_MODEL, default=make_responder(cases, args.seed)) as jev:
            # No API key: the loopback server needs none, and a real key must not travel there.
            # Jev whatever RESOLVER_JUDGE says: with no Jev configured in the
            # environment the settings turn the judge off.
            judge_settings = {"TYPESAFE_BASE_URL": jev.url, "TYPESAFE_API_KEY": "",
                              "TYPESAFE_DEFAULT_MODEL": "jev-latest", "JUDGE_BACKEND": "resolver.judges.jev.JevJudge"}
            summary = StringIO()
            with override_settings(RESOLVER={**settings.RESOLVER, **judge_settings}):
                try:
                    call_command("evaluate_reference_match", "--cases", str(STARTER_CASES_PATH),
                                 "--out", str(out_dir), "--concurrency", str(args.concurrency),
                                 stdout=summary, stderr=sys.stderr)
                    code = 0
                except SystemExit as exit_:
                    code = int(exit_.code or 0)
        print(f"> {LABEL} (seed {args.seed})\n")
        print(summary.getvalue(), end="")
        print(f"\nexit code {code}; {len(jev.systemone_requests)} questions asked", file=sys.stderr)
        return code
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
