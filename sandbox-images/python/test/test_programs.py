"""The built executor.py runs a job end to end over its pipes, with the package's files rules."""
import base64
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_built_executor_runs_a_job_with_its_files(tmp_path):
    env = {'PATH': '/usr/bin:/bin', 'SANDFLEET_WORKDIR': str(tmp_path / 'work')}
    p = subprocess.Popen(
        [sys.executable, '-I', os.path.join(HERE, 'executor.py')],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        ready = json.loads(p.stdout.readline())
        assert ready['op'] == 'ready' and 'bare' in ready['tiers']
        code = (
            'import os\nos.mkfifo("fifo")\nos.symlink("/proc/self", "me")\n'
            'open("out.txt", "w").write(open("in.txt").read() * 2)\nprint(6 * 7)'
        )
        frame = {
            'op': 'exec',
            'id': 'j1',
            'code': code,
            'files': {'in.txt': base64.b64encode(b'ab').decode()},
            'fetch_files': ['out.txt', 'fifo', 'me/environ', 'missing'],
            'timeout_ms': 20000,
        }
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
