#!/usr/bin/env python3
"""Connection-setup delay of each station's data flow (first sample in state ESTABLISHED minus
first sample of the flow) and the goodput per station from run.json. Usage: setup.py RUNDIR"""
import csv, sys, json, os, collections
run = sys.argv[1]
rj = json.load(open(os.path.join(run, "run.json")))
fl = collections.defaultdict(list)
for r in csv.DictReader(open(os.path.join(run, "flows.csv"))):
    fl[(r["netns"], r["src"])].append(r)
best = {}
for (st, src), rs in fl.items():
    b = max(int(x["bytes_acked"]) for x in rs)
    if st not in best or b > best[st][0]: best[st] = (b, rs)
t0 = min(float(rs[0]["t_s"]) for _, rs in best.values())
gp = rj.get("goodput_bps", {})
out = []
for st in sorted(best, key=lambda s: int(s[3:])):
    rs = best[st][1]
    first = float(rs[0]["t_s"]); est = next((float(r["t_s"]) for r in rs if r["state"] == "1"), None)
    out.append(f"{st}: first {first-t0:5.1f}s setup {'never' if est is None else f'{est-first:5.1f}s'} syn_retx {max([int(r['retrans']) for r in rs if r['state']=='2'] or [0])} goodput {gp.get(st,0)/1e6:5.2f}")
print("\n".join(out))
g = [v for v in gp.values()]
if g: print(f"aggregate {sum(g)/1e6:.2f} Mbit/s, Jain {sum(g)**2/(len(g)*sum(x*x for x in g)):.3f}")
