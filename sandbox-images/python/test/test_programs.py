"""The built executor.py runs a job end to end over its pipes, with the package's files rules."""
import base64
import json
import os

from exec_frames import exec_frame, exec_line, start_executor


def test_the_built_executor_runs_a_job_with_its_files(tmp_path):
    p = start_executor(tmp_path / 'work')
    try:
        ready = json.loads(p.stdout.readline())
        assert ready['op'] == 'ready' and 'bare' in ready['tiers']
        code = (
            'import os\nos.mkfifo("fifo")\nos.symlink("/proc/self", "me")\n'
            'open("out.txt", "w").write(open("in.txt").read() * 2)\nprint(6 * 7)'
        )
        frame = exec_frame(
            'j1',
            code,
            files={'in.txt': base64.b64encode(b'ab').decode()},
            fetch_files=['out.txt', 'fifo', 'me/environ', 'missing'],
            timeout_ms=20000,
        )
        p.stdin.write((json.dumps(frame) + '\n').encode())
        p.stdin.flush()
        while True:
            result = json.loads(p.stdout.readline())
            if result['op'] == 'result':
                break
        assert (result['id'], result['status'], result['stdout'], result['tier']) == (
            'j1',
            'ok',
            '42\n',
            'bare',
        ), result
        assert result['files'] == {'out.txt': base64.b64encode(b'abab').decode()}
        assert sorted(result['fetch_errors']) == ['fifo', 'me/environ', 'missing'], result['fetch_errors']
        assert (result['fetch_errors']['fifo'], result['fetch_errors']['missing']) == (
            'not a regular file',
            'no such file',
        )
        assert 'a link leads out' in result['fetch_errors']['me/environ']
        assert os.listdir(tmp_path / 'work') == [], 'the work dir is emptied after the job'
        p.stdin.write(b'{"op": "shutdown"}\n')
        p.stdin.flush()
        assert p.wait(timeout=20) == 0
    finally:
        if p.poll() is None:
            p.kill()


def answers(p, op='result'):
    """The next frame of kind `op` the executor writes."""
    while True:
        frame = json.loads(p.stdout.readline())
        if frame['op'] == op:
            return frame


def test_a_malformed_frame_is_refused_at_its_parse_and_the_executor_goes_on(tmp_path):
    p = start_executor(tmp_path / 'work')
    try:
        answers(p, 'ready')
        whole = exec_frame('m0', 'print(1)')
        refused = [
            ({k: v for k, v in whole.items() if k != 'timeout_ms'}, 'no timeout_ms'),
            (dict(whole, id='m2', memory_mb='1024'), 'memory_mb is not an integer'),
            (dict(whole, id='m3', timeout_ms=0), 'timeout_ms is not an integer of at least 1'),
            (dict(whole, id='m4', isolation='vm'), 'isolation is not one of fork, reuse'),
            (dict(whole, id='m5', files={'a': 1}), 'files is not an object'),
            (dict(whole, id='m6', fetch_files='out.txt'), 'fetch_files is not a list'),
            (dict(whole, id='m7', wait_ms=-1), 'wait_ms is not null or a number'),
            (dict(whole, id='m8', tenant=7), 'tenant is not null or a string'),
            (dict(whole, id='m9', stdin=None), 'stdin is not a string'),
        ]
        refused[0][0]['id'] = 'm1'
        for frame, why in refused:
            p.stdin.write((json.dumps(frame) + '\n').encode())
            p.stdin.flush()
            result = answers(p)
            assert (result['id'], result['status'], result['error']['type']) == (frame['id'], 'infra_error', 'BadFrame')
            assert why in result['error']['message'], result
            assert result['retire'] is False and result['stdout'] == ''
        # A frame that names no job is logged; one that is not JSON too. Neither is answered as a job.
        for line in (
            b'{"op": "exec", "code": "print(1)"}\n',
            b'not json\n',
            b'[1, 2]\n',
            b'{"op": "dance", "id": "x"}\n',
        ):
            p.stdin.write(line)
            p.stdin.flush()
            if line.startswith(b'{"op": "dance"'):
                result = answers(p)
                assert (result['id'], result['error']['type']) == ('x', 'BadFrame')
                assert 'no known op' in result['error']['message']
            else:
                assert 'frame refused' in answers(p, 'log')['message']
        p.stdin.write(exec_line('ok', 'print(6 * 7)'))
        p.stdin.flush()
        result = answers(p)
        assert (result['id'], result['status'], result['stdout']) == ('ok', 'ok', '42\n')
        p.stdin.write(b'{"op": "shutdown"}\n')
        p.stdin.flush()
        assert p.wait(timeout=20) == 0
    finally:
        if p.poll() is None:
            p.kill()
