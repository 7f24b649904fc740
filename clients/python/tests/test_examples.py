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


def test_verls_tool_config_makes_the_tool_as_verl_does_and_it_runs(fleet):
    """The YAML beside the class, read as verl's loader reads it: the class its class_name names,
    made with its config and tool_schema; the schema it shows the model is the file's."""
    import asyncio
    import importlib

    import yaml

    [entry] = yaml.safe_load((EXAMPLES / 'verl_tool_config.yaml').read_text())['tools']
    module_name, _, class_name = entry['class_name'].rpartition('.')
    sys.path.insert(0, str(EXAMPLES))
    try:
        tool_class = getattr(importlib.import_module(module_name), class_name)
    finally:
        sys.path.remove(str(EXAMPLES))
    tool = tool_class(config={**entry['config'], 'url': fleet.url}, tool_schema=entry['tool_schema'])
    assert tool.get_openai_tool_schema() == entry['tool_schema']
    assert tool.name == entry['tool_schema']['function']['name'] == 'code_interpreter'
    assert tool.schema == tool_class.schema, "the file's schema is the class's own"

    async def trajectory() -> list[str]:
        instance = await tool.create()
        texts = []
        for code in ('x = 41', 'print(x + 1)'):
            text, reward, metrics = await tool.execute(instance, {'code': code})
            assert reward == 0.0 and metrics['fleet_fault'] is False, metrics
            texts.append(text)
        await tool.release(instance)
        await tool.client.close()
        return texts

    assert asyncio.run(trajectory()) == ['', '42\n']
