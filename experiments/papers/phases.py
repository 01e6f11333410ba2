#!/usr/bin/env python3
"""Where coop's managed terminals lose beside hosts that do not run coopcc:
each managed terminal's receive rate in each phase of its policy's mode,
against the unmanaged terminals' mean over the same seconds (docs/results.md,
"The return must pay too").

A terminal's phases come from its bounds log (bounds/staN.jsonl, one record
per change of its bounds, with the policy's mode): "before" until its first
verdict (competitive mode), then "competing" and "cooperating" as its mode
goes. Rates are the receiving sockets' byte counts (receivers.csv) over
each phase, in the traffic window (run.json's traffic_start and
length_s). The first SKIP seconds of the traffic (before any inflation
there is nothing to compare) are left out of the pooled table. A terminal
that delivered at most STALL_RATE kB/s for at least STALL_S seconds of one
phase is counted as stalled; its line then gives the median congestion window
and SRTT of its upload and of the hosts' over that phase (flows.csv).

While coop competes its reason names the floor it asks for ("floor DST: lo
N"), and the record's lo is what the agent applied after its cap on lower
bounds (policy.ClampDecision): the second table counts the competing
evaluations whose floor the cap cut, and the median of applied / asked over
them (docs/results.md, "The competitive floor through the agent's cap").

Usage: phases.py RESULTS_DIR [...]   (directories written by `coopcc lab run`;
valid runs with managed and unmanaged terminals only). Prints one line per
managed terminal and, per N, the pooled managed/unmanaged ratio of each
phase and the floors' table."""
import csv
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict
from datetime import datetime

SKIP = 3.0
STALL_S, STALL_RATE = 8.0, 7.0
DATA_BYTES = 100_000


def stamp(s):
    """Seconds since the epoch of an RFC 3339 time with nanoseconds."""
    return datetime.fromisoformat(s[:26].rstrip("Z")).timestamp()


def receive_counts(run, t0):
    """Per station, the (seconds since t0, bytes received) samples of its
    data connection (the counter that only grows)."""
    counts = defaultdict(list)
    with open(os.path.join(run, "receivers.csv")) as f:
        for row in csv.DictReader(f):
            b = int(row["bytes_received"])
            samples = counts[row["netns"]]
            if b > 0 and (not samples or b >= samples[-1][1]):
                samples.append((float(row["t_s"]) - t0, b))
    return counts


def received(samples, t):
    """Bytes received by t (the last sample at or before it)."""
    v = 0
    for ts, b in samples:
        if ts > t:
            break
        v = b
    return v


def kbytes(counts, stations, a, b):
    """kB the stations received between a and b, per station (their mean)."""
    return sum(received(counts[s], b) - received(counts[s], a) for s in stations) / len(stations) / 1e3


def windows(run, t0):
    """The (seconds since t0, station, cwnd, SRTT s) samples of the uploads
    (connections that sent at least DATA_BYTES: not iperf3's control one)."""
    out = []
    with open(os.path.join(run, "flows.csv")) as f:
        for row in csv.DictReader(f):
            if int(row["bytes_sent"] or 0) >= DATA_BYTES:
                out.append((float(row["t_s"]) - t0, row["netns"], int(row["cwnd"]), int(row["srtt_us"]) / 1e6))
    return out


def window_note(samples, stations, a, b):
    """Median cwnd and SRTT of the stations' uploads between a and b."""
    inside = [(w, r) for t, s, w, r in samples if s in stations and a <= t <= b]
    if not inside:
        return "no samples"
    return f"cwnd {statistics.median(w for w, _ in inside):.0f} at SRTT {statistics.median(r for _, r in inside):.1f} s"


def floors(bounds):
    """(asked, applied) lower bounds of the competing evaluations of one
    bounds log: the floor the policy's reason names, the lo the agent
    applied."""
    out = []
    with open(bounds) as f:
        for line in f:
            e = json.loads(line)
            reason = e.get("reason", "")
            at = reason.find("; floor ")
            if e.get("mode") != "competing" or at < 0:
                continue
            m = re.search(re.escape(e.get("dst", "")) + r": lo (\d+)", reason[at:])
            if m:
                out.append((int(m.group(1)), e["lo"]))
    return out


