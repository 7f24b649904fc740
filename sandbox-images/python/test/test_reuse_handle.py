"""The controller's handle on a reuse process holds what the process says to what it reads from outside.

Each test forks a real process that plays a reuse process taken over by its job: it knows the nonce of its job (a job
that reached its process's state would), so every frame it writes is one the real loop could have written; what gives
it away is what the controller reads from outside it: it keeps running past its verdict, it does not read its next job,
it runs while it should be idle, it writes after its end, it has a thread at its end.
"""
import marshal
import os
import signal
import threading
import time

import pytest

from sandfleet_sandbox.reuse_handle import ReuseHandle


def job(nonce, code='print(1)'):
    payload = marshal.dumps((code, None, 0, {}, nonce, False))  # stdin: none (its length, 0, then its bytes)
    return len(payload).to_bytes(8, 'little') + payload


def read_job(fd):
    head = os.read(fd, 8)
    n = int.from_bytes(head, 'little')
    data = b''
    while len(data) < n:
        data += os.read(fd, n - len(data))
    return marshal.loads(data)


def forger(behaviour):
    """A process that speaks the protocol with its job's nonce, then does `behaviour`; and the controller's handle."""
    job_r, job_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (job_w, out_r, err_r, rep_r):
                os.close(fd)
            os.write(rep_w, b'\nR\n')
            behaviour(job_r, out_w, rep_w)
        finally:
            os._exit(0)
    for fd in (job_r, out_w, err_w, rep_w):
        os.close(fd)
    for fd in (out_r, err_r, rep_r):
        os.set_blocking(fd, False)
    return pid, ReuseHandle(pid, (job_w, out_r, err_r, rep_r))


def wait(pred, s=10):
    until = time.monotonic() + s
    while not pred():
        assert time.monotonic() < until, 'timed out'
        time.sleep(0.005)


def ended(job_r, rep_w):
    """Reads a job and writes its end and its verdict, with its nonce."""
    nonce = read_job(job_r)[4]
    os.write(rep_w, b'\nD{"nonce": "%s", "status": 0, "report": null}\n' % nonce.encode())
    os.write(rep_w, b'\nV{"nonce": "%s", "retire": null}\n' % nonce.encode())


def spin():
    while True:
        pass


@pytest.fixture
def cleanup():
    pids = []
    yield pids.append
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


def start(behaviour, cleanup):
    pid, r = forger(behaviour)
    cleanup(pid)
    wait(lambda: (r.read(), r.state)[1] == 'idle')
    assert r.settled(), 'a process just ready is blocked reading its first job'
    return pid, r


def hand(r, nonce):
    r.thaw()
    assert r.send(job(nonce), 5)
    r.begin(nonce, None)


def test_a_process_that_forges_its_end_and_keeps_running_is_found_running_and_stopped_for_another_tenant(cleanup):
    def behaviour(job_r, out_w, rep_w):
        ended(job_r, rep_w)
        spin()  # its job's code goes on: the next job is never read

    pid, r = start(behaviour, cleanup)
    hand(r, 'n1')
    wait(lambda: (r.read(), r.state)[1] == 'idle')  # its end and its verdict, with the right nonce: accepted
    assert r.violation is None
    assert not r.settled(full=False), 'it runs after its verdict: it takes no next job'
    assert r.isolate(), 'for a job of another tenant it is stopped'
    cpu = r.cpu_ns()
    time.sleep(0.1)
    assert r.cpu_ns() == cpu and r.settled(full=False), 'stopped, it runs nothing beside that job'


def test_a_process_that_forges_its_end_and_sleeps_never_takes_its_next_job(cleanup):
    def behaviour(job_r, out_w, rep_w):
        ended(job_r, rep_w)
        time.sleep(60)  # blocked, as the reuse loop blocks: but not reading its job pipe

    pid, r = start(behaviour, cleanup)
    hand(r, 'n1')
    wait(lambda: (r.read(), r.state)[1] == 'idle')
    assert r.settled()
    hand(r, 'n2')
    time.sleep(0.3)
    assert (
        r.unread() > 0
    ), 'its next job is still in its pipe: what runs is not the reuse loop (the job is run elsewhere)'


