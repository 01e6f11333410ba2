#!/usr/bin/env python3
"""Writes the synthetic results directory testdata/results (BRIEF.md layout).

Hand-made numbers, deterministic: 4 ms wired delay, modes cubic and coop,
N = 1 and 2, one repetition each plus an invalid second repetition of
coop N=2. cubic N=2: sta2 has a loss-driven cwnd collapse at t = 1.5 s.
Run once; the output is committed. Times in flows.csv are Unix seconds like
the monitor's recorder writes them.
"""
import json, os, shutil

T0 = 1795316400.0  # 2026-11-22T03:00:00Z, the start in meta.json
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
HEADER = "t_s,netns,src,dst,cc,cwnd,ssthresh,mss,srtt_us,rttvar_us,min_rtt_us,ca_state,retrans,total_retrans,lost,unacked,bytes_acked,delivery_rate_Bps,app_limited,state"

def iperf(mbps_list, start=0.0):
    ivs, total = [], 0.0
    for i, m in enumerate(mbps_list):
        b = m * 1e6 / 8 * 0.5
        total += b
        ivs.append({"streams": [], "sum": {"start": i * 0.5, "end": (i + 1) * 0.5, "seconds": 0.5, "bytes": b,
                                            "bits_per_second": m * 1e6, "retransmits": 0, "omitted": False, "sender": True}})
    dur = len(mbps_list) * 0.5
    return {"start": {"test_start": {"protocol": "TCP", "num_streams": 1, "duration": dur, "reverse": 0}},
            "intervals": ivs,
            "end": {"sum_sent": {"start": 0, "end": dur, "seconds": dur, "bytes": total, "bits_per_second": total * 8 / dur, "retransmits": 0, "sender": True},
                    "sum_received": {"start": 0, "end": dur, "seconds": dur, "bytes": total * 0.99, "bits_per_second": total * 0.99 * 8 / dur, "sender": True}}}

def flow_rows(station, idx, cwnds, srtt_ms, rate_mbps, ca=None, retrans=None):
    rows, acked = [], 0
    for i, c in enumerate(cwnds):
        t = T0 + 0.1 * i
        if i:
            acked += int(rate_mbps[i] * 1e6 / 8 * 0.1)
        st = ca[i] if ca else 0
        rt = retrans[i] if retrans else 0
        rows.append(f"{t:.6f},{station},10.77.9.{idx + 10}:4{idx}000,10.77.9.1:5201,cubic,{c},{max(c, 2)},1448,{int(srtt_ms[i] * 1000)},{int(srtt_ms[i] * 250)},4100,{st},0,{rt},0,{c},{acked},{int(rate_mbps[i] * 1e6 / 8)},0,1")
    # iperf3's control connection: a few hundred bytes, left out by the analysis.
    rows.append(f"{T0:.6f},{station},10.77.9.{idx + 10}:3{idx}999,10.77.9.1:5201,cubic,10,2147483647,1448,4300,2000,4200,0,0,0,0,0,160,0,1,1")
    return rows

