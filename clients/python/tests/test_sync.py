"""The synchronous client against a real fleet."""
from __future__ import annotations

import concurrent.futures
import time

import pytest

from sandfleet import (
    Client,
    ClientClosedError,
    RetryPolicy,
    SessionClosedError,
    SessionLostError,
    is_retriable,
    STATUSES,
)


def test_a_call_returns_a_typed_result_whose_status_says_what_the_code_did(fleet):
    with Client(fleet.url) as client:
        ok = client.execute('import sys\nprint(6 * 7)\nprint("warn", file=sys.stderr)', request_id='r-1')
        assert (ok.status, ok.stdout, ok.stderr, ok.exit_code, ok.request_id) == ('ok', '42\n', 'warn\n', 0, 'r-1')
        assert ok.ok and not ok.retriable and ok.runner != '' and ok.duration_ms >= 0
        assert isinstance(ok.cpu_ms, float) and ok.cpu_ms > 0, 'the job\'s own CPU, as the fleet measured it'
        failed = client.execute('1 / 0')
        assert failed.status == 'error' and failed.error is not None and failed.error.type == 'ZeroDivisionError'
        slow = client.execute('while True: pass', timeout_ms=300)
        assert slow.status == 'timeout' and not is_retriable(slow.status)
        echoed = client.execute('print(input()[::-1])', stdin='abc\n')
        assert echoed.stdout == 'cba\n'


def test_a_call_names_its_isolation_level_and_the_result_says_the_level_it_ran_at(fleet):
    with Client(fleet.url) as client:
        forked = client.execute('print(1)', isolation='fork')
        assert (forked.status, forked.isolation) == ('ok', 'fork')
        levels = {client.execute('print(2)', isolation='reuse').isolation for _ in range(50)}
        assert 'reuse' in levels, levels  # the first may run forked while its tier's reuse process warms


def test_a_bad_request_is_invalid_request_naming_the_field_and_is_not_retried(fleet):
    with Client(fleet.url) as client:
        bad = client.execute('print(1)', timeout_ms=0)
        assert bad.status == 'invalid_request' and bad.error is not None
        assert 'timeout_ms' in bad.error.message
        assert client.stats.retries == 0


def test_files_go_in_as_bytes_or_text_and_come_back_as_bytes(fleet):
    with Client(fleet.url) as client:
        r = client.execute(
            'data = open("in.bin", "rb").read()\n'
            'open("/mnt/out.txt", "w").write(open("note.txt").read().upper() + str(len(data)))',
            files={'in.bin': bytes(range(256)), 'note.txt': 'héllo'},
            fetch_files=['/mnt/out.txt', 'missing.txt'],
        )
        assert r.status == 'ok', r
        assert r.files == {'/mnt/out.txt': 'HÉLLO256'.encode()}
        assert r.fetch_errors == {'missing.txt': 'no such file'}


def test_calls_from_many_threads_at_once_travel_as_batches(fleet):
    with Client(fleet.url, batch_window_s=0.05) as client:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda i: client.execute(f'print({i} * {i})'), range(32)))
        assert [r.stdout for r in results] == [f'{i * i}\n' for i in range(32)]
        sent = client.coalesced
        assert sent['batches'] >= 1 and sent['batches'] + sent['singles'] < 32, sent


def test_an_explicit_batch_keeps_request_order_and_a_streamed_one_yields_in_completion_order(fleet):
    with Client(fleet.url) as client:
        results = client.execute_batch(
            [f'print({i})' for i in range(10)] + [{'code': 'print("js")', 'language': 'python', 'timeout_ms': 2000}]
        )
        assert [r.stdout for r in results] == [f'{i}\n' for i in range(10)] + ['js\n']
        lines = list(client.stream_batch(['import time; time.sleep(1.0); print("slow")', 'print("fast")']))
        assert [index for index, _ in lines] == [1, 0]
        assert [r.stdout for _, r in lines] == ['fast\n', 'slow\n']


def test_a_session_keeps_state_and_once_closed_says_so_without_claiming_it_was_lost(fleet):
    with Client(fleet.url) as client:
        with client.session() as session:
            assert session.state == 'open' and session.info is not None and session.info.language == 'python'
            assert session.execute('x = 41').status == 'ok'
            r = session.execute('x + 1')
            assert r.status == 'ok' and r.display == [{'text/plain': '42'}]
            assert session.describe().cells == 2
        assert session.state == 'closed'
        with pytest.raises(SessionClosedError) as closed:
            session.execute('x')
        assert not isinstance(closed.value, SessionLostError) and '410' not in str(closed.value)
        assert closed.value.code == 'SF_ERR_CLIENT_SESSION_CLOSED'


def test_a_session_whose_sandbox_died_is_lost_and_one_whose_cell_died_keeps_its_state(fleet):
    with Client(fleet.url) as client:
        with client.session() as session:
            session.execute('x = 1')
            assert session.execute('import os; os._exit(3)').status == 'killed'
            assert session.execute('x').display == [{'text/plain': '1'}]
            with pytest.raises(SessionLostError) as lost:
                session.execute('import os; os.kill(os.getppid(), 9)')
            assert lost.value.code == 'SF_ERR_CLIENT_SESSION_LOST' and '410' in str(lost.value)
            assert session.state == 'lost'
            with pytest.raises(SessionLostError):
                session.execute('x')


def test_the_fleets_429_is_retried_after_its_retry_after(tight_fleet):
    with Client(tight_fleet.url, batch_window_s=0) as client:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            started = time.monotonic()
            first = pool.submit(client.execute, 'import time; time.sleep(0.5); print(1)')
            time.sleep(0.1)
            second = pool.submit(client.execute, 'print(2)')
            results = [first.result(), second.result()]
            elapsed = time.monotonic() - started
        assert [r.stdout for r in results] == ['1\n', '2\n']
        assert client.stats.retries >= 1
        assert elapsed >= 1.0, f'retried after {elapsed:.2f} s, before the Retry-After of 1 s'


def test_without_retries_the_429_is_an_overloaded_result_the_caller_may_retry(tight_fleet):
    with Client(tight_fleet.url, batch_window_s=0, retry=RetryPolicy(max_attempts=1)) as client:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            first = pool.submit(client.execute, 'import time; time.sleep(0.5)')
            time.sleep(0.1)
            second = client.execute('print(2)')
            first.result()
        assert second.status == 'overloaded' and second.retriable and second.status in STATUSES


def test_a_deadline_ends_the_wait_with_a_retriable_infra_error(fleet):
    with Client(fleet.url) as client:
        started = time.monotonic()
        r = client.execute('import time; time.sleep(5)', deadline_s=0.5)
        assert time.monotonic() - started < 3
        assert r.status == 'infra_error' and r.error is not None and r.error.type == 'SF_ERR_CLIENT_DEADLINE'


def test_an_unreachable_fleet_is_a_retriable_infra_error_and_a_closed_client_refuses_calls():
    client = Client('http://127.0.0.1:9', retry=RetryPolicy(max_attempts=2, base_delay_s=0.01))
    r = client.execute('print(1)')
    assert (
        r.status == 'infra_error' and r.retriable and r.error is not None and r.error.type == 'SF_ERR_CLIENT_CONNECTION'
    )
    assert client.stats.attempts == 2
    client.close()
    client.close()
    with pytest.raises(ClientClosedError):
        client.execute('print(1)')
