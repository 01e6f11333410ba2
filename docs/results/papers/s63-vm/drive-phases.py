#!/usr/bin/env python3
"""Split a vehicle-2014 drive run's goodput around the trace's 40 s outage.

usage: drive-phases.py RUN_DIR...   (a run directory of `coopcc lab run`:
       OUT/runs/mode=coop,...,mobility=drive,rep=N)

For each run: the mean of iperf3's 1 s intervals over the whole run, over the
first 46 s (before the outage), the first second after 60 s that carries
anything (the resumption), the mean after it, and the sender's largest SRTT
(flows.csv: the server's tcp_info). An SRTT of seconds marks the undo after
the outage (docs/policies.md, Limits: "After the drive's 40 s outage").
"""
import csv
import glob
import json
import sys


def phases(run):
    report = json.load(open(glob.glob(run + "/iperf3/*.json")[0]))
    mbps = [i["sum"]["bits_per_second"] / 1e6 for i in report["intervals"]]
    resumed = next((i for i in range(60, len(mbps)) if mbps[i] > 0.5), None)
    after = mbps[resumed + 1:] if resumed is not None else []
    senders = [r for r in csv.DictReader(open(run + "/flows.csv")) if r["src"].endswith(":5201")]
    srtt = max((int(r["srtt_us"]) for r in senders), default=0) / 1e3
    return (sum(mbps) / len(mbps), sum(mbps[:46]) / 46, resumed,
            sum(after) / len(after) if after else 0.0, srtt)


def main(runs):
    print("run\tall\tbefore\tresumed_s\tafter\tmax_srtt_ms")
    for run in runs:
        whole, before, resumed, after, srtt = phases(run.rstrip("/"))
        print(f"{run}\t{whole:.2f}\t{before:.2f}\t{resumed if resumed is not None else '-'}\t{after:.2f}\t{srtt:.0f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
