#!/usr/bin/env python3
"""Puts ns-3's TCP uploads (ns3-tcp.csv from `TRANSPORT=tcp run.sh`) next to the lab's
(tcp-constant.toml and tcp-arf.toml: real Linux CUBIC through the emulator, same N, queues and
wired path) as a Markdown table. ns-3's 802.11a run is the like-for-like rate set (see sat.cc).

usage: compare-tcp.py CONSTANT_REPORT_DIR ARF_REPORT_DIR
  each the report directory `coopcc lab report` wrote for that scenario's results
  (summary.csv and rates.csv in it).
"""
import csv
import os
import re
import sys
from collections import defaultdict

here = os.path.dirname(os.path.abspath(__file__))
if len(sys.argv) != 3:
    sys.exit(__doc__)

ns3 = {}
with open(os.path.join(here, "ns3-tcp.csv")) as f:
    for r in csv.DictReader(f):
        ns3[(r["standard"], r["manager"], int(r["n"]))] = (
            float(r["goodput_mbps"]), float(r["mean_phy_mbps"]), float(r["jain"]))


def lab(report):
    """(n) -> (mean, min, max, jain, valid/total, mean PHY rate of the terminals' frames in
    the valid runs)."""
    with open(os.path.join(report, "runs.csv")) as f:
        valid = {r["run"] for r in csv.DictReader(f) if r["valid"] == "true"}
    rate = defaultdict(lambda: [0.0, 0])
    with open(os.path.join(report, "rates.csv")) as f:
        for r in csv.DictReader(f):
            n = int(re.search(r"n=(\d+)", r["run"]).group(1))
            if r["station"] != "ap" and r["run"] in valid:
                frames = int(r["frames"])
                rate[n][0] += float(r["rate_mbps"]) * frames
                rate[n][1] += frames
    out = {}
    with open(os.path.join(report, "summary.csv")) as f:
        for r in csv.DictReader(f):
            n = int(r["n"])
            phy = rate[n][0] / rate[n][1] if rate[n][1] else float("nan")
            out[n] = (float(r["aggregate_mbps_mean"] or "nan"), float(r["aggregate_mbps_min"] or "nan"),
                      float(r["aggregate_mbps_max"] or "nan"), float(r["jain_mean"] or "nan"),
                      f'{r["valid_runs"]}/{r["runs"]}', phy)
    return out


print("| rate control | N | lab Mbit/s mean (min–max) (mean PHY) | ns-3 11a Mbit/s (mean PHY) | difference % | Jain lab / ns-3 | lab runs valid |")
print("|---|---|---|---|---|---|---|")
for manager, report in (("constant", sys.argv[1]), ("arf", sys.argv[2])):
    for n, (mean, lo, hi, jain, valid, phy) in sorted(lab(report).items()):
        a = ns3.get(("a", manager, n))
        fa = f"{a[0]:.2f} ({a[1]:.1f})" if a else "–"
        diff = f"{100 * (mean - a[0]) / a[0]:+.1f}" if a and a[0] > 0 else "–"
        ja = f"{a[2]:.3f}" if a else "–"
        print(f"| {manager} | {n} | {mean:.2f} ({lo:.2f}–{hi:.2f}) ({phy:.1f}) | {fa} | {diff} | {jain:.3f} / {ja} | {valid} |")
