"""manage.py evaluate_reference_match: earn (or fail to earn) a certified confidence threshold.

Exit codes: 0 report written, every case answered (certified or not);
1 unexpected error; 2 invalid arguments, case set or proposal, or the
built-in ranker unavailable; 4 some cases are still unanswered (run again to retry them);
5 no judge is configured; 6 the answers name more than one model; 130
interrupted. See docs/evaluation.md.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any, NoReturn, TextIO

from django.core.management.base import BaseCommand, CommandParser
from tqdm.contrib.logging import logging_redirect_tqdm

from resolver.conf import resolver_settings
from resolver.domain.errors import ResolverError
# Case IDs, reasons and model names come from a file and a judge's server: escaped (resolver/domain/escaping.py).
from resolver.domain.escaping import for_terminal as safe
from resolver import rankers
from resolver.evaluation import ranking, runner
from resolver.evaluation.cases import DEFAULT_CASES_PATH, RANKER_CASES_PATH
from resolver.evaluation.metrics import DEFAULT_ALPHA, DEFAULT_DELTA
from resolver.judges.disabled import DisabledJudge
from resolver.services import judge_from_settings

EXIT_INTERRUPTED = 130
# --judge: the judge the settings configure (Jev or an OpenAI-compatible model), or the built-in ranker.
CONFIGURED = "configured"
RANKER = "ranker"


class Command(BaseCommand):
    help = (
        "Ask the configured judge (Jev or an OpenAI-compatible model) the reference_match.v1 question for every "
        "labelled case, or score every case with the built-in ranker (--judge ranker); certify a threshold "
        "(fixed-sequence Learn-then-Test), write report.json, risk_coverage.png and summary.md, and optionally "
        "propose the certified threshold (exit 0 done, 4 cases unanswered: run again)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", default=None, metavar="PATH",
                            help="The labelled cases: a JSON Lines file, or a calendar set directory (meta.json, "
                                 "items.jsonl, references.jsonl; or a directory of such folders; --judge ranker "
                                 "only). Default: the set the package ships for that judge (candidate lists for "
                                 "a judge, two whole calendars for the ranker). See docs/evaluation.md.")
        parser.add_argument("--judge", choices=(CONFIGURED, RANKER), default=CONFIGURED,
                            help="configured: the judge the settings configure (Jev or an OpenAI-compatible "
                                 "model); ranker: the built-in ranker, scored locally (default configured).")
        parser.add_argument("--model", metavar="NAME",
                            help="Model name or alias to ask for (default: RESOLVER['TYPESAFE_DEFAULT_MODEL'], or "
                                 "RESOLVER['OPENAI_MODEL'] for the openai backend). "
                                 "The threshold is for the model the responses name.")
        parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, metavar="A",
                            help=f"The risk to certify: the share of resolved references that may be wrong "
                                 f"(default {DEFAULT_ALPHA}).")
        parser.add_argument("--delta", type=float, default=DEFAULT_DELTA, metavar="D",
                            help=f"The chance the certificate may be wrong (default {DEFAULT_DELTA}).")
        parser.add_argument("--margin", type=float, default=None, metavar="M",
                            help="Lead the top option needs over the runner-up "
                                 "(default: RESOLVER['THRESHOLD_MARGIN'], the one the pipeline applies to a judge; "
                                 "for the ranker, its own margin, or none).")
        parser.add_argument("--out", default="reference-match-evaluation", metavar="DIR",
                            help="Output directory: the report, and answers.jsonl that makes re-runs resume "
                                 "(default ./reference-match-evaluation).")
        parser.add_argument("--concurrency", type=int, default=4, metavar="N",
                            help=f"Questions in flight at once, 1 to {runner.MAX_CONCURRENCY} (default 4).")
        parser.add_argument("--propose", action="store_true",
                            help="Store the certified threshold as an inactive threshold for approval "
                                 "(the admin, or manage.py thresholds approve).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["judge"] == RANKER:
            return self._handle_ranker(options)
        margin = options["margin"]
        in_force = float(resolver_settings.THRESHOLD_MARGIN)
        run_options = runner.RunOptions(
            alpha=options["alpha"],
            delta=options["delta"],
            margin=in_force if margin is None else margin,
            concurrency=options["concurrency"],
            retrieval=rankers.deployed_retrieval(),
        )
        try:
            if options["propose"]:
                from resolver.evaluation.proposal import check_margin_in_force

                # Before asking the judge anything: a refused proposal should cost nothing.
                check_margin_in_force(margin=run_options.margin, in_force=in_force)
            judge = self._judge(options["model"])
            with self._logs_above_the_bar():
                result = runner.run_evaluation(
                    cases_path=Path(options["cases"] or DEFAULT_CASES_PATH),
                    judge=judge,
                    out_dir=Path(options["out"]),
                    options=run_options,
                    progress=self._progress_stream(),
                )
        except (runner.EvaluationError, ResolverError) as err:
            self._fail(str(err), err.exit_code)
        except KeyboardInterrupt:
            self._fail("interrupted; answers obtained so far are kept: run the same command again to resume.",
                       EXIT_INTERRUPTED)
        except OSError as err:
            self._fail(f"cannot read or write {err.filename or 'a file'}: {err.strerror or type(err).__name__}", 1)
        self._render(result)
        if not result.complete:
            if options["propose"]:
                self.stderr.write("the run is incomplete: nothing proposed.")
            raise SystemExit(runner.EXIT_INCOMPLETE)
        if options["propose"]:
            self._propose(result)

    def _handle_ranker(self, options: dict[str, Any]) -> None:
        """Score every case with the built-in ranker: local, no answer store, nothing to resume."""
        try:
            if options["model"] is not None:
                raise runner.InvalidEvaluation("--model names a judge's model; the ranker names its own")

            scorer = ranking.build_scorer()
            margin = options["margin"]
            if margin is None:
                margin = getattr(scorer, "margin", None) or 0.0
                if isinstance(margin, bool) or not isinstance(margin, (int, float)):
                    raise runner.InvalidEvaluation(f"the scorer's margin must be a number, got {margin!r}")
            run_options = runner.RunOptions(alpha=options["alpha"], delta=options["delta"], margin=float(margin),
                                            concurrency=options["concurrency"])
            result = runner.run_scorer_evaluation(cases_path=Path(options["cases"] or RANKER_CASES_PATH), scorer=scorer,
                                                  out_dir=Path(options["out"]), options=run_options,
                                                  progress=self._progress_stream())
        except (runner.EvaluationError, ResolverError) as err:
            self._fail(str(err), err.exit_code)
        except KeyboardInterrupt:
            self._fail("interrupted; nothing was written: run the same command again.", EXIT_INTERRUPTED)
        except OSError as err:
            self._fail(f"cannot read or write {err.filename or 'a file'}: {err.strerror or type(err).__name__}", 1)
        self.stderr.write(f"{result.case_count} cases scored by {safe(result.report['meta'].get('scorer'))}.")
        self.stdout.write("\n".join(safe(line) for line in result.summary.split("\n")), ending="")
        self.stderr.write(f"report written to {safe(result.out_dir)}")
        if options["propose"]:
            self._propose(result)

    def _judge(self, model: str | None) -> Any:
        judge = judge_from_settings()
        if isinstance(judge, DisabledJudge) or not dataclasses.is_dataclass(judge):
            raise runner.JudgeDisabled(
                "the judge is off: set TYPESAFE_API_KEY (hosted Jev) or TYPESAFE_BASE_URL (a Jev-compatible "
                "server), or RESOLVER_JUDGE=openai with OPENAI_BASE_URL and OPENAI_MODEL (an OpenAI-compatible "
                "chat server), and run again."
            )
        if model is not None:
            if not model.strip():
                raise runner.InvalidEvaluation("--model must not be empty")
            judge = dataclasses.replace(judge, model=model.strip())
        return judge

    def _progress_stream(self) -> TextIO:
        # The raw stream, not the OutputWrapper: the wrapper ends every write
        # with a newline, which would turn each progress redraw into a new line.
        return getattr(self.stderr, "_out", sys.stderr)

    def _logs_above_the_bar(self) -> contextlib.AbstractContextManager[None]:
        # The judge logs every attempt to the console; printed through tqdm
        # those lines scroll above the progress bar instead of breaking it.
        # Only a logger that already prints to the console is redirected, so
        # no log line appears that the project's logging would not show.
        logger = logging.getLogger("resolver")
        if any(isinstance(h, logging.StreamHandler) and h.stream in (sys.stdout, sys.stderr)
               for h in logger.handlers):
            return logging_redirect_tqdm(loggers=[logger])
        return contextlib.nullcontext()

    def _render(self, result: runner.EvaluationResult) -> None:
        self.stderr.write(
            f"{result.case_count} cases: {result.reused} answers reused from {runner.ANSWERS_FILE}, "
            f"{result.asked} asked now, {len(result.unanswered)} unanswered."
        )
        if result.unreadable_lines:
            self.stderr.write(f"warning: ignored {result.unreadable_lines} unreadable line(s) in "
                              f"{runner.ANSWERS_FILE} (a run cut short while writing?).")
        if result.rejected:
            self.stderr.write(f"warning: {result.rejected} stored answer(s) failed the answer checks "
                              "and were asked again.")
        for missing in result.unanswered:
            self.stderr.write(f"unanswered: {safe(missing.case_id)} ({safe(missing.reason)})")
        self.stdout.write("\n".join(safe(line) for line in result.summary.split("\n")), ending="")
        self.stderr.write(f"report written to {safe(result.out_dir)}")

    def _propose(self, result: runner.EvaluationResult) -> None:
        from resolver.evaluation.proposal import propose_threshold

        proposal = propose_threshold(result=result)
        if proposal is None:
            self.stderr.write("nothing certified: nothing proposed.")
            return
        row = proposal.row
        if proposal.created:
            self.stderr.write(f"proposed threshold #{row.pk}: {row.threshold:.2f} for {safe(row.model)} "
                              "(inactive until a staff member approves it: the admin, or "
                              f"manage.py thresholds approve {row.pk} --by USERNAME).")
        else:
            self.stderr.write(f"an identical proposal is already stored as threshold #{row.pk}: nothing added.")

    def _fail(self, message: str, exit_code: int) -> NoReturn:
        self.stderr.write(f"error: {safe(message)}")
        raise SystemExit(exit_code)
