"""Where a cold, warm and churn resolution spend their time (cProfile, in process).

    .venv/bin/python bench/profile_resolve.py --size 1000 --kind task
    .venv/bin/python bench/profile_resolve.py --size 1000 --kind event --top 40
    .venv/bin/python bench/profile_resolve.py --size 1000 --server davical --no-profile

One Radicale on loopback (bench/corpus.py) holds N tasks and N events. After
a warm-up, the plain full read (bench/resolve.py `make_plain_read`) and the
resolver's cold / warm / churn resolutions are timed interleaved (medians and
ratios in the same run), then one of each resolution runs under cProfile and
the functions with the most cumulative and own time are printed. Nothing is
asserted; the figures go to stdout.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django, launch_peer, launch_radicale, timed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--kind", choices=("task", "event"), default="task")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--server", choices=("radicale", "davical", "cyrus", "sogo"), default="radicale")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    try:
        configure_django(workdir)
        from django.test import override_settings

        from bench.resolve import REFERENCES, CHURN_FRACTION, Churner, forget_process_state, make_plain_read
        from resolver import services

        server = launch_radicale(args.size) if args.server == "radicale" else launch_peer(args.server, args.size)
        print(f"seeded in {server.seed_seconds:.1f} s", flush=True)
        try:
            with override_settings(RESOLVER=server.resolver_settings(RESOLUTION_BUDGET_SECONDS=600.0)):
                text = REFERENCES[args.kind]["fuzzy"]
                plain = make_plain_read(server, args.kind)
                churner = Churner(server, args.kind)

                def resolve():
                    request = {"text": text, "kind": args.kind}
                    if server.collection_ids:
                        request["collection_ids"] = list(server.collection_ids)
                    return services.answer(request, caller=services.Caller(door="api")).outcome

                plain(), forget_process_state(), resolve(), resolve(), churner.churn(CHURN_FRACTION), resolve()
                samples: dict[str, list[float]] = {"plain": [], "cold": [], "warm": [], "churn": []}
                for rep in range(args.repeat):
                    gc.collect()
                    samples["plain"].append(timed(plain)[0])
                    forget_process_state()
                    gc.collect()
                    samples["cold"].append(timed(resolve)[0])
                    gc.collect()
                    samples["warm"].append(timed(resolve)[0])
                    churner.churn(CHURN_FRACTION)
                    gc.collect()
                    samples["churn"].append(timed(resolve)[0])
                floor = statistics.median(samples["plain"])
                for name, values in samples.items():
                    median = statistics.median(values)
                    print(f"{name:6} median {median:8.1f} ms  min {min(values):8.1f} ms  x plain {median / floor:.2f}")
                if args.no_profile:
                    return 0
                for name in ("cold", "warm", "churn"):
                    if name == "cold":
                        forget_process_state()
                    if name == "churn":
                        churner.churn(CHURN_FRACTION)
                    gc.collect()
                    profile = cProfile.Profile()
                    profile.enable()
                    resolve()
                    profile.disable()
                    for order in ("cumulative", "tottime"):
                        out = io.StringIO()
                        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.top)
                        print(f"\n==== {name} ({order}) ====")
                        print(out.getvalue().split("\n", 6)[-1])
        finally:
            server.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
