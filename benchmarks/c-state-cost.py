#!/usr/bin/env python3
"""The cost of the reuse check's C-state readings (sandfleet_sandbox/reuse_c_state.py's c_state), per call and per
tier, beside the interpreter settings it is part of (reuse_process.knobs, which calls it): both run after every job of
a reuse process.

Each tier is measured in a fresh interpreter that warms it as its zygote does (zygote_process.warm), so that the
modules c_state reads are loaded as in the sandbox; timeit, the best of --repeat rounds of --number calls. With
--package NAME=DIR (repeatable) it measures those checkouts' packages side by side, tier by tier (an older one: `git
archive COMMIT sandbox-images/python | tar -x -C DIR`; one from before the modules' renames of issue 47 names them
census.py, reuse.py, zygote.py: not this script's).

Usage: python3 benchmarks/c-state-cost.py [--number 20000] [--repeat 5] [--tiers bare,std,sym,sci] [--python
/usr/bin/python3]
                                          [--package NAME=DIR ...]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ONE = r'''
import json
import sys
import timeit
package, tier, number, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, package)
from sandfleet_sandbox import controller, zygote_process as zygote
zygote.warm(tier)
from sandfleet_sandbox import reuse_c_state, reuse_process as reuse
def per_call_us(f): return min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6
print(json.dumps({'readings': len(reuse_c_state.c_state()), 'c_state_us': round(per_call_us(reuse_c_state.c_state), 2),
                  'knobs_us': round(per_call_us(reuse.knobs), 2)}))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--number', type=int, default=20000)
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--tiers', default='bare,std,sym,sci')
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument(
        '--package', action='append', default=[], help='NAME=DIR: a sandbox-images/python directory (default: this one)'
    )
    a = ap.parse_args()
    packages = [p.split('=', 1) for p in a.package] or [('this', os.path.join(ROOT, 'sandbox-images/python'))]
    commit = subprocess.run(
        ['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True
    ).stdout.strip()
    print(
        json.dumps(
            {
                'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
                'commit': commit,
                'machine': platform.machine(),
                'cpus': os.cpu_count(),
                'python': subprocess.run([a.python, '-V'], capture_output=True, text=True).stdout.strip(),
                'load': os.getloadavg()[0],
            }
        )
    )
    for tier in a.tiers.split(','):
        for name, package in packages:
            with tempfile.TemporaryDirectory(prefix='c-state-cost-') as work:
                env = {
                    'PATH': '/usr/bin:/bin',
                    'LANG': 'C.UTF-8',
                    'HOME': work,
                    'OPENBLAS_NUM_THREADS': '1',
                    'OMP_NUM_THREADS': '1',
                    'SANDFLEET_NO_HUGEPAGES': '1',
                    'SANDFLEET_WORKDIR': work,
                }
                r = subprocess.run(
                    [a.python, '-I', '-W', 'ignore', '-c', ONE, package, tier, str(a.number), str(a.repeat)],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=600,
                )
            if r.returncode != 0:
                sys.exit('%s %s: %s' % (name, tier, r.stderr))
            print(json.dumps({'tier': tier, 'package': name, **json.loads(r.stdout)}), flush=True)


if __name__ == '__main__':
    main()
