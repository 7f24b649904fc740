#!/usr/bin/env python3
"""The least CPU a fresh Python process a test costs on this machine: a bare interpreter (nothing preloaded) forks a
child for each test, which runs the program on the test's stdin (a pipe) and prints into a pipe the parent reads, and
exits. No limits, no isolation, no capture cap, no report, no compare: what any judge that runs each test in a fresh
fork of a warm interpreter pays at least (benchmarks/judge-core.ts sets issue 43's targets beside it).

    python3 -I benchmarks/judge-floor.py [--tests 2000] [--code 'a, b = map(int, input().split())\nprint(a + b)\n']

Prints one JSON line: the CPU of one test (ms: the parent's fork, reads and wait, and the child's run and exit) and
the child's page faults.
"""
import argparse
import io
import json
import os
import resource
import sys

AB = 'a, b = map(int, input().split())\nprint(a + b)\n'


def cpu(usage):
    return usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tests', type=int, default=2000)
    ap.add_argument('--code', default=AB)
    a = ap.parse_args()
    program = compile(a.code, 'main.py', 'exec')
    me, kids = resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN
    s0, c0 = resource.getrusage(me), resource.getrusage(kids)
    for i in range(a.tests):
        stdin_r, stdin_w = os.pipe()
        out_r, out_w = os.pipe()
        os.write(stdin_w, b'%d %d\n' % (i, i))
        os.close(stdin_w)
        pid = os.fork()
        if pid == 0:
            os.dup2(stdin_r, 0)
            os.dup2(out_w, 1)
            sys.stdin = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False))
            sys.stdout = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False))
            exec(program, {'__name__': '__main__'})
            sys.stdout.flush()
            os._exit(0)
        os.close(stdin_r)
        os.close(out_w)
        while os.read(out_r, 65536):
            pass
        os.close(out_r)
        os.waitpid(pid, 0)
    s1, c1 = resource.getrusage(me), resource.getrusage(kids)
    print(
        json.dumps(
            {
                'tests': a.tests,
                'cpu_ms_per_test': round((cpu(s1) - cpu(s0) + cpu(c1) - cpu(c0)) / a.tests * 1000, 3),
                'child_faults_per_test': round((c1.ru_minflt - c0.ru_minflt) / a.tests),
            }
        )
    )


if __name__ == '__main__':
    main()
