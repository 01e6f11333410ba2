#!/usr/bin/env python3
"""Steady-state aggregate: sum over stations of bytes acknowledged between T1 and T2 seconds after
the first flows.csv sample, x8/(T2-T1); and Jain over those per-station rates.
Usage: steady.py T1 T2 RUNDIR..."""
import csv, sys, collections, os
t1, t2 = float(sys.argv[1]), float(sys.argv[2])
for run in sys.argv[3:]:
    fl = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(run, "flows.csv"))):
        fl[(r["netns"], r["src"])].append((float(r["t_s"]), int(r["bytes_sent"])))
    t0 = min(v[0][0] for v in fl.values())
    def at(v, t):
        prev = None
        for ts, b in v:
            if ts - t0 >= t:
                if prev is None: return b
                pt, pb = prev
                return pb + (b - pb) * (t - (pt - t0)) / max(1e-9, ts - pt)
            prev = (ts, b)
        return v[-1][1]
    rate = collections.Counter()
    for (st, _), v in fl.items():
        v.sort(); rate[st] += (at(v, t2) - at(v, t1)) * 8 / (t2 - t1) / 1e6
    g = list(rate.values())
    print(f"{os.path.basename(run.rstrip('/'))}: SENT rate [{t1:.0f},{t2:.0f}] s = {sum(g):.2f} Mbit/s, Jain {sum(g)**2/(len(g)*sum(x*x for x in g)):.3f}, min/max station {min(g):.2f}/{max(g):.2f}")
