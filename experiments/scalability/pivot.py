#!/usr/bin/env python3
"""Turns a report's summary.csv into the Markdown tables of docs/results.md:
one table per wired delay, one row per N, one column per mode, each cell
"aggregate Mbit/s / Jain / p95 RTT ms". Usage: pivot.py REPORT_DIR/summary.csv"""
import csv, sys

MODES = ["cubic", "bbr", "hayakawa2015", "hayakawa2016", "coop"]
rows = list(csv.DictReader(open(sys.argv[1])))
cell = {}
for r in rows:
    if r["valid_runs"] == "0":
        continue
    cell[(r["mode"], int(r["n"]), int(float(r["delay_ms"])))] = (
        float(r["aggregate_mbps_mean"]), float(r["jain_mean"]), float(r["p95_rtt_ms_mean"]))
for delay in sorted({k[2] for k in cell}):
    modes = [m for m in MODES if any(k[0] == m and k[2] == delay for k in cell)]
    print(f"\n**Wired delay {delay} ms** — aggregate goodput Mbit/s / Jain / p95 RTT ms\n")
    print("| N | " + " | ".join(modes) + " |")
    print("|---|" + "---|" * len(modes))
    for n in sorted({k[1] for k in cell if k[2] == delay}):
        cs = []
        for m in modes:
            v = cell.get((m, n, delay))
            cs.append("—" if v is None else f"{v[0]:.1f} / {v[1]:.2f} / {v[2]:.0f}")
        print(f"| {n} | " + " | ".join(cs) + " |")
