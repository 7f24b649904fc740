"""The built session_host.py parses each cell's frame once, as the executor does: a refused one is answered
(infra_error, BadFrame, naming the field), nothing runs, and the session keeps its state for the next cell."""
import json
import os
import socket
import subprocess
import sys

from exec_frames import exec_frame

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_cell_whose_frame_is_refused_is_answered_and_the_session_goes_on(tmp_path):
    env = {'PATH': '/usr/bin:/bin', 'HOME': str(tmp_path)}
    sockdir = tmp_path / 'sockets'
    sockdir.mkdir()
    host = subprocess.Popen(
        [sys.executable, '-I', os.path.join(HERE, 'session_host.py'), str(sockdir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=str(tmp_path),
    )
    conn = opened = None
    try:
        assert json.loads(host.stdout.readline())['op'] == 'ready'
        host.stdin.write(b'{"op": "open", "sid": "s1"}\n')
        host.stdin.flush()
        opened = json.loads(host.stdout.readline())
        assert opened['op'] == 'opened' and 'error' not in opened, opened
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(opened['socket'])
        answers = conn.makefile('rb')

        def cell(frame):
            conn.sendall((json.dumps(frame) + '\n').encode())
            return json.loads(answers.readline())

        assert cell(exec_frame('c1', 'x = 41'))['status'] == 'ok'
        refused = cell(dict(exec_frame('c2', 'x = 0'), memory_mb=None))
        assert (refused['id'], refused['status'], refused['error']['type']) == ('c2', 'infra_error', 'BadFrame')
        assert 'memory_mb' in refused['error']['message']
        missing = exec_frame('c3', 'x = 0')
        del missing['timeout_ms']
        assert 'no timeout_ms' in cell(missing)['error']['message']
        after = cell(exec_frame('c4', 'print(x + 1)'))
        assert (after['status'], after['stdout']) == ('ok', '42\n'), 'nothing of the refused cells ran'
    finally:
        if conn is not None:
            conn.close()
        if opened is not None and 'pid' in opened:
            host.stdin.write(b'{"op": "kill", "pid": %d}\n' % opened['pid'])
        host.stdin.write(b'{"op": "shutdown"}\n')
        host.stdin.close()
        try:
            host.wait(timeout=20)
        finally:
            host.kill()
