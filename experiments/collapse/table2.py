#!/usr/bin/env python3
"""One markdown row per run: label, window aggregate, Jain, p95 RTT, retrans, timeouts (from
`lab report`'s runs.csv), steady aggregate [10,25] s from flows.csv, and the emulator's AP/station
drops (emu/stations.csv). Usage: table.py LABEL=RESULTSDIR..."""
import csv, sys, os, subprocess, collections
here = os.path.dirname(os.path.abspath(__file__))
print("| run | aggregate (window) Mbit/s | steady 10–25 s Mbit/s | Jain | p95 RTT ms | retrans | timeouts | AP ACK drops % | data frames per AP frame | station queue drops | retry-limit drops |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for arg in sys.argv[1:]:
    label, d = arg.split("=", 1)
    rows = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(d, "report/runs.csv"))):
        rows[r["run"]].append(r)
    jain = {r["group"]: float(r["jain_mean"]) for r in csv.DictReader(open(os.path.join(d, "report/summary.csv")))}
    for run, rs in sorted(rows.items()):
        tot = next(r for r in rs if r["station"] == "*")
        rd = os.path.join(d, "runs", run)
        st = list(csv.DictReader(open(os.path.join(rd, "emu/stations.csv"))))
        ap = next(r for r in st if r["station"] == "ap"); stas = [r for r in st if r["station"] != "ap"]
        apd, aptx = int(ap["queue_drops"]), int(ap["tx_frames"])
        data = sum(int(r["tx_frames"]) for r in stas)
        steady = subprocess.run([sys.executable, os.path.join(here, "steady.py"), os.environ.get("T1","10"), os.environ.get("T2","25"), rd], capture_output=True, text=True).stdout
        sa = steady.split("= ")[1].split(" ")[0] if "= " in steady else "?"
        extra = run.replace("mode=cubic,","").replace(",rep=1","")
        print(f"| {label}{(' ' + extra) if extra else ''} | {float(tot['goodput_mbps']):.2f} | {sa} | {jain.get(rs[0]['group'], float('nan')):.3f} | {float(tot['p95_rtt_ms']):.0f} | {tot['retrans']} | {tot['timeouts']} | "
              f"{100*apd/max(1,apd+aptx):.0f} | {data/max(1,aptx):.1f} | {sum(int(r['queue_drops']) for r in stas)} | {sum(int(r['retry_drops']) for r in stas)} |")
