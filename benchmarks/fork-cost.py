#!/usr/bin/env python3
"""What one fork costs on this machine, by how much anonymous memory the forking process holds.

    python3 benchmarks/fork-cost.py [--forks N] [--mib 0,8,32] [--touch 0,16,1400]

For each size: a process maps and writes that many MiB of anonymous memory (in 4 KiB pages, then
as transparent huge pages: MADV_HUGEPAGE before the first write), then forks N children that each
write `touch` distinct pages (2 MiB apart where they fit: copy-on-write faults) and exit; prints
the CPU of one fork, exit and wait (parent and reaped children). A job process is such a fork of
a zygote, so this is the floor under the process backend's CPU per call: the figures in
benchmarks/RESULTS.md say how it scales.
"""
import argparse
import json
import mmap
import os

HUGE = 2 << 20


def cost(mib, huge, touch, forks):
    # A multiple of 2 MiB: Linux 6.7+ places such a mapping on a 2 MiB boundary, so all of it can be huge pages.
    region = mmap.mmap(-1, max(mib, 2) << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge:
        region.madvise(mmap.MADV_HUGEPAGE)
    if mib:
        for off in range(0, mib << 20, mmap.PAGESIZE):
            region[off] = 1
    pages = len(region) // mmap.PAGESIZE
    t0 = os.times()
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            for k in range(touch):
                region[k * 513 % pages * mmap.PAGESIZE] = 2  # distinct pages (513 is odd), a 2 MiB page apart
            os._exit(0)
        os.waitpid(pid, 0)
    t1 = os.times()
    region.close()
    return round((sum(t1[:4]) - sum(t0[:4])) / forks * 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--forks', type=int, default=500)
    ap.add_argument('--mib', default='0,8,32')
    ap.add_argument('--touch', default='0,16')
    a = ap.parse_args()
    for mib in (int(x) for x in a.mib.split(',')):
        for touch in (int(x) for x in a.touch.split(',')):
            for huge in (False, True):
                if huge and not mib:
                    continue
                print(
                    json.dumps(
                        {
                            'mib': mib,
                            'pages': '2 MiB' if huge else '4 KiB',
                            'child_writes': touch,
                            'cpu_us_per_fork': cost(mib, huge, touch, a.forks),
                        }
                    ),
                    flush=True,
                )


if __name__ == '__main__':
    main()
