#!/usr/bin/env python3
"""Where a short run's shares are decided: each station's goodput over the
first SPLIT seconds of traffic and over the rest, and the largest congestion
window its upload reached in the first CWND_S seconds (docs/results.md,
"The start decides the 25 s runs").

A CUBIC flow whose HyStart does not end its slow start early grows until its
first loss and holds a window several times its neighbours' for seconds; a
coop terminal is bounded at the group's first inflation. Beside hosts without
coopcc the first seconds then decide much of a 25 s run, and which host was
lucky decides the unmanaged mean.

Rates are the receiving sockets' byte counts (receivers.csv) in the traffic
window (run.json's traffic_start and length_s); windows are the senders'
(flows.csv); both read with phases.py's helpers. Managed stations are marked
with *.

Usage: startup.py RESULTS_DIR [...]   (directories written by `coopcc lab run`)."""
import glob
import json
import os
import sys

from phases import DATA_BYTES, receive_counts, received, stamp, windows

SPLIT = 10.0
CWND_S = 5.0


def main(dirs):
    print(f"run | validity | per station: Mbit/s over 0-{SPLIT:.0f} s | over the rest | largest cwnd in {CWND_S:.0f} s")
    for run in sorted(r for d in dirs for r in glob.glob(os.path.join(d, "runs", "*"))):
        meta = json.load(open(os.path.join(run, "run.json")))
        t0, end = stamp(meta["traffic_start"]), float(meta["length_s"])
        managed = {s["name"] for s in meta["stations"] if s["managed"]}
        counts = {sta: c for sta, c in receive_counts(run, t0).items() if c[-1][1] >= DATA_BYTES}
        largest = {}
        for t, sta, cwnd, _ in windows(run, t0):
            if 0 <= t <= CWND_S:
                largest[sta] = max(largest.get(sta, 0), cwnd)
        cells = []
        for sta in sorted(counts, key=lambda s: int(s.removeprefix("sta")) if s.startswith("sta") else 0):
            first = received(counts[sta], SPLIT) * 8 / SPLIT / 1e6
            rest = (received(counts[sta], end) - received(counts[sta], SPLIT)) * 8 / (end - SPLIT) / 1e6
            cells.append(f"{sta}{'*' if sta in managed else ''} {first:.1f} | {rest:.1f} | {largest.get(sta, 0)}")
        validity = "valid" if meta.get("valid") else "INVALID"
        print(f"{run} | {validity} | " + "   ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
