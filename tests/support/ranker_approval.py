"""A threshold for the deployed relevance model, proposed, approved and withdrawn as an operator would, in a
server's own database from a child process (the MCP doors' tests: their servers are subprocesses).

The row is what `manage.py evaluate_reference_match --judge ranker --propose` stores (inactive, with the
deployed model's name and fingerprint); `approved` runs `manage.py thresholds approve ID --by USER` for a block
and `manage.py thresholds deactivate ID` after it. The certificate itself is tested in tests/evaluation: a door
test needs a threshold the reference it asks reaches, so the value is the test's.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STAFF = "ranker-staff"


def _python(env: dict[str, str], code: str) -> str:
    script = "import django\ndjango.setup()\n" + code
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def propose(env: dict[str, str], threshold: float) -> int:
    """An inactive row for the deployed model at `threshold`, and a staff member who may approve it; its ID."""
    out = _python(env, f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone
from resolver.encoders import semantic_encoder
from resolver.models import ApprovedThreshold
from resolver.rankers import current_fingerprint, relevance_model
staff, _ = get_user_model().objects.get_or_create(username={STAFF!r}, defaults={{"is_staff": True}})
staff.user_permissions.add(Permission.objects.get(codename="change_approvedthreshold"))
encoder = semantic_encoder()
row = ApprovedThreshold.objects.create(
    model=relevance_model().scorer_name(encoder.name if encoder is not None else None),
    fingerprint=current_fingerprint(), backend="ranker", probability_source="model", threshold={threshold!r},
    cases=400, admitted_accuracy=1.0, coverage=0.5, evaluated_at=timezone.now(), active=False)
print(row.pk)
""")
    return int(out.strip().splitlines()[-1])


@contextmanager
def approved(env: dict[str, str], pk: int) -> Iterator[None]:
    """The proposed row approved for the block, then deactivated, as the operator's commands do."""
    done = manage(env, "thresholds", "approve", str(pk), "--by", STAFF)
    assert done.returncode == 0, done.stderr
    try:
        yield
    finally:
        done = manage(env, "thresholds", "deactivate", str(pk))
        assert done.returncode == 0, done.stderr


def check_resolved(envelope: dict[str, Any], *, uid: str, pk: int, threshold: float) -> None:
    """A resolution by the ranker under approval `pk`, with the provenance that allowed it."""
    assert envelope["status"] == "ok" and envelope["data"]["uid"] == uid
    assert envelope["data"]["method"] == "semantic"
    provenance = envelope["data"]["judgment_provenance"]
    assert provenance["backend"] == "ranker" and provenance["threshold_id"] == pk
    assert provenance["threshold"] == threshold
    assert provenance["runner_up_probability"] < threshold <= provenance["probability"]
