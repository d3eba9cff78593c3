"""Child processes the tests start (bin/run, the demo): stopped the way a person stops them."""
from __future__ import annotations

import signal
import subprocess


def stop(run: subprocess.Popen[str]) -> None:
    """SIGTERM (Ctrl-C's polite sibling), then a kill if it has not ended within 30 s."""
    if run.poll() is None:
        run.send_signal(signal.SIGTERM)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()
