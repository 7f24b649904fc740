"""The asyncio client against a real fleet."""
from __future__ import annotations

import asyncio
import time

import pytest

from sandfleet import AsyncClient, SessionClosedError, exec_request
from sandfleet.retry import RetryPolicy, backoff_delay_s, parse_retry_after_s


def run(coro):
    return asyncio.run(coro)


def test_concurrent_calls_are_batched_automatically_and_each_gets_its_own_result(fleet):
    async def main():
        async with AsyncClient(fleet.url) as client:
            results = await asyncio.gather(*(client.execute(f'print({i} + 1)') for i in range(48)))
            assert [r.stdout for r in results] == [f'{i + 1}\n' for i in range(48)]
            assert (
                client.coalesced['batches'] >= 1 and client.coalesced['batches'] + client.coalesced['singles'] <= 4
            ), client.coalesced

    run(main())


def test_a_cancelled_call_raises_cancelled_error_and_the_client_goes_on(fleet):
    async def main():
        async with AsyncClient(fleet.url, batch_window_s=0) as client:
            task = asyncio.create_task(client.execute('import time; time.sleep(3)', timeout_ms=800))
            await asyncio.sleep(0.3)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - started < 1
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):
                    await client.execute('import time; time.sleep(3)', timeout_ms=800)
            assert (await client.execute('print("still here")')).stdout == 'still here\n'

    run(main())


def test_a_streamed_batch_yields_each_result_as_it_finishes(fleet):
    async def main():
        async with AsyncClient(fleet.url) as client:
            seen = []
            async for index, result in client.stream_batch(
                [exec_request('import time; time.sleep(0.6); print("a")'), 'print("b")', 'print(1/0)']
            ):
                seen.append((index, result.status))
            assert seen[-1] == (0, 'ok') and sorted(seen) == [(0, 'ok'), (1, 'ok'), (2, 'error')]

    run(main())


def test_an_async_session_keeps_state_and_is_closed_at_the_end_of_its_block(fleet):
    async def main():
        async with AsyncClient(fleet.url) as client:
            async with client.session(ttl_s=60) as session:
                await session.execute('import math\nr = math.sqrt(16)')
                result = await session.execute('print(r)', fetch_files=['x.txt'], files={'x.txt': b'kept'})
                assert (result.stdout, result.files) == ('4.0\n', {'x.txt': b'kept'})
                assert session.info is not None and session.info.ttl_s == 60
            with pytest.raises(SessionClosedError):
                await session.execute('print(r)')

    run(main())


def test_backoff_is_jittered_capped_and_never_sooner_than_retry_after():
    policy = RetryPolicy(max_attempts=5, base_delay_s=0.1, max_delay_s=0.5)
    assert backoff_delay_s(policy, 1, draw=lambda: 1.0) == pytest.approx(0.1)
    assert backoff_delay_s(policy, 4, draw=lambda: 1.0) == pytest.approx(0.5)
    assert backoff_delay_s(policy, 1, retry_after_s=2.0, draw=lambda: 0.5) == 2.0
    assert parse_retry_after_s('3') == 3.0
    assert parse_retry_after_s('Wed, 21 Oct 2015 07:28:00 GMT', now=1445412470.0) == pytest.approx(10.0)
    assert parse_retry_after_s('soon') == 0.0 and parse_retry_after_s(None) == 0.0
