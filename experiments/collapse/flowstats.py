#!/usr/bin/env python3
"""Per-station TCP stats from a lab run's flows.csv: retransmissions, time in CA states,
Loss (CA 4) episodes, srtt percentiles, cwnd. Usage: flowstats.py RUNDIR"""
import csv, sys, collections, json, os
run = sys.argv[1]
rows = collections.defaultdict(list)
with open(os.path.join(run, "flows.csv")) as f:
    for r in csv.DictReader(f):
        if r["state"] != "1" or r["dst"].split(":")[-1] == "5201" and False: pass
        rows[(r["netns"], r["src"], r["dst"])].append(r)
# keep the data flow per station: the one with most bytes_acked
best = {}
for k, rs in rows.items():
    b = max(int(x["bytes_acked"]) for x in rs)
    if k[0] not in best or b > best[k[0]][0]:
        best[k[0]] = (b, rs)
def pct(v, p):
    v = sorted(v); return v[min(len(v)-1, int(p*len(v)))] if v else 0
tot = collections.Counter()
print("sta   bytes_acked  total_retrans  loss_episodes  t_in_CA(0/1/3/4) %       srtt p50/p95/max ms   cwnd p50/max  ssthresh_min")
for st in sorted(best, key=lambda s: int(s[3:])):
    b, rs = best[st]
    rs.sort(key=lambda r: float(r["t_s"]))
    ca = collections.Counter(r["ca_state"] for r in rs)
    n = len(rs)
    ep = 0; prev = "0"
    for r in rs:
        if r["ca_state"] == "4" and prev != "4": ep += 1
        prev = r["ca_state"]
    srtt = [int(r["srtt_us"])/1000 for r in rs if int(r["srtt_us"]) > 0]
    cw = [int(r["cwnd"]) for r in rs]
    ss = [int(r["ssthresh"]) for r in rs if int(r["ssthresh"]) < 1<<30]
    tr = int(rs[-1]["total_retrans"])
    tot["retrans"] += tr; tot["ep"] += ep; tot["bytes"] += b
    tot["ca4"] += ca["4"]; tot["ca3"] += ca["3"]; tot["n"] += n
    print(f"{st:5} {b:11d} {tr:14d} {ep:14d}   {100*ca['0']/n:5.1f}/{100*ca['1']/n:4.1f}/{100*ca['3']/n:4.1f}/{100*ca['4']/n:4.1f}   {pct(srtt,.5):7.0f}/{pct(srtt,.95):6.0f}/{max(srtt or [0]):6.0f}   {pct(cw,.5):5d}/{max(cw):5d}  {min(ss or [0])}")
print(f"total bytes_acked {tot['bytes']}  retrans {tot['retrans']}  loss(CA4) episodes {tot['ep']}  share of samples in Recovery {100*tot['ca3']/tot['n']:.1f}%  in Loss {100*tot['ca4']/tot['n']:.1f}%")
