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

Rates are the receiving sockets' byte counts (receivers.csv, per data
connection) in the traffic window (run.json's traffic_start and length_s);
windows are the senders' (flows.csv). Managed stations are marked with *.

Usage: startup.py RESULTS_DIR [...]   (directories written by `coopcc lab run`)."""
import csv
import glob
import json
import os
import sys
from collections import defaultdict
from datetime import datetime

SPLIT = 10.0
CWND_S = 5.0
MIN_BYTES = 100_000  # a data connection, not iperf3's control connection


def stamp(s):
    """Seconds since the epoch of an RFC 3339 time with nanoseconds."""
    return datetime.fromisoformat(s[:26].rstrip("Z")).timestamp()


def received_by(samples, t):
    """Bytes received by t (the largest count sampled at or before it)."""
    return max((b for ts, b in samples if ts <= t), default=0)


def data_connections(run, t0):
    """Per station, the (seconds since t0, bytes received) samples of its
    data connection (the one that received at least MIN_BYTES)."""
    conns = defaultdict(list)
    with open(os.path.join(run, "receivers.csv")) as f:
        for row in csv.DictReader(f):
            conns[(row["netns"], row["dst"])].append((float(row["t_s"]) - t0, int(row["bytes_received"])))
    return {sta: s for (sta, _), s in conns.items() if s and s[-1][1] >= MIN_BYTES}


def largest_windows(run, t0):
    """Per station, the largest cwnd (segments) its uploads had in the first
    CWND_S seconds of traffic."""
    most = defaultdict(int)
    with open(os.path.join(run, "flows.csv")) as f:
        for row in csv.DictReader(f):
            t = float(row["t_s"]) - t0
            if 0 <= t <= CWND_S and int(row["bytes_sent"] or 0) >= MIN_BYTES:
                most[row["netns"]] = max(most[row["netns"]], int(row["cwnd"]))
    return most


def main(dirs):
    print(f"run | validity | per station: Mbit/s over 0-{SPLIT:.0f} s | over the rest | largest cwnd in {CWND_S:.0f} s")
    for run in sorted(r for d in dirs for r in glob.glob(os.path.join(d, "runs", "*"))):
        meta = json.load(open(os.path.join(run, "run.json")))
        t0, end = stamp(meta["traffic_start"]), float(meta["length_s"])
        managed = {s["name"] for s in meta["stations"] if s["managed"]}
        conns, windows = data_connections(run, t0), largest_windows(run, t0)
        cells = []
        for sta in sorted(conns, key=lambda s: int(s.removeprefix("sta")) if s.startswith("sta") else 0):
            first = received_by(conns[sta], SPLIT) * 8 / SPLIT / 1e6
            rest = (received_by(conns[sta], end) - received_by(conns[sta], SPLIT)) * 8 / (end - SPLIT) / 1e6
            cells.append(f"{sta}{'*' if sta in managed else ''} {first:.1f} | {rest:.1f} | {windows.get(sta, 0)}")
        validity = "valid" if meta.get("valid") else "INVALID"
        print(f"{run} | {validity} | " + "   ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
