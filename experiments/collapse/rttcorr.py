#!/usr/bin/env python3
"""Correlation between a station's SRTT and its goodput, per 1-s interval (bytes_acked growth),
pooled over stations, from 5 s after the first sample to T_END. Papers 000/001 (Fig. 10): "the RTT
is small when the throughput is high and ... large when the throughput is low".
Usage: rttcorr.py T_END RUNDIR..."""
import csv, sys, collections, os
tend = float(sys.argv[1])
for run in sys.argv[2:]:
    fl = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(run, "flows.csv"))):
        if r["state"] == "1": fl[(r["netns"], r["src"])].append((float(r["t_s"]), int(r["bytes_acked"]), int(r["srtt_us"]) / 1000))
    t0 = min(v[0][0] for v in fl.values())
    xs, ys = [], []
    for k, v in fl.items():
        if v[-1][1] < 1e6: continue  # control connections
        v.sort(); b = {}
        for t, ba, s in v:
            sec = int(t - t0)
            if 5 <= sec < tend: b.setdefault(sec, []).append((ba, s))
        for sec in sorted(b):
            if sec + 1 in b:
                xs.append(sum(s for _, s in b[sec]) / len(b[sec])); ys.append((b[sec + 1][0][0] - b[sec][0][0]) * 8 / 1e6)
    n = len(xs); mx, my = sum(xs) / n, sum(ys) / n
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys)); vx = sum((x - mx) ** 2 for x in xs); vy = sum((y - my) ** 2 for y in ys)
    print(f"{run}: n={n} corr(srtt, goodput per 1 s) = {cov / (vx * vy) ** .5:+.2f}")
