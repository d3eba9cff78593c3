"""The evaluation's errors and exit codes (documented in docs/evaluation.md), in one place."""
from __future__ import annotations

# Exit codes of `manage.py evaluate_reference_match`.
EXIT_OK = 0
EXIT_INVALID = 2
EXIT_INCOMPLETE = 4
EXIT_JUDGE_DISABLED = 5
EXIT_MIXED_MODELS = 6


class EvaluationError(Exception):
    """A run that cannot go on; the message is for the operator, `exit_code` for scripts."""

    exit_code = 1


class InvalidEvaluation(EvaluationError):
    exit_code = EXIT_INVALID


class JudgeDisabled(EvaluationError):
    exit_code = EXIT_JUDGE_DISABLED


class MixedModels(EvaluationError):
    exit_code = EXIT_MIXED_MODELS
