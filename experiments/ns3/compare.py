#!/usr/bin/env python3
"""Puts ns-3's saturated uploads (ns3.csv from run.sh) next to the emulator's
(`coopcc emu validate --rate-control K`, same N, 1500-byte packets, no frame errors) as a
Markdown table. ns-3 runs twice: as 802.11a (the OFDM rates 6..54 only, the emulator's 802.11g
rate set, same per-attempt overhead) and as 802.11g (ERP-OFDM plus the DSSS/CCK rates 1..11).
The difference column compares with the 802.11a run.

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
order = ["constant", "arf", "aarf", "minstrel"]

ns3 = {}
with open(os.path.join(here, "ns3.csv")) as f:
    for r in csv.DictReader(f):
        ns3[(r.get("standard") or "g", r["manager"], int(r["n"]))] = (
            float(r["msdu_mbps"]), float(r["mean_phy_mbps"]), float(r["jain"]))

ns = sorted({n for _, _, n in ns3})
emu = {}
for m in order:
    out = subprocess.run([coopcc, "emu", "validate", "--rate-control", m, "--seconds", secs,
                          "--n", ",".join(map(str, ns))], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and re.fullmatch(r"\d+", cells[0]):
            # constant: column 7 is the model's TCP payload, not a rate; the rate is 54.
            rate = 54.0 if m == "constant" else float(cells[6])
            emu[(m, int(cells[0]))] = (float(cells[1]), rate, float(cells[7]))

print("| controller | N | emulator Mbps (mean PHY) | ns-3 11a Mbps (mean PHY) | difference % | ns-3 11g Mbps (mean PHY) | Jain emu / ns-3 11a |")
print("|---|---|---|---|---|---|---|")
for m in order:
    for n in ns:
        if (m, n) not in emu:
            continue
        te, re_, je = emu[(m, n)]
        a = ns3.get(("a", m, n))
        g = ns3.get(("g", m, n))
        fa = f"{a[0]:.2f} ({a[1]:.1f})" if a else "–"
        fg = f"{g[0]:.2f} ({g[1]:.1f})" if g else "–"
        diff = f"{100 * (te - a[0]) / a[0]:+.1f}" if a and a[0] > 0 else "–"
        ja = f"{a[2]:.3f}" if a else "–"
        print(f"| {m} | {n} | {te:.2f} ({re_:.1f}) | {fa} | {diff} | {fg} | {je:.3f} / {ja} |")
