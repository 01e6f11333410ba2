#!/usr/bin/env python3
"""Turns the summary.csv of one or more `coopcc lab report` directories into
the Markdown tables of docs/results.md's paper sections: one row per run
group (mode, N, delay, and managed k where the runs have one), with the mean
and the range (min-max) over the valid repetitions of the aggregate goodput,
Jain's index, the p95 RTT and, for coexistence runs, the managed and
unmanaged terminals' mean goodput. Only valid runs count; a group with none
is printed with "-".

Usage: table.py REPORT_DIR/summary.csv [...]"""
import csv
import sys

MODES = ["cubic", "reno", "bbr", "hirai2013", "hayakawa2015", "hayakawa2016", "coop"]


def rng(r, key, fmt):
    """'mean (min-max)' of one metric, or '-'."""
    if not r.get(f"{key}_mean"):
        return "-"
    mean, lo, hi = (float(r[f"{key}_{s}"]) for s in ("mean", "min", "max"))
    if r[f"{key}_n"] == "1":
        return fmt.format(mean)
    return f"{fmt.format(mean)} ({fmt.format(lo)}–{fmt.format(hi)})"


def main(paths):
    rows = [r for p in paths for r in csv.DictReader(open(p))]
    coex = any("managed=" in r["group"] for r in rows)
    head = ["group", "valid", "aggregate Mbit/s", "Jain", "p95 RTT ms"]
    if coex:
        head += ["managed Mbit/s (each)", "unmanaged Mbit/s (each)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    order = {m: i for i, m in enumerate(MODES)}
    rows.sort(key=lambda r: (int(r["n"]), float(r["delay_ms"]), r["group"].count("managed=0") == 0,
                             order.get(r["mode"], 99), r["group"]))
    for r in rows:
        cells = [r["group"], f'{r["valid_runs"]}/{r["runs"]}', rng(r, "aggregate_mbps", "{:.2f}"),
                 rng(r, "jain", "{:.3f}"), rng(r, "p95_rtt_ms", "{:.0f}")]
        if coex:
            cells += [rng(r, "managed_mbps", "{:.2f}"), rng(r, "unmanaged_mbps", "{:.2f}")]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
