#!/usr/bin/env python3
"""How much of the medium's time the managed terminals' uploads take, per
half second, as an agent could model it from what its kernel and its peers
report (docs/results.md, "Beside hosts the run is decided before the
verdict"): every segment a station delivered costs one 802.11g data frame at
54 Mbit/s (DIFS, the mean backoff of CWmin = 15, the OFDM preamble, 1536 bytes
of MPDU, the signal extension, SIFS and the MAC ACK at 24 Mbit/s: 388 us), and
every ACK that came back one such frame of the AP's (88 bytes: 176 us). The
counters are the senders' tcpi_delivered and tcpi_segs_in less
tcpi_data_segs_in (flows.csv's delivered_segs, segs_in and data_segs_in,
recorded since 472da07); managed stations are run.json's (as phases.py
reads them).

Beside hosts that run no coopcc the managed group's share stays far under
its k/N of the air from the seconds their windows grow, long before the
elasticity test's verdict; an all-coop group's is 0.8-1 once the medium is
busy. The model holds only for 802.11g at 54 Mbit/s without rate adaptation
(the ideal medium's presets): it knows no aggregation, no other rate, no
collisions.

Usage: airshare.py RESULTS_DIR [...]   (directories written by `coopcc lab
run`). Prints, per run, the managed group's modeled share and every
station's together, one value per 0.5 s from the first sample of the data
flows, for the first 12 s; and where the emulator wrote medium.csv, its own
measure of both (the managed stations' airtime share and the medium's busy
share, per 0.5 s of the emulator's clock, which starts before the flows)."""
import csv
import glob
import json
import os
import sys

DATA_S = 388e-6  # one data frame, 54 Mbit/s, with its access and MAC ACK
ACK_S = 176e-6  # one TCP ACK frame of the AP's, likewise
STEP = 10  # flows.csv samples per half second (the lab's 50 ms poll)
SLOTS = 24


def acks(row):
    return int(row["segs_in"]) - int(row["data_segs_in"])


def managed_stations(run):
    meta = json.load(open(os.path.join(run, "run.json")))
    return {s["name"] for s in meta["stations"] if s["managed"]}


def shares(run, managed):
    rows = [r for r in csv.DictReader(open(os.path.join(run, "flows.csv"))) if ":52" in r["dst"]]
    flows = {}
    for r in rows:
        flows.setdefault((r["netns"], r["src"]), []).append(r)
    t0 = min(float(r["t_s"]) for r in rows)
    group, every = [0.0] * SLOTS, [0.0] * SLOTS
    for (netns, _), v in flows.items():
        for i in range(0, len(v) - STEP, STEP):
            a, b = v[i], v[i + STEP]
            slot = int(2 * (float(a["t_s"]) - t0))
            dt = float(b["t_s"]) - float(a["t_s"])
            if slot >= SLOTS or dt <= 0:
                continue
            segs = int(b["delivered_segs"]) - int(a["delivered_segs"])
            air = (segs * DATA_S + (acks(b) - acks(a)) * ACK_S) / dt
            every[slot] += air
            if netns in managed:
                group[slot] += air
    return group, every


def measured(run, managed):
    """The emulator's own shares (emu/medium.csv, 100 ms rows on its own
    clock, written since the twenty-third session), per 0.5 s: the managed
    stations' airtime and the medium's busy time; None where absent."""
    path = os.path.join(run, "emu", "medium.csv")
    if not os.path.exists(path):
        return None
    group, busy, n = [0.0] * SLOTS, [0.0] * SLOTS, [0] * SLOTS
    for r in csv.DictReader(open(path)):
        slot = int(2 * (float(r["t_s"]) - 0.05))
        if slot >= SLOTS:
            break
        n[slot] += 1
        busy[slot] += float(r["busy_share"])
        group[slot] += sum(float(r[m + "_share"]) for m in managed if m + "_share" in r)
    return [g / k if k else 0 for g, k in zip(group, n)], [b / k if k else 0 for b, k in zip(busy, n)]


def main(dirs):
    for run in sorted(r for d in dirs for r in glob.glob(os.path.join(d, "runs", "*"))):
        managed = managed_stations(run)
        group, every = shares(run, managed)
        name = os.path.basename(os.path.dirname(os.path.dirname(run))) + " " + os.path.basename(run)
        print(f"{name} managed  " + " ".join(f"{x:.2f}" for x in group))
        print(f"{name} stations " + " ".join(f"{x:.2f}" for x in every))
        if (m := measured(run, managed)) is not None:
            print(f"{name} emulator, its own clock: managed " + " ".join(f"{x:.2f}" for x in m[0]))
            print(f"{name} emulator, its own clock: busy    " + " ".join(f"{x:.2f}" for x in m[1]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
