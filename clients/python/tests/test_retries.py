"""What the client retries, against a scripted answer (httpx's mock transport): only what surely did not run, unless
told; then under one request_id, naming the runner that had the call."""
from __future__ import annotations

import asyncio
import json
from typing import Callable

import httpx

from sandfleet import AsyncClient, ExecResult, may_have_run
from sandfleet.retry import RetryPolicy

FAST = RetryPolicy(max_attempts=4, base_delay_s=0.001, max_delay_s=0.005)


def result(status: str, **extra: object) -> dict:
    body = {
        'status': status,
        'stdout': '',
        'stderr': '',
        'exit_code': None,
        'duration_ms': 0,
        'queue_ms': 0,
        'truncated': {'stdout': False, 'stderr': False},
        'error': None if status == 'ok' else {'type': 'X', 'message': status},
        'files': {},
        'runner': 'runner-a',
        'sandbox': '',
    }
    body.update(extra)
    return body


def scripted(answers: list[dict], seen: list[httpx.Request]) -> Callable[[httpx.Request], httpx.Response]:
    """A client whose every request gets the next of ``answers`` (the last one again when they run out)."""

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answers[min(len(seen), len(answers)) - 1])

    return answer


def with_client(answers: list[dict], seen: list[httpx.Request], **options: object) -> AsyncClient:
    client = AsyncClient('http://fleet.test', batch_window_s=0, retry=FAST, **options)
    client._http = httpx.AsyncClient(
        base_url='http://fleet.test', transport=httpx.MockTransport(scripted(answers, seen))
    )
    return client


def test_may_have_run_reads_the_status_and_maybe_ran():
    assert may_have_run('ok') and may_have_run('timeout')
    assert not may_have_run('invalid_request')
    assert not may_have_run('overloaded') and not may_have_run('queue_timeout')
    assert may_have_run('infra_error') and may_have_run('infra_error', True)
    assert not may_have_run('infra_error', False)
    assert ExecResult.from_json(result('infra_error', maybe_ran=False)).may_have_run is False


def test_an_infra_error_that_surely_did_not_run_is_retried_one_that_may_have_is_not():
    async def main():
        seen: list[httpx.Request] = []
        async with with_client([result('infra_error', maybe_ran=False), result('ok')], seen) as client:
            assert (await client.execute('print(1)')).status == 'ok'
            assert len(seen) == 2
        seen = []
        async with with_client([result('infra_error', maybe_ran=True), result('ok')], seen) as client:
            r = await client.execute('print(1)')
            assert (r.status, r.maybe_ran, len(seen)) == ('infra_error', True, 1)

    asyncio.run(main())


def test_told_to_it_retries_what_may_have_run_under_one_request_id_naming_the_runner():
    async def main():
        seen: list[httpx.Request] = []
        answers = [result('infra_error', maybe_ran=True), result('ok', replayed=True)]
        async with with_client(answers, seen, retry_maybe_ran=True) as client:
            r = await client.execute('print(1)')
            assert (r.status, r.replayed) == ('ok', True)
        ids = [json.loads(request.content)['request_id'] for request in seen]
        assert len(ids) == 2 and ids[0] == ids[1]
        assert [request.headers.get('x-sandfleet-runner') for request in seen] == [None, 'runner-a']

    asyncio.run(main())
