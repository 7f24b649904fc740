"""Automatic batching: single calls made within a short window travel together as one
``POST /v1/execute/batch`` (a full batch leaves at once), so thousands of concurrent tool calls
are a few dozen HTTP requests; each caller still gets its own result."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Optional

from ._answers import BAD_RESPONSE, Attempt, Transport
from .types import ExecRequest, ExecResult, is_exec_result


@dataclass
class _Pending:
    request: ExecRequest
    deadline: float
    future: 'asyncio.Future[Attempt]'


class Coalescer:
    """Gathers the calls of one event loop into batches of at most ``max_batch``."""

    def __init__(self, client: Transport, window_s: float, max_batch: int) -> None:
        self._client = client
        self._window_s = window_s
        self._max_batch = max_batch
        self._queue: list[_Pending] = []
        self._timer: Optional[asyncio.TimerHandle] = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.batches = 0
        """Batch requests sent."""
        self.singles = 0
        """Single requests sent (a window that gathered one call)."""

    async def submit(self, request: ExecRequest, deadline: float) -> 'Attempt':
        """Queues one call and waits for its attempt; cancelling the caller drops the call from its batch's answer."""
        loop = asyncio.get_running_loop()
        item = _Pending(request, deadline, loop.create_future())
        self._queue.append(item)
        if len(self._queue) >= self._max_batch:
            self.flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._window_s, self.flush)
        return await item.future

    def flush(self) -> None:
        """Sends everything queued now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._queue:
            items = [i for i in self._queue[: self._max_batch] if not i.future.done()]
            del self._queue[: self._max_batch]
            if items:
                task = asyncio.get_running_loop().create_task(self._send(items))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _send(self, items: list[_Pending]) -> None:
        deadline = max(i.deadline for i in items)
        try:
            if len(items) == 1:
                self.singles += 1
                attempts = [await self._client._post_exec('/v1/execute', items[0].request, deadline)]
            else:
                self.batches += 1
                attempts = await self._batch(items, deadline)
        except BaseException as err:  # cancelled with the loop: every waiter learns it
            for item in items:
                if not item.future.done():
                    item.future.set_exception(err if isinstance(err, Exception) else asyncio.CancelledError())
            raise
        for item, attempt in zip(items, attempts):
            if not item.future.done():
                item.future.set_result(attempt)

    async def _batch(self, items: list[_Pending], deadline: float) -> 'list[Attempt]':
        answer = await self._client._post_json('/v1/execute/batch', {'requests': [i.request for i in items]}, deadline)
        if answer.result is not None:  # no answer, or an error body: it stands for every item
            return [Attempt(answer.result, answer.retry_after_s, answer.http_status) for _ in items]
        results = answer.body.get('results') if isinstance(answer.body, dict) else None
        if not isinstance(results, list) or len(results) != len(items):
            failed = ExecResult.failed(
                'infra_error', BAD_RESPONSE, 'the batch answer does not hold one result per request'
            )
            return [Attempt(failed, 0.0, answer.http_status) for _ in items]
        return [
            Attempt(
                ExecResult.from_json(r)
                if is_exec_result(r)
                else ExecResult.failed('infra_error', BAD_RESPONSE, 'not an ExecResult'),
                answer.retry_after_s,
                answer.http_status,
            )
            for r in results
        ]