def phases(bounds, t0, end):
    """The (start, end, phase) spans of one terminal's bounds log."""
    marks, mode, seen = [(0.0, "before")], None, False
    with open(bounds) as f:
        for line in f:
            e = json.loads(line)
            m = e.get("mode")
            if not m or m == mode:
                continue
            mode, t = m, stamp(e["t"]) - t0
            if m == "competing":
                seen = True
                marks.append((t, "competing"))
            elif seen:
                marks.append((t, "cooperating"))
    spans = []
    for i, (t, p) in enumerate(marks):
        stop = min(marks[i + 1][0] if i + 1 < len(marks) else end, end)
        if stop > t:
            spans.append((max(t, 0.0), stop, p))
    return spans


def main(dirs):
    pooled = defaultdict(lambda: [0.0, 0.0, 0.0])  # (n, phase) -> managed, hosts, seconds
    stalls, terminals = defaultdict(int), defaultdict(int)
    asked = defaultdict(list)  # n -> (asked, applied) floors
    runs = sorted(r for d in dirs for r in glob.glob(os.path.join(d, "runs", "*")))
    for run in runs:
        meta = json.load(open(os.path.join(run, "run.json")))
        managed = {s["name"] for s in meta["stations"] if s["managed"]}
        if not meta.get("valid") or not managed:
            continue
        t0, n = stamp(meta["traffic_start"]), meta["n"]
        end = float(meta["length_s"])
        counts = receive_counts(run, t0)
        hosts = [s for s in counts if s not in managed]
        if not hosts:
            continue
        samples = windows(run, t0)
        for bounds in sorted(glob.glob(os.path.join(run, "bounds", "sta*.jsonl"))):
            sta = os.path.basename(bounds).split(".")[0]
            if sta not in managed:
                continue
            terminals[n] += 1
            asked[n] += floors(bounds)
            parts, stalled = [], False
            for a, b, p in phases(bounds, t0, end):
                mine, theirs = kbytes(counts, [sta], a, b), kbytes(counts, hosts, a, b)
                parts.append(f"{p}[{a:.0f}-{b:.0f}s] {mine / (b - a):.0f}/{theirs / (b - a):.0f}")
                if b - a >= STALL_S and mine / (b - a) <= STALL_RATE:
                    stalled = True
                    parts[-1] += f" (stalled: {window_note(samples, {sta}, a, b)}; hosts {window_note(samples, set(hosts), a, b)})"
                if b > SKIP:
                    # Pooled over the part after SKIP only (until
                    # 2026-11-27 a phase that began before SKIP entered
                    # with the rate of the whole phase).
                    a = max(a, SKIP)
                    w = pooled[(n, p)]
                    w[0] += kbytes(counts, [sta], a, b)
                    w[1] += kbytes(counts, hosts, a, b)
                    w[2] += b - a
            stalls[n] += stalled
            print(f"{os.path.basename(run)} {sta}: " + "  ".join(parts) + " (kB/s, managed/unmanaged mean)")
    print("\n| N | before the first verdict | competing | cooperating after a verdict | terminals with a stall |")
    print("|---|---|---|---|---|")
    for n in sorted(terminals):
        cells = []
        for p in ("before", "competing", "cooperating"):
            m, h, secs = pooled[(n, p)]
            cells.append(f"{m / h:.2f} ({secs:.0f} terminal-seconds)" if h > 0 else "-")
        print(f"| {n} | " + " | ".join(cells) + f" | {stalls[n]} of {terminals[n]} |")
    print("\n| N | competing evaluations with a floor | floors the agent's cap cut | median applied / asked of those |")
    print("|---|---|---|---|")
    for n in sorted(terminals):
        cut = [applied / want for want, applied in asked[n] if applied < want]
        median = f"{statistics.median(cut):.2f}" if cut else "-"
        print(f"| {n} | {len(asked[n])} | {len(cut)} | {median} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