def test_a_job_larger_than_its_pipe_is_taken_by_a_process_that_reads_on_and_not_by_one_that_stops(cleanup):
    big = job('n1', 'x = %r' % ('y' * (8 << 20)))  # 8 MiB: 128 pipe-fulls

    def reads_slowly(job_r, out_w, rep_w):  # a pipe-full every 25 ms: 3 s in all, longer than the patience
        while os.read(job_r, 65536):
            time.sleep(0.025)

    def stops(job_r, out_w, rep_w):
        os.read(job_r, 65536)
        time.sleep(60)

    _, slow = start(reads_slowly, cleanup)
    slow.thaw()
    t0 = time.perf_counter()
    assert slow.send(big, 2.0, 60), 'each pipe-full read within the patience: the job is taken'
    assert time.perf_counter() - t0 > 2.0, 'the whole job took longer than the patience'
    _, stuck = start(stops, cleanup)
    stuck.thaw()
    assert not stuck.send(big, 0.5, 60), 'it stopped reading: the job is not taken'
    assert stuck.unread() > 0


def test_a_stale_end_after_the_next_job_is_handed_over_is_a_violation(cleanup):
    def behaviour(job_r, out_w, rep_w):
        ended(job_r, rep_w)
        os.kill(os.getpid(), signal.SIGSTOP)  # its job's code ends later (here: once let run again),
        os.write(
            rep_w, b'\nD{"nonce": "n1", "status": 0, "report": null}\n'
        )  # and the real loop reports the job it read
        spin()

    pid, r = start(behaviour, cleanup)
    hand(r, 'n1')
    wait(lambda: (r.read(), r.state)[1] == 'idle')
    assert r.settled()
    r.stopped = True  # as if the controller had stopped it: the hand-over continues it
    hand(r, 'n2')
    wait(lambda: (r.read(), r.violation)[1] is not None)
    assert 'nonce' in r.violation


def test_a_process_let_run_between_jobs_is_found_moved(cleanup):
    def behaviour(job_r, out_w, rep_w):
        ended(job_r, rep_w)
        spin()

    pid, r = start(behaviour, cleanup)
    hand(r, 'n1')
    wait(lambda: (r.read(), r.state)[1] == 'idle')
    assert r.isolate(), 'stopped while a job of another tenant runs'
    os.kill(pid, signal.SIGCONT)  # that job (same uid) lets it run
    time.sleep(0.1)
    os.kill(pid, signal.SIGSTOP)  # and stops it again
    time.sleep(0.1)
    assert not r.settled(full=False), 'its CPU time moved while it should have been stopped'


def test_output_after_its_end_is_seen(cleanup):
    def behaviour(job_r, out_w, rep_w):
        ended(job_r, rep_w)
        os.write(out_w, b'FORGED for the next job\n')
        spin()

    pid, r = start(behaviour, cleanup)
    hand(r, 'n1')
    wait(lambda: (r.read(), r.state)[1] == 'idle')
    time.sleep(0.1)
    assert r.isolate() and not r.settled(), 'its stdout is not empty between jobs'


def test_a_thread_at_its_end_is_seen_from_outside(cleanup):
    def behaviour(job_r, out_w, rep_w):
        threading.Thread(target=spin, daemon=True).start()
        ended(job_r, rep_w)
        spin()

    pid, r = forger(behaviour)
    cleanup(pid)
    wait(lambda: (r.read(), r.state)[1] == 'idle')
    hand(r, 'n1')
    wait(lambda: r.read() and r.done is not None)
    assert r.company() == '2 threads'


@pytest.mark.parametrize(
    'lines, what',
    [
        ([b'\nD{"nonce": "other", "status": 0, "report": null}\n'], 'nonce'),
        ([b'\nV{"nonce": "n1", "retire": null}\n'], 'verdict before'),
        ([b'\nR\n'], 'second ready'),
        ([b'\nhello\n'], 'unknown kind'),
        ([b'\nD{not json\n'], 'not JSON'),
        (
            [
                b'\nD{"nonce": "n1", "status": 0, "report": null}\n',
                b'\nD{"nonce": "n1", "status": 0, "report": null}\n',
            ],
            'second end',
        ),
        ([b'\nTtaint\n', b'\nD{"nonce": "n1", "status": 0, "report": null}\n'], 'after a taint'),
        ([b'x' * (1 << 21)], 'over 1 MiB'),
    ],
)
def test_frames_out_of_order_are_violations(lines, what, cleanup):
    def behaviour(job_r, out_w, rep_w):
        read_job(job_r)
        for line in lines:
            os.write(rep_w, line)
        spin()

    pid, r = start(behaviour, cleanup)
    hand(r, 'n1')
    wait(lambda: (r.read(), r.violation)[1] is not None)
    assert what in r.violation, r.violation
