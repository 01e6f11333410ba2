#!/usr/bin/env python3
"""Bounds the honest agents applied in each run of a results directory.

Usage: experiments/faults/bounds.py OUT...

For every run (OUT/runs/*/run.json): validity, the insider's station if any,
and over every station's bounds/<station>.jsonl events during the traffic
(traffic_start .. traffic_start + length_s): the smallest and largest hi > 0,
the largest lo, how many changes set no bound (hi = 0) while the traffic ran,
and the range of N the events carry. The insider (coopcc peer send) writes no
bounds file, so every station listed is an honest agent.
"""
import datetime
import glob
import json
import os
import sys


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def main(dirs):
    print("run\tvalid\tinsider\thi_min\thi_max\tlo_max\toff_events\tn_range\tevents")
    for d in dirs:
        for rj in sorted(glob.glob(os.path.join(d, "runs", "*", "run.json"))):
            run = json.load(open(rj))
            t0 = ts(run["traffic_start"])
            t1 = t0 + run["length_s"]
            insider = ",".join(s for f in run.get("faults") or [] if f["kind"] == "insider" for s in f["stations"]) or "-"
            his, los, ns, off, n = [], [], [], 0, 0
            for bf in glob.glob(os.path.join(os.path.dirname(rj), "bounds", "*.jsonl")):
                for line in open(bf):
                    e = json.loads(line)
                    if not t0 <= ts(e["t"]) <= t1:
                        continue
                    n += 1
                    ns.append(e["n"])
                    los.append(e["lo"])
                    if e["hi"] > 0:
                        his.append(e["hi"])
                    else:
                        off += 1
            valid = "valid" if run["valid"] else "INVALID (%s)" % run["invalid_reason"][:60]
            rng = lambda v, f: f(v) if v else "-"
            print("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s..%s\t%d" % (run["id"], valid, insider, rng(his, min), rng(his, max),
                  rng(los, max), off, rng(ns, min), rng(ns, max), n))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
