#!/usr/bin/env python3
"""Executor micro-benchmark: drives executor.py directly over its pipes (no runner, no HTTP, no sandbox).

For each executor file given and each workload, starts E executors (one job at a time each, as the
runner does), runs N jobs through each and reports jobs/s and the CPU one job costs inside the
executor (controller + zygotes + job processes, from /proc: utime+stime+cutime+cstime), besides the
driver's own CPU. Executors are compared side by side in the same run, interleaved.

Usage: python3 benchmarks/executor-micro.py [--jobs 400] [--executors 1,2] [--python /usr/bin/python3]
       [--rounds 2] [--workloads print,sympy] [--isolation fork,reuse] [EXECUTOR.py[@VAR=VALUE] ...]
       (default: sandbox-images/python/executor.py; workloads: print, sympy, fractions, empty-bare, empty-std,
       empty-sym, empty-sci; and judges, where a job is one `judge` frame of 20 stdin tests, each a run of its own:
       judge-print (a Python program), judge-cpp (a C++ binary, compiled once by the executor before the rounds and
       then sent with each judge as the runner's compile cache sends it: needs g++);
       an executor given as PATH@K=V runs with that variable set, e.g. executor.py@SANDFLEET_NO_HUGEPAGES=1)
       Each result splits the executor's CPU and faults per job by role: the controller, the zygotes (their forks and
       loops) and the job processes. Each isolation level given runs beside the others (`reuse`: each job names it).
"""
import argparse
import itertools
import json
import os
import platform
import resource
import subprocess
import threading
import time

WORKLOADS = {
    'print': 'print(1+1)',
    'sympy': 'import sympy\nx = sympy.Symbol("x")\nprint(sympy.factor(x**4 - 1))',
    'fractions': 'from fractions import Fraction\nprint(Fraction(1, 3) + 1)',
    'empty-bare': 'pass',  # the bare tier's own cost: fork, set-up, exit
    'empty-std': 'import fractions',  # the std tier's own cost (preloaded)
    'empty-sym': 'import sympy',  # the sym tier's own cost (sympy is preloaded: nothing runs)
    'empty-sci': 'import numpy',  # the sci tier's own cost (numpy is preloaded)
}
# Judges (issue 43): (runtime, the program, its source file), run on JUDGE_TESTS stdin tests; the judge frame as the
# runner writes it (services/runner/src/kits/executor/judge-frames.ts), its answers compared here.
JUDGES = {
    'judge-print': ('python', 'print(int(input()) * 2)', 'main.py'),
    'judge-cpp': (
        'binary',
        '#include <bits/stdc++.h>\nint main(){long n;std::cin>>n;std::cout<<n*2<<"\\n";}\n',
        'main.cpp',
    ),
}
JUDGE_TESTS = 20
CPP = ['g++', '-std=c++17', '-O2', '-DONLINE_JUDGE', '-pipe', '-o', 'main', 'main.cpp']
TICK = os.sysconf('SC_CLK_TCK')
SEQ = itertools.count()


def tree_cpu(pid):
    """(CPU seconds, minor page faults) of pid and its live children, each with its reaped descendants. The faults
    (nearly all copy-on-write) do not depend on what else the machine does: the figure to compare on a shared one."""

    def one(p):
        try:
            f = open('/proc/%d/stat' % p).read().rsplit(')', 1)[1].split()
        except OSError:
            return 0.0, 0
        return sum(int(x) for x in f[11:15]) / TICK, int(f[7]) + int(f[8])

    try:
        kids = [int(k) for k in open('/proc/%d/task/%d/children' % (pid, pid)).read().split()]
    except OSError:
        kids = []
    parts = [one(pid)] + [tree_cpu(k) for k in kids]
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def split_cpu(pid):
    """{role: (CPU seconds, minor faults)} of an executor: the controller alone, its zygotes alone (their forks and
    loops), and the job processes (reaped by the zygotes, and the live spares)."""

    def one(p):
        try:
            f = open('/proc/%d/stat' % p).read().rsplit(')', 1)[1].split()
        except OSError:
            return (0.0, 0), (0.0, 0)
        return (sum(int(x) for x in f[11:13]) / TICK, int(f[7])), (sum(int(x) for x in f[13:15]) / TICK, int(f[8]))

    def kids(p):
        try:
            return [int(k) for k in open('/proc/%d/task/%d/children' % (p, p)).read().split()]
        except OSError:
            return []

    out = {'controller': one(pid)[0], 'zygotes': (0.0, 0), 'jobs': (0.0, 0)}

    def add(a, b):
        return (a[0] + b[0], a[1] + b[1])

    for z in kids(pid):
        own, reaped = one(z)
        out['zygotes'] = add(out['zygotes'], own)
        out['jobs'] = add(out['jobs'], reaped)
        for spare in kids(z):
            out['jobs'] = add(out['jobs'], tree_cpu(spare))
    return out


