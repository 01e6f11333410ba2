#!/usr/bin/env python3
"""Puts ns-3's saturated 802.11g uploads (ns3.csv from run.sh) next to the emulator's
(`coopcc emu validate --rate-control K`, same N, 1500-byte packets) as a Markdown table.

usage: compare.py [COOPCC_BINARY] [SECONDS]   (default: bin/coopcc of the repository, 30 s)
"""
import csv
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
coopcc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "bin", "coopcc")
secs = sys.argv[2] if len(sys.argv) > 2 else "30"

ns3 = {}
with open(os.path.join(here, "ns3.csv")) as f:
    for r in csv.DictReader(f):
        ns3[(r["manager"], int(r["n"]))] = (float(r["msdu_mbps"]), float(r["mean_phy_mbps"]), float(r["jain"]))

ns = sorted({n for _, n in ns3})
emu = {}
for m in sorted({m for m, _ in ns3}):
    out = subprocess.run([coopcc, "emu", "validate", "--rate-control", m, "--seconds", secs,
                          "--n", ",".join(map(str, ns))], capture_output=True, text=True).stdout
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and re.fullmatch(r"\d+", cells[0]):
            n = int(cells[0])
            # constant: column 7 is the model's TCP payload, not a rate; the rate is 54.
            rate = 54.0 if m == "constant" else float(cells[6])
            emu[(m, n)] = (float(cells[1]), rate, float(cells[7]))

print("| controller | N | emulator Mbps | ns-3 Mbps | difference % | emulator mean PHY Mbps | ns-3 mean PHY Mbps | Jain emu / ns-3 |")
print("|---|---|---|---|---|---|---|---|")
for (m, n), (t3, r3, j3) in sorted(ns3.items(), key=lambda kv: (["constant", "arf", "aarf", "minstrel"].index(kv[0][0]), kv[0][1])):
    if (m, n) not in emu:
        continue
    te, re_, je = emu[(m, n)]
    diff = 100 * (te - t3) / t3 if t3 > 0 else float("nan")
    print(f"| {m} | {n} | {te:.2f} | {t3:.2f} | {diff:+.1f} | {re_:.1f} | {r3:.1f} | {je:.3f} / {j3:.3f} |")
