"""sandfleet as the code tool of a verl-style agent loop.

verl's multi-turn rollout calls a tool through four coroutines: ``create`` (per trajectory),
``execute`` (per tool call, returning the text the model sees, a step reward and metrics),
``calc_reward`` and ``release``. This class has that shape; register it in verl's tool config
(subclassing ``verl.tools.base_tool.BaseTool``) or call it from any agent loop. One
:class:`~sandfleet.AsyncClient` serves every trajectory of the worker, so the tool calls of a
whole rollout batch travel to the fleet as a few batched HTTP requests.

    python3 examples/verl_code_tool.py --url http://127.0.0.1:8080
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from typing import Any, Optional

from sandfleet import AsyncClient, AsyncSession, SessionLostError


class SandfleetCodeTool:
    """A Python interpreter tool: each trajectory gets a session (state kept across its calls)
    when ``stateful``, or runs every call fresh."""

    name = 'code_interpreter'
    schema = {
        'type': 'function',
        'function': {
            'name': 'code_interpreter',
            'description': 'Run Python code and see what it prints.',
            'parameters': {'type': 'object', 'properties': {'code': {'type': 'string'}}, 'required': ['code']},
        },
    }

    def __init__(
        self, client: AsyncClient, *, timeout_ms: int = 5000, stateful: bool = True, max_output_chars: int = 2000
    ) -> None:
        self.client = client
        self.timeout_ms = timeout_ms
        self.stateful = stateful
        self.max_output_chars = max_output_chars
        self.sessions: dict[str, Optional[AsyncSession]] = {}

    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> str:
        instance_id = instance_id or uuid.uuid4().hex
        self.sessions[instance_id] = await self.client.create_session(ttl_s=600) if self.stateful else None
        return instance_id

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[str, float, dict[str, Any]]:
        code = str(parameters.get('code', ''))
        session = self.sessions.get(instance_id)
        try:
            result = await (
                session.execute(code, timeout_ms=self.timeout_ms)
                if session
                else self.client.execute(code, timeout_ms=self.timeout_ms)
            )
        except SessionLostError:  # the fleet lost the sandbox: say so, start the state afresh
            self.sessions[instance_id] = await self.client.create_session(ttl_s=600)
            return (
                'The interpreter restarted; its state was lost. Run your code again.',
                0.0,
                {'status': 'session_lost'},
            )
        text = result.stdout + result.stderr
        if result.display:
            text += ''.join(d.get('text/plain', '') + '\n' for d in result.display)
        if result.status not in ('ok', 'error'):
            text += f'[{result.status}]'
        # A fleet fault (retriable, after the client's own retries) is not the model's fault:
        # report it in the metrics so the trainer can mask the sample instead of penalising it.
        return text[-self.max_output_chars :], 0.0, {'status': result.status, 'fleet_fault': result.retriable}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        return 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        session = self.sessions.pop(instance_id, None)
        if session is not None:
            await session.close()


async def demo(url: str) -> int:
    async with AsyncClient(url) as client:
        tool = SandfleetCodeTool(client)
        trajectories = [await tool.create() for _ in range(4)]
        # Turn 1 of every trajectory at once (batched), then turn 2 uses each one's state.
        await asyncio.gather(*(tool.execute(t, {'code': f'n = {i}'}) for i, t in enumerate(trajectories)))
        outputs = await asyncio.gather(*(tool.execute(t, {'code': 'print(n ** 2)'}) for t in trajectories))
        for text, _, metrics in outputs:
            print(text.strip(), metrics)
        await asyncio.gather(*(tool.release(t) for t in trajectories))
        return 0 if [o[0] for o in outputs] == [f'{i * i}\n' for i in range(4)] else 1


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--url', default='http://127.0.0.1:8080')
    sys.exit(asyncio.run(demo(parser.parse_args().url)))
