#!/usr/bin/env python3
"""Bounds the honest agents applied in each run of a results directory.

Usage: experiments/faults/bounds.py OUT...

For every run (OUT/runs/*/run.json): validity, the insider's station if any,
and over every station's bounds/<station>.jsonl events during the traffic
(traffic_start .. traffic_start + length_s): the smallest and largest hi > 0,
the largest lo, how many changes set no bound (hi = 0) while the traffic ran,
and the range of N the events carry; lo_cap is the largest lo / (2 x BDP + 1)
over the events with lo > 0, BDP being the station's largest delivery rate x
max(srtt, min rtt) / mss over its flows in flows.csv at the event (the cap
policy.ClampDecision applies, at least 10, from the lab's 20 Hz samples
instead of the agent's own tick: <= 1 means within the cap). The insider
(coopcc peer send) writes no bounds file, so every station listed is an
honest agent.
"""
import bisect
import csv
import datetime
import glob
import json
import os
import sys


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def bdp_series(run_dir):
    """Per station: sorted sample times and the largest BDP (segments) then."""
    by = {}
    with open(os.path.join(run_dir, "flows.csv")) as f:
        for row in csv.DictReader(f):
            mss = float(row["mss"] or 0)
            rtt = max(float(row["srtt_us"] or 0), float(row["min_rtt_us"] or 0)) / 1e6
            if rtt > 1e3:  # 4294967295 µs: no measurement yet
                rtt = 0
            bdp = float(row["delivery_rate_Bps"] or 0) * rtt / mss if mss > 0 else 0
            t = float(row["t_s"])
            s = by.setdefault(row["netns"], {})
            s[t] = max(s.get(t, 0), bdp)
    return {st: (sorted(v), [v[t] for t in sorted(v)]) for st, v in by.items()}


def lo_cap_ratio(series, station, t, lo):
    times, bdps = series.get(station, ([], []))
    i = bisect.bisect_right(times, t) - 1
    if i < 0:
        return float("nan")
    cap = max(2 * bdps[i] + 1, 10)
    return lo / cap


def main(dirs):
    print("run\tvalid\tinsider\thi_min\thi_max\tlo_max\tlo_cap\toff_events\tn_range\tevents")
    for d in dirs:
        for rj in sorted(glob.glob(os.path.join(d, "runs", "*", "run.json"))):
            run = json.load(open(rj))
            t0 = ts(run["traffic_start"])
            t1 = t0 + run["length_s"]
            insider = ",".join(s for f in run.get("faults") or [] if f["kind"] == "insider" for s in f["stations"]) or "-"
            his, los, ns, off, n, caps = [], [], [], 0, 0, []
            series = bdp_series(os.path.dirname(rj))
            for bf in glob.glob(os.path.join(os.path.dirname(rj), "bounds", "*.jsonl")):
                station = os.path.basename(bf)[: -len(".jsonl")]
                for line in open(bf):
                    e = json.loads(line)
                    if not t0 <= ts(e["t"]) <= t1:
                        continue
                    n += 1
                    if e["lo"] > 0:
                        caps.append(lo_cap_ratio(series, station, ts(e["t"]), e["lo"]))
                    ns.append(e["n"])
                    los.append(e["lo"])
                    if e["hi"] > 0:
                        his.append(e["hi"])
                    else:
                        off += 1
            valid = "valid" if run["valid"] else "INVALID (%s)" % run["invalid_reason"][:60]
            rng = lambda v, f: f(v) if v else "-"
            cap = "%.2f" % max(caps) if caps else "-"
            print("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s..%s\t%d" % (run["id"], valid, insider, rng(his, min), rng(his, max),
                  rng(los, max), cap, off, rng(ns, min), rng(ns, max), n))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
