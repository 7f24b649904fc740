"""One session of a fresh built session_host.py, for the tests that drive it over its socket."""
import contextlib
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def session(tmp_path):
    """One session of a fresh session host: (its socket, a file reading its frames)."""
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
        host.stdin.write(b'{"op": "open", "sid": "s1", "memory_mb": 256}\n')
        host.stdin.flush()
        opened = json.loads(host.stdout.readline())
        assert opened['op'] == 'opened' and 'error' not in opened, opened
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(opened['socket'])
        conn.settimeout(60)  # a frame that never comes fails the test, not the suite
        yield conn, conn.makefile('rb')
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