def write_run(run_id, info, stations, emu_valid=True):
    d = os.path.join(ROOT, "runs", run_id)
    os.makedirs(os.path.join(d, "iperf3"))
    os.makedirs(os.path.join(d, "emu"))
    rows = [HEADER]
    for i, st in enumerate(stations):
        with open(os.path.join(d, "iperf3", st["name"] + ".json"), "w") as f:
            json.dump(iperf(st["iperf"]), f, indent=1)
        rows += flow_rows(st["name"], i, st["cwnd"], st["srtt"], st["rate"], st.get("ca"), st.get("retrans"))
        if st.get("bounds"):
            os.makedirs(os.path.join(d, "bounds"), exist_ok=True)
            with open(os.path.join(d, "bounds", st["name"] + ".jsonl"), "w") as f:
                for ev in st["bounds"]:
                    f.write(json.dumps(ev) + "\n")
    with open(os.path.join(d, "flows.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    info = dict(info, stations=[{"name": s["name"], "managed": s.get("managed", False), "start_s": 0, "stop_s": 3, "phy_mbps": 54} for s in stations])
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(info, f, indent=1)
    with open(os.path.join(d, "emu", "stations.csv"), "w") as f:
        f.write("station,airtime_s,airtime_share,attempts,collisions,retries,drops,tx_frames,tx_bytes,rx_frames,rx_bytes\n")
        share = 0.9 / len(stations)
        for s in stations:
            f.write(f"{s['name']},{3 * share:.3f},{share:.3f},900,12,15,0,880,1270000,440,30000\n")
        f.write("ap,0.300,0.100,450,12,14,3,440,30000,880,1270000\n")
    with open(os.path.join(d, "emu", "apqueue.csv"), "w") as f:
        f.write("t_s,frames,bytes,drops_total\n")
        for i in range(31):
            fr = min(i * len(stations) * 3, 100)
            f.write(f"{0.1 * i:.2f},{fr},{fr * 66},{max(0, i - 25)}\n")
    emu = {"valid": emu_valid, "lateness_us": {"p50": 3, "p99": 55 if emu_valid else 2400, "max": 900 if emu_valid else 9000},
           "threshold_us": 500, "overload_drops": 0, "events": 120000, "reason": "" if emu_valid else "lateness p99 2400us > threshold 500us"}
    with open(os.path.join(d, "emu", "emu.json"), "w") as f:
        json.dump(emu, f)

def steady(n, v):
    return [v] * n

shutil.rmtree(ROOT, ignore_errors=True)
os.makedirs(os.path.join(ROOT, "runs"))
with open(os.path.join(ROOT, "meta.json"), "w") as f:
    json.dump({"scenario": "fixture", "git_revision": "0123456789ab", "kernel": "6.18.0-test",
               "sysctls": {"net.ipv4.tcp_congestion_control": "cubic"}, "tools": {"iperf3": "3.12"},
               "start": "2026-11-22T03:00:00Z", "end": "2026-11-22T03:01:00Z", "quick": True}, f, indent=1)
with open(os.path.join(ROOT, "scenario.toml"), "w") as f:
    f.write('name = "fixture"\nmodes = ["cubic", "coop"]\nn = [1, 2]\ndelay_ms = [4]\nrepetitions = 1\nduration_s = 3\n')

N = 31
ramp = [min(2 + 2 * i, 40) for i in range(N)]
write_run("mode=cubic,n=1,delay=4ms,rep=1", {"mode": "cubic", "n": 1, "delay_ms": 4, "rep": 1, "params": {}, "valid": True, "invalid_reason": "", "duration_s": 3},
          [{"name": "sta1", "iperf": [18, 20, 20, 21, 20, 20], "cwnd": ramp, "srtt": [4 + 0.5 * i for i in range(N)], "rate": steady(N, 20)}])
# cubic N=2: sta2 collapses at 1.5 s (cwnd 30 -> 1, CA Loss) and rebuilds by 2.4 s.
c2 = [min(2 + 2 * i, 30) for i in range(15)] + [1, 2, 4, 8, 12, 16, 20, 24, 30, 30, 30, 30, 30, 30, 30, 30]
ca2 = [0] * 15 + [4, 4] + [0] * 14
rt2 = [0] * 15 + [3] * 16
r2 = steady(15, 9) + [1, 1, 2, 2, 3, 4, 5, 6, 8, 9, 9, 9, 9, 9, 9, 9]
write_run("mode=cubic,n=2,delay=4ms,rep=1", {"mode": "cubic", "n": 2, "delay_ms": 4, "rep": 1, "params": {}, "valid": True, "invalid_reason": "", "duration_s": 3},
          [{"name": "sta1", "iperf": [14, 15, 16, 16, 15, 16], "cwnd": [min(2 + 3 * i, 60) for i in range(N)], "srtt": [4 + 3 * i for i in range(N)], "rate": steady(N, 15)},
           {"name": "sta2", "iperf": [8, 9, 2, 3, 6, 9], "cwnd": c2, "srtt": [4 + 3 * i for i in range(N)], "rate": r2, "ca": ca2, "retrans": rt2}])
write_run("mode=coop,n=1,delay=4ms,rep=1", {"mode": "coop", "n": 1, "delay_ms": 4, "rep": 1, "params": {"policy": "coop"}, "valid": True, "invalid_reason": "", "duration_s": 3},
          [{"name": "sta1", "managed": True, "iperf": [19, 21, 21, 21, 21, 21], "cwnd": [min(2 + 2 * i, 12) for i in range(N)], "srtt": steady(N, 4.6), "rate": steady(N, 21),
            "bounds": [{"t": "2026-11-22T03:00:00.5Z", "dst": "", "lo": 2, "hi": 12, "n": 1, "policy": "coop", "reason": "n=1"}]}])
for rep, valid in ((1, True), (2, False)):
    write_run(f"mode=coop,n=2,delay=4ms,rep={rep}", {"mode": "coop", "n": 2, "delay_ms": 4, "rep": rep, "params": {"policy": "coop"}, "valid": valid,
                                                   "invalid_reason": "" if valid else "emulator overloaded", "duration_s": 3},
              [{"name": s, "managed": True, "iperf": [10, 11, 11, 11, 11, 11], "cwnd": [min(2 + 2 * i, 8) for i in range(N)], "srtt": steady(N, 5 + k), "rate": steady(N, 11),
                "bounds": [{"t": "2026-11-22T03:00:00.5Z", "dst": "", "lo": 2, "hi": 8, "n": 2, "policy": "coop", "reason": "n=2"}]}
               for k, s in enumerate(("sta1", "sta2"))], emu_valid=valid)
