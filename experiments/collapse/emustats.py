#!/usr/bin/env python3
"""AP/medium statistics of lab runs from emu/stations.csv, emu/apqueue.csv and run.json.
Usage: emustats.py RUNDIR..."""
import csv, sys, json, os
print("run | AP tx | AP queue drops | AP drop % | sta data frames | data per delivered AP frame | sta queue drops | retry drops | AP q mean/p95 frames | busy %")
for run in sys.argv[1:]:
    st = list(csv.DictReader(open(os.path.join(run, "emu/stations.csv"))))
    ap = next(r for r in st if r["station"] == "ap")
    stas = [r for r in st if r["station"] != "ap"]
    q = [int(r["frames"]) for r in csv.DictReader(open(os.path.join(run, "emu/apqueue.csv")))]
    q.sort()
    rj = json.load(open(os.path.join(run, "run.json")))
    apd = int(ap["queue_drops"]); aptx = int(ap["tx_frames"])
    data = sum(int(r["tx_frames"]) for r in stas)
    print(f"{os.path.basename(run.rstrip('/'))} | {aptx} | {apd} | {100*apd/max(1,apd+aptx):.0f} | {data} | {data/max(1,aptx):.1f} | "
          f"{sum(int(r['queue_drops']) for r in stas)} | {sum(int(r['retry_drops']) for r in stas)} | "
          f"{sum(q)/len(q):.0f}/{q[int(.95*len(q))]} | {100*rj['emu'].get('medium_busy_fraction',0):.0f}")