class Executor:
    def __init__(self, python, spec):
        path, _, var = spec.partition('@')
        # the work dir on tmpfs, as in every sandbox (on a disk file system each job's mkdir/rmdir waits for it)
        env = {
            'PATH': '/usr/bin:/bin',
            'LANG': 'C.UTF-8',
            'SANDFLEET_WORKDIR': '/dev/shm/sandfleet-micro-%d-%d' % (os.getpid(), next(SEQ)),
        }
        if var:
            env[var.split('=', 1)[0]] = var.split('=', 1)[1]
        self.p = subprocess.Popen([python, '-I', path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.n = 0
        ready = self.recv('ready')
        for _ in set(ready['tiers']) - {'bare'}:
            self.recv('tier')  # tiers warming in the background are not the jobs' cost

    def recv(self, op):
        while True:
            f = json.loads(self.p.stdout.readline())
            if f['op'] == op:
                return f

    def run(self, code, isolation='fork'):
        self.n += 1
        self.p.stdin.write(
            json.dumps(
                {
                    'op': 'exec',
                    'id': str(self.n),
                    'code': code,
                    'stdin': '',
                    'timeout_ms': 10000,
                    'memory_mb': 1024,
                    'files': {},
                    'fetch_files': [],
                    'max_output_bytes': 65536,
                    'isolation': isolation,
                    'wait_ms': None,
                    'tenant': None,
                }
            ).encode()
            + b'\n'
        )
        self.p.stdin.flush()
        r = self.recv('result')
        if r['status'] != 'ok':
            raise RuntimeError('job failed: %r' % r)
        return r

    def judge(self, program, isolation='fork'):
        """One judge of JUDGE_TESTS tests of `program` (a judge frame's program); its `compiled` frames and result."""
        self.n += 1
        job_id = str(self.n)
        frame = {
            'op': 'judge',
            'id': job_id,
            'program': program,
            'checker': None,
            'answers': None,
            'tests': [{'stdin': '%d\n' % i, 'call': None} for i in range(JUDGE_TESTS)],
            'timeout_ms': 10000,
            'memory_mb': 1024,
            'compile_timeout_ms': 60000,
            'compile_memory_mb': 2048,
            'checker_timeout_ms': 10000,
            'max_output_bytes': 65536,
            'stop_on_failure': True,
            'ack_window': 0,
            'isolation': isolation,
            'tenant': None,
            'wait_ms': None,
        }
        self.p.stdin.write(json.dumps(frame).encode() + b'\n')
        self.p.stdin.flush()
        compiled, tested = [], 0
        while True:
            f = json.loads(self.p.stdout.readline())
            if f.get('id') != job_id:
                continue
            if f['op'] == 'compiled':
                compiled.append(f)
            elif f['op'] == 'tested':
                if f['status'] != 'ok' or f['stdout'] != '%d\n' % (2 * f['index']):
                    raise RuntimeError('test failed: %r' % f)
                tested += 1
            elif f['op'] == 'result':
                if f['status'] != 'ok' or tested != JUDGE_TESTS:
                    raise RuntimeError('judge failed (%d tests): %r' % (tested, f))
                return compiled, f

    def close(self):
        self.p.stdin.write(b'{"op":"shutdown"}\n')
        self.p.stdin.flush()
        self.p.wait()


def judge_program(e, workload):
    """The judge frame's program of a JUDGES workload, on executor `e`: a binary compiled there once, then sent with
    each judge (the runner's compile cache)."""
    runtime, code, source = JUDGES[workload]
    program = {
        'runtime': runtime,
        'source': source,
        'code': code,
        'compile': None,
        'output': None,
        'run': None,
        'binary': None,
    }
    if runtime == 'python':
        return program
    program.update(compile=CPP, output='main', run=['./main'])
    compiled, _ = e.judge(program)
    if not compiled or compiled[0]['status'] != 'ok':
        raise RuntimeError('the program did not compile: %r' % compiled)
    return dict(program, binary=compiled[0]['binary'])


def measure(python, path, workload, executors, jobs, isolation='fork'):
    exs = [Executor(python, path) for _ in range(executors)]
    try:
        if workload in JUDGES:
            programs = {e: judge_program(e, workload) for e in exs}

            def job(e, level):
                return e.judge(programs[e], level)[1]

        else:

            def job(e, level):
                return e.run(WORKLOADS[workload], level)

        for e in exs:
            for _ in range(20):
                job(e, isolation)  # warm: the sci tier, caches, the tier's reuse process
        if isolation == 'reuse' and workload not in JUDGES:
            for e in exs:
                for _ in range(200):
                    if job(e, isolation).get('isolation') == 'reuse':
                        break
                    time.sleep(0.05)
        t0s = [tree_cpu(e.p.pid) for e in exs]
        s0s = [split_cpu(e.p.pid) for e in exs]
        me0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        threads = [threading.Thread(target=lambda e=e: [job(e, isolation) for _ in range(jobs)]) for e in exs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        t1s = [tree_cpu(e.p.pid) for e in exs]
        s1s = [split_cpu(e.p.pid) for e in exs]
        cpu = sum(b[0] - a[0] for a, b in zip(t0s, t1s))
        faults = sum(b[1] - a[1] for a, b in zip(t0s, t1s))
        me1 = resource.getrusage(resource.RUSAGE_SELF)
        drv = (me1.ru_utime - me0.ru_utime) + (me1.ru_stime - me0.ru_stime)
        total = jobs * executors
        split = {
            role: [
                round(sum(b[role][0] - a[role][0] for a, b in zip(s0s, s1s)) / total * 1000, 3),
                round(sum(b[role][1] - a[role][1] for a, b in zip(s0s, s1s)) / total, 1),
            ]
            for role in s0s[0]
        }
        return {
            'jobs_per_s': round(total / wall),
            'executor_cpu_ms_per_job': round(cpu / total * 1000, 2),
            'faults_per_job': round(faults / total, 1),
            'split_cpu_ms_and_faults_per_job': split,
            'driver_cpu_ms_per_job': round(drv / total * 1000, 2),
            'tier': None if workload in JUDGES else job(exs[0], 'fork').get('tier'),
            'runs_per_job': JUDGE_TESTS if workload in JUDGES else 1,
        }
    finally:
        for e in exs:
            e.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--jobs', type=int, default=400)
    ap.add_argument('--executors', default='1,2')
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--workloads', default='print,sympy')
    ap.add_argument('--isolation', default='fork')
    ap.add_argument('paths', nargs='*')
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = a.paths or [os.path.join(root, 'sandbox-images/python/executor.py')]
    try:
        commit = subprocess.run(
            ['git', 'rev-parse', '--short', 'HEAD'], cwd=root, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = ''
    print(
        json.dumps(
            {
                'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
                'commit': commit,
                'machine': '%d cores, %s, load %s'
                % (os.cpu_count(), platform.machine(), ' '.join('%.1f' % x for x in os.getloadavg())),
                'python': subprocess.run([a.python, '-V'], capture_output=True, text=True).stdout.strip(),
            }
        )
    )
    for w in a.workloads.split(','):
        for n in (int(x) for x in a.executors.split(',')):
            for rnd in range(a.rounds):
                for path in paths:
                    for level in a.isolation.split(','):
                        r = measure(a.python, path, w, n, a.jobs, level)
                        print(
                            json.dumps(
                                {
                                    'workload': w,
                                    'executors': n,
                                    'round': rnd,
                                    'isolation': level,
                                    'executor': os.path.relpath(path, root) if '@' not in path else path,
                                    **r,
                                }
                            ),
                            flush=True,
                        )


if __name__ == '__main__':
    main()
