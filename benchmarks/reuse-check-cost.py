#!/usr/bin/env python3
"""The reuse level's own cost, per tier: the CPU a reuse process spends after each job on putting back what the job owns
(put_back), checking the rest (check) and preparing the next job (prepare), and what its zygote spends once on the
baseline (the interpreter walk). Measured in this process, with each tier's modules imported as its zygote has them (the
sandbox-images/python package, as the executor runs it).

Usage: python3 benchmarks/reuse-check-cost.py [--rounds 500] [--tiers bare,std,sym,sci]
Run each tier in a fresh interpreter (this script starts one per tier).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIER_MODULES = {
    'bare': [],
    'std': ['fractions', 'decimal', 'statistics', 'random'],
    'sym': ['sympy', 'mpmath'],
    'sci': ['numpy', 'scipy', 'sympy', 'mpmath'],
}

ONE = r'''
import gc
import json
import os
import sys
import time
package, modules, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ.setdefault('SANDFLEET_WORKDIR', '/dev/shm/reuse-check-cost-%d' % os.getpid())
os.makedirs(os.environ['SANDFLEET_WORKDIR'], exist_ok=True)
sys.path.insert(0, package)
for m in modules.split(','):
    if m: __import__(m)
from sandfleet_sandbox import job_process as job, reuse_process as reuse
job.fresh_main()
gc.collect(); gc.freeze()
rss0 = reuse.rss()
t = time.process_time()
base = reuse.Baseline()
walk_ms = (time.process_time() - t) * 1000
rss1 = reuse.rss()
base.adopt()
stdio = [os.dup(fd) for fd in (0, 1, 2)]
main, touched = reuse.prepare(base, stdio, None)
base.fds = reuse.proc_fds()
refs = sys.getrefcount(main)
gc.collect(); gc.freeze()
assert base.check(main, refs) is None, base.check(main, refs)
def each(f):
    t = time.process_time()
    for _ in range(rounds): f()
    return (time.process_time() - t) / rounds * 1e6
out = {'dicts': len(base.dicts), 'empty_dicts': len(base.empties), 'lists': len(base.lists.lists),
       'modules': len(base.modules),
       'baseline_walk_ms': round(walk_ms, 1), 'baseline_mib': round((rss1 - rss0) / 2**20, 1),
       'put_back_us': round(each(base.put_back), 1), 'check_us': round(each(lambda: base.check(main, refs)), 1),
       'prepare_us': round(each(lambda: reuse.prepare(base, stdio, touched, False)), 1),
       'collect_us': round(each(gc.collect), 1)}
print(json.dumps(out))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=500)
    ap.add_argument('--tiers', default='bare,std,sym,sci')
    ap.add_argument('--python', default='/usr/bin/python3')
    a = ap.parse_args()
    package = os.path.join(ROOT, 'sandbox-images/python')
    env = {'PATH': '/usr/bin:/bin', 'OPENBLAS_NUM_THREADS': '1', 'LANG': 'C.UTF-8'}
    print(
        json.dumps(
            {
                'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
                'python': subprocess.run([a.python, '-V'], capture_output=True, text=True).stdout.strip(),
                'load': os.getloadavg()[0],
            }
        )
    )
    for tier in a.tiers.split(','):
        r = subprocess.run(
            [a.python, '-I', '-c', ONE, package, ','.join(TIER_MODULES[tier]), str(a.rounds)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        if r.returncode != 0:
            sys.exit('%s: %s' % (tier, r.stderr))
        print(json.dumps({'tier': tier, **json.loads(r.stdout)}), flush=True)


if __name__ == '__main__':
    main()
