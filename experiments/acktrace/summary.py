#!/usr/bin/env python3
"""Summarise an acktrace CSV: how many data segments were ACKed at once
(the next segment arrived with nothing unacknowledged before it), split by
the receiver's state when the segment arrived: rcv_ssthresh under
window_clamp or not, the segment's PSH flag, and whether it was the first
segment after an ACK. Usage: summary.py trace.csv"""
import collections
import csv
import sys

PSH = 0x08


def main(path):
    by_sock = collections.defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["event"] == "0":
                by_sock[r["sock"]].append(r)
    n, acked = collections.Counter(), collections.Counter()
    for segs in by_sock.values():
        for a, b in zip(segs, segs[1:]):
            key = (
                "ssthresh<clamp" if int(a["rcv_ssthresh"]) < int(a["window_clamp"]) else "ssthresh=clamp",
                "PSH" if int(a["flags"], 16) & PSH else "-",
                "first after an ACK" if a["unacked"] == "0" else "second",
            )
            n[key] += 1
            if b["unacked"] == "0":
                acked[key] += 1
    total = sum(n.values())
    if total == 0:
        print("no data segments traced")
        return
    print(f"{total} segments on {len(by_sock)} receivers, {sum(acked.values()) / total:.2f} ACKed at once")
    for key in sorted(n):
        print(f"  {key[0]:15s} {key[1]:4s} {key[2]:19s} {n[key]:7d} ({n[key] / total:5.1%})  ACKed at once {acked[key] / n[key]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
