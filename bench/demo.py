"""Latency against the demo calendar: one exact and one clarification resolution,
with the judge off, the loopback Jev-contract server and the loopback OpenAI-compatible server
(a valid answer with log-probabilities, and a defective answer corrected once).

    .venv/bin/python bench/demo.py [--repeat 15]

Keep --repeat at 20 or less: every round makes five API calls, and more than
120 a minute meet the API's throttle (RESOLVER_THROTTLE_RATE).

Prints medians (ms) through the service function and through POST /v1/resolve,
and the judgment's added latency (judge on minus judge off). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django, migrate_and_token, render_table, timed  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per scenario (after one warm-up)")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-demo-"))
    configure_django(workdir)
    from django.conf import settings
    from django.test import Client

    from lifeproject import embedded_radicale
    from lifeproject.seeding import demo_collections, seed
    from resolver import services
    from resolver.judges.registry import judges
    from resolver.conf import resolver_settings
    from tests.support.jev_contract_server import JevContractServer, decisive
    from tests.support.openai_contract_server import OpenAIContractServer, choose, raw

    token = migrate_and_token()
    instance, process = embedded_radicale.launch(workdir / "radicale")
    try:
        seed(instance.url, instance.username, instance.password, demo_collections(datetime.now(timezone.utc)))
        base = {"CALDAV_URL": instance.url, "CALDAV_USERNAME": instance.username,
                "CALDAV_PASSWORD": instance.password, "CALDAV_TIMEOUT": 10.0, "EVENT_HORIZON_DAYS": 90}
        client = Client(HTTP_AUTHORIZATION=f"Token {token}")
        valid, defective = choose(1, p=0.9), raw('{"candidate_number": 0, "no_match": false}')
        turns = iter(range(10**9))

        def corrected(request_json, model, logprobs):  # type: ignore[no-untyped-def]
            # Every first request of a judgment is answered defectively, its correction validly.
            return (defective if next(turns) % 2 == 0 else valid)(request_json, model, logprobs)

        judges().clear()
        with JevContractServer(default=decisive(1, p=0.9)) as jev, \
                OpenAIContractServer(default=valid) as chat, OpenAIContractServer(default=corrected) as chat_fix:
            chat_settings = {"JUDGE_BACKEND": "resolver.judges.openai.OpenAIJudge", "OPENAI_MODEL": "bench"}
            scenarios = [
                ("exact, judge off", "Draft portfolio outline", {}),
                ("clarification, judge off", "portfolio", {}),
                ("clarification, loopback Jev", "portfolio", {"TYPESAFE_BASE_URL": jev.url}),
                ("clarification, loopback OpenAI", "portfolio", {**chat_settings, "OPENAI_BASE_URL": chat.url}),
                ("clarification, OpenAI, 1 correction", "portfolio",
                 {**chat_settings, "OPENAI_BASE_URL": chat_fix.url}),
            ]
            samples = {label: {"service": [], "api": []} for label, _, _ in scenarios}
            statuses: dict[str, str] = {}
            # Interleaved: every round runs every scenario once, so load on the
            # machine weighs on all of them alike.
            for round_ in range(args.repeat + 1):
                for label, text, extra in scenarios:
                    settings.RESOLVER = {**base, **extra}
                    resolver_settings.reload()
                    body = {"text": text, "kind": "task"}
                    service_ms, _ = timed(lambda: services.answer(body, caller=services.Caller(door="bench")))
                    api_ms, response = timed(
                        lambda: client.post("/v1/resolve", body, content_type="application/json"))
                    statuses[label] = response.json()["status"]
                    if round_:  # round 0 is the warm-up
                        samples[label]["service"].append(service_ms)
                        samples[label]["api"].append(api_ms)
            medians = {label: (statistics.median(s["service"]), statistics.median(s["api"]))
                       for label, s in samples.items()}
            rows = [[label, statuses[label], f"{medians[label][0]:.1f}", f"{medians[label][1]:.1f}"]
                    for label, _, _ in scenarios]
        print(render_table(["scenario", "status", "service median ms", "api median ms"], rows))
        off, on = medians["clarification, judge off"], medians["clarification, loopback Jev"]
        print(f"\njudgment added (loopback Jev): service {on[0] - off[0]:.1f} ms, api {on[1] - off[1]:.1f} ms "
              f"(median of {args.repeat} runs each)")
        for label in ("clarification, loopback OpenAI", "clarification, OpenAI, 1 correction"):
            on = medians[label]
            print(f"judgment added ({label.split(', ', 1)[1]}): service {on[0] - off[0]:.1f} ms, "
                  f"api {on[1] - off[1]:.1f} ms")
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
