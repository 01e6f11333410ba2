#!/usr/bin/env python3
"""Print a lab run's aggregate goodput per second, Mbit/s, one line per run.

usage: persecond.py RUN_DIR...   (e.g. OUT/runs/*)

Reads the receivers' TCP_INFO samples (receivers.csv: bytes_received per
flow, sampled by the lab) and sums each second's increase over the flows;
the seconds count from the first sample. It shows where a run's aggregate
was made: the heterogeneous preset's 20 s (--quick) runs spend their first
seconds on coop's climb of the queue per contender (docs/results.md,
thirty-fourth session).
"""
import collections
import csv
import os
import sys


def per_second(run):
    with open(os.path.join(run, "receivers.csv")) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    t0, last = float(rows[0]["t_s"]), {}
    sums = collections.defaultdict(float)
    for r in rows:
        key, got = (r["netns"], r["src"], r["dst"]), int(r["bytes_received"])
        if key in last:
            sums[int(float(r["t_s"]) - t0)] += got - last[key]
        last[key] = got
    return [sums[s] * 8 / 1e6 for s in range(max(sums) + 1)] if sums else []


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for run in sys.argv[1:]:
        print(f"{os.path.basename(run.rstrip('/'))}: {' '.join(f'{x:.0f}' for x in per_second(run))}")


if __name__ == "__main__":
    main()
