"""sandfleet as the code tool of a verl-style agent loop.

verl's multi-turn rollout calls a tool through four coroutines: ``create`` (per trajectory),
``execute`` (per tool call, returning the text the model sees, a step reward and metrics),
``calc_reward`` and ``release``. This class has that shape, and verl's tool loader makes it from
the tool config beside this file, ``verl_tool_config.yaml`` (its ``class_name``, then
``SandfleetCodeTool(config=…, tool_schema=…)``): put this directory on the workers' PYTHONPATH
(or copy this file into your package and change ``class_name``), then point verl at the config:

    actor_rollout_ref.rollout.multi_turn.tool_config_path=clients/python/examples/verl_tool_config.yaml

It also runs in any agent loop, made with a client of your own. One :class:`~sandfleet.AsyncClient`
serves every trajectory of the worker, so the tool calls of a whole rollout batch travel to the
fleet as a few batched HTTP requests.

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
    schema: dict[str, Any] = {
        'type': 'function',
        'function': {
            'name': 'code_interpreter',
            'description': 'Run Python code and see what it prints.',
            'parameters': {
                'type': 'object',
                'properties': {'code': {'type': 'string', 'description': 'The Python code to run.'}},
                'required': ['code'],
            },
        },
    }

    def __init__(
        self,
        client: Optional[AsyncClient] = None,
        *,
        config: Optional[dict[str, Any]] = None,
        tool_schema: Any = None,
        timeout_ms: int = 5000,
        stateful: bool = True,
        max_output_chars: int = 2000,
    ) -> None:
        """Made with a client of your own, or by verl from its tool config: ``config`` (``url``,
        ``api_key``, ``timeout_ms``, ``stateful``, ``max_output_chars``) and ``tool_schema`` (the
        schema the model is shown: a dict, or verl's model of one)."""
        config = dict(config or {})
        self.url = str(config.get('url', 'http://127.0.0.1:8080'))
        self.api_key = config.get('api_key')
        self.timeout_ms = int(config.get('timeout_ms', timeout_ms))
        self.stateful = bool(config.get('stateful', stateful))
        self.max_output_chars = int(config.get('max_output_chars', max_output_chars))
        if tool_schema is not None:
            dump = getattr(tool_schema, 'model_dump', None)
            self.schema = dump(exclude_none=True) if callable(dump) else dict(tool_schema)
            self.name = self.schema['function']['name']
        self._client = client
        self.sessions: dict[str, Optional[AsyncSession]] = {}

    @property
    def client(self) -> AsyncClient:
        """The client given, or one to ``config['url']``, made on first use (in the worker's event loop)."""
        if self._client is None:
            self._client = AsyncClient(self.url, api_key=self.api_key)
        return self._client

    def get_openai_tool_schema(self) -> Any:
        """The schema the model is shown (what verl asks a tool for): verl's model of it where verl
        is installed, else the dict."""
        try:
            from verl.tools.schemas import OpenAIFunctionToolSchema  # type: ignore[import-not-found]
        except ImportError:
            return self.schema
        return OpenAIFunctionToolSchema.model_validate(self.schema)

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
