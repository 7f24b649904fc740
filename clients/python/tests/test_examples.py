"""The examples run against a real fleet and get the right answers."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / 'examples'
PACKAGE = str(EXAMPLES.parent)


def run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, 'PYTHONPATH': PACKAGE},
    )


def test_the_verl_style_code_tool_keeps_each_trajectorys_state(fleet):
    done = run('verl_code_tool.py', '--url', fleet.url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '9 {' in done.stdout


def test_the_asyncio_rollout_scores_every_episode(fleet):
    done = run('asyncio_rollout.py', '--url', fleet.url, '--episodes', '8')
    assert done.returncode == 0, done.stdout + done.stderr
    assert '8/8 episodes scored, accuracy 1.000' in done.stdout
