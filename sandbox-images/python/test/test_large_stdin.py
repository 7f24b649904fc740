"""Large stdins to many jobs at once: each executor hands a job larger than a pipe holds to its process without the
controller blocking on it, says so with a `started` frame (the runner's deadline counts from there), and answers every
job with its own status: one that reads its stdin gets all of it, one that never reads it ends as it would without."""
import hashlib
import json
import os
import subprocess
import threading

from exec_frames import exec_frame

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MiB = 1 << 20
READS = 'import sys, hashlib\nd = sys.stdin.buffer.read()\nprint(len(d), hashlib.sha256(d).hexdigest()[:12])'


def jobs_for(k):
    """Executor k's jobs: (frame, expected status, expected stdout or None)."""
    big = [(8 + 12 * i) * MiB + k for i in range(2)]  # 8 and 20 MiB
    out = []
    for i, n in enumerate(big):
        stdin = chr(97 + i + k) * n
        out.append(
            (
                exec_frame('%d-read-%d' % (k, i), READS, stdin=stdin, timeout_ms=120000),
                'ok',
                '%d %s\n' % (n, hashlib.sha256(stdin.encode()).hexdigest()[:12]),
            )
        )
        out.append(
            (
                exec_frame('%d-unread-%d' % (k, i), 'print(1)', stdin=stdin, timeout_ms=120000),
                'ok',
                '1\n',
            )
        )
    out.append(
        (
            exec_frame('%d-spins' % k, 'while True: pass', stdin='x' * (8 * MiB), timeout_ms=500),
            'timeout',
            None,
        )
    )
    out.append(
        (
            exec_frame('%d-small' % k, 'print(input())', stdin='small\n', timeout_ms=120000),
            'ok',
            'small\n',
        )
    )
    return out


def serve(k, tmp, answers):
    env = {'PATH': '/usr/bin:/bin', 'SANDFLEET_WORKDIR': str(tmp / ('work%d' % k))}
    p = subprocess.Popen(
        ['/usr/bin/python3', '-I', os.path.join(HERE, 'executor.py')],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert json.loads(p.stdout.readline())['op'] == 'ready'
        jobs = jobs_for(k)

        def write_all():  # every frame at once, from a thread of its own: the executor reads the next while a job runs
            for f, _, _ in jobs:
                p.stdin.write((json.dumps(f) + '\n').encode())
            p.stdin.flush()

        writer = threading.Thread(target=write_all)
        writer.start()
        started, results = [], {}
        while len(results) < len(jobs):
            frame = json.loads(p.stdout.readline())
            if frame['op'] == 'started':
                started.append(frame['id'])
            elif frame['op'] == 'result':
                assert frame['id'] in started or frame['id'].endswith('-small'), (
                    'a large job\'s result before its started frame: %s' % frame['id']
                )
                results[frame['id']] = frame
        writer.join()
        answers[k] = (jobs, started, results)
        p.stdin.write(b'{"op": "shutdown"}\n')
        p.stdin.flush()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()


def test_large_stdins_to_many_jobs_at_once_are_each_answered_with_their_status(tmp_path):
    answers = {}
    threads = [threading.Thread(target=serve, args=(k, tmp_path, answers)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert sorted(answers) == [0, 1, 2], 'an executor did not answer all its jobs'
    for k, (jobs, started, results) in answers.items():
        for frame, status, stdout in jobs:
            r = results[frame['id']]
            assert (r['status'], r['retire']) == (status, False), (frame['id'], r['status'], r['error'])
            if stdout is not None:
                assert r['stdout'] == stdout, (frame['id'], r['stdout'][:80])
        assert sorted(started) == sorted(
            f['id'] for f, _, _ in jobs if not f['id'].endswith('-small')
        ), 'one started frame per large job, none for a small one'
