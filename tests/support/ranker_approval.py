"""A threshold for the deployed relevance model, proposed, approved and withdrawn as an operator would, in a
server's own database from a child process (the MCP doors' tests: their servers are subprocesses).

The row is what `manage.py evaluate_reference_match --judge ranker --propose` stores (inactive, with the
deployed model's name and fingerprint); `manage.py thresholds approve ID --by USER` activates it and
`manage.py thresholds deactivate ID` withdraws it. The certificate itself is tested in tests/evaluation: a door
test needs a threshold the reference it asks reaches, so the value is the test's.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def approve(env: dict[str, str], pk: int) -> None:
    done = manage(env, "thresholds", "approve", str(pk), "--by", STAFF)
    assert done.returncode == 0, done.stderr


def deactivate(env: dict[str, str], pk: int) -> None:
    done = manage(env, "thresholds", "deactivate", str(pk))
    assert done.returncode == 0, done.stderr
