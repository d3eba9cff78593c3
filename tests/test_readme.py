"""The README's commands, run as a person would run them against the demo.

A fenced `sh` block preceded by `<!-- runnable: demo -->` (or `demo --per-user`)
is run, line by line in one bash, against a demo started as `bin/run` (or
`bin/run --per-user`) starts it: on free ports and a var/ of its own, which the
test substitutes for the README's 127.0.0.1:8000, 127.0.0.1:5232 and `var/`.
Each command must exit 0, or the code its `# exit N` comment names. Every
other `sh` block says why it is not run (`<!-- not run by the README test: ... -->`).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lifeproject.embedded_radicale import free_port
from tests.support.processes import stop

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARK = re.compile(r"<!-- (runnable: (?P<mode>demo(?: --per-user)?)|not run by the README test: (?P<why>[^>]+)) -->\n"
                  r"```sh\n(?P<body>.*?)```", re.S)


def _blocks() -> list[re.Match[str]]:
    return list(MARK.finditer(README.read_text(encoding="utf-8")))


def _commands(body: str) -> list[tuple[str, int]]:
    """(command, expected exit) per logical line: continuation lines joined, comments read for `exit N`."""
    commands, pending = [], ""
    for line in body.splitlines():
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        if pending.strip():
            expected = re.search(r"#\s*exit (\d+)", pending)
            commands.append((pending, int(expected.group(1)) if expected else 0))
        pending = ""
    return commands


def test_readme__every_sh_block_is_run_or_says_why_not():
    text = README.read_text(encoding="utf-8")
    fences = text.count("```sh\n")
    assert fences == len(_blocks()), "an sh block without a runnable / not-run marker"
    assert all(m.group("mode") or m.group("why").strip() for m in _blocks())
    assert len(text.splitlines()) < 400


def test_commands__joins_continuations_and_reads_expected_exits():
    body = 'a --x \\\n   --y   # exit 3\nb\n\n'
    assert _commands(body) == [("a --x     --y   # exit 3", 3), ("b", 0)]


def test_script__a_command_that_exits_otherwise_fails_the_run(tmp_path):
    script = _script([("true", 0), ("(exit 3)  # exit 3", 3), ("false", 0), ("echo never", 0)],
                     web=1, radicale=2, var_dir=tmp_path)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "README command 3 exited 1, not 0" in done.stderr and "never" not in done.stdout


def test_script__the_demos_ports_and_var_dir_replace_the_readmes(tmp_path):
    script = _script([("curl http://127.0.0.1:8000/x http://127.0.0.1:5232/ && cat var/radicale/password", 0)],
                     web=18001, radicale=18002, var_dir=tmp_path)
    assert f"curl http://127.0.0.1:18001/x http://127.0.0.1:18002/ && cat {tmp_path}/radicale/password" in script


def _script(commands: list[tuple[str, int]], *, web: int, radicale: int, var_dir: Path) -> str:
    lines = []
    for number, (command, expected) in enumerate(commands, 1):
        command = (command.replace("127.0.0.1:8000", f"127.0.0.1:{web}")
                   .replace("127.0.0.1:5232", f"127.0.0.1:{radicale}"))
        command = re.sub(r"(?<![\w/])var/", f"{var_dir}/", command)
        lines.append(command)
        lines.append(f'rc=$?; if [ "$rc" -ne {expected} ]; then echo "README command {number} exited $rc, '
                     f'not {expected}" >&2; exit 1; fi')
    return "\n".join(lines) + "\n"


def _start(var_dir: Path, mode: str) -> tuple[subprocess.Popen[str], int, int]:
    web, radicale = free_port(), free_port()
    env = {"PATH": os.environ.get("PATH", ""), "LIFEPROJECT_VAR_DIR": str(var_dir), "PORT": str(web),
           "RADICALE_PORT": str(radicale), "TYPESAFE_BASE_URL": "", "TYPESAFE_API_KEY": ""}
    args = [sys.executable, "-m", "lifeproject.dev"] + (["--per-user"] if mode.endswith("--per-user") else [])
    run = subprocess.Popen(args, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    deadline, banner = time.monotonic() + 180, ""
    while "manage.py resolve" not in banner and time.monotonic() < deadline and run.poll() is None:
        banner += run.stdout.readline()
    assert "is running" in banner, banner
    return run, web, radicale


def _stop(run: subprocess.Popen[str]) -> None:
    stop(run)


# What each mode's blocks must show, beyond their exit codes.
EXPECTED = {
    "demo": ["/demo/work/demo-weekly-sync.ics", '"status":"needs_clarification"', '"collection_id":"personal"',
             "\n200\n", '"serverInfo":{"name":"lifeproject-resolver"',
             # "the dentist" after the relevance model's certificate is approved: resolved on its own.
             '"method": "semantic"', '"backend": "ranker"'],
    "demo --per-user": ["demo/work", "/demo/work/demo-weekly-sync.ics", "removed "],
}


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_readme__runnable_blocks_work_against_the_demo(tmp_path, mode):
    blocks = [m for m in _blocks() if m.group("mode") == mode]
    assert blocks
    run, web, radicale = _start(tmp_path / "var", mode)
    try:
        commands = [c for block in blocks for c in _commands(block.group("body"))]
        script = _script(commands, web=web, radicale=radicale, var_dir=tmp_path / "var")
        # The shell a person types into: nothing of the test's environment but PATH and the moved var/.
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LIFEPROJECT_VAR_DIR": str(tmp_path / "var")}
        done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        for expected in EXPECTED[mode]:
            assert expected in done.stdout, (expected, done.stdout[-2000:])
    finally:
        _stop(run)
