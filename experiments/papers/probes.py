#!/usr/bin/env python3
"""What coop's queue probes measured, against what the receivers got
(docs/results.md, fortieth session: "The tail after a probe").

For every up-probe a group judged at the end of its first half-epoch
("queue probe A → B segments per contender: delivery ×R (±S)" in the
agents' logs, logs/agent-*.log), the receivers' byte counts
(receivers.csv) over the same three windows the agents compared: the
baseline (the last three evaluations of the epoch before), the probe's arm
(the epoch's evaluations 2–4) and, for a probe checked against the epoch's
tail, the tail (evaluations 7–9). Each evaluation covers the interval
before it; an epoch is EPOCH_TICKS evaluations of EVAL seconds, aligned to
the wall clock (policy.ProbeEpochTicks, the agent's monitor interval), and
the evaluations' offset in it is read from the leader's bounds records.
Probes judged against another baseline (a chained step's, or one that went
on as the next epoch's probe against its first arm) are left out.

Usage: probes.py [--only TEXT] RESULTS_DIR [...]   (directories written by
`coopcc lab run`; every run under DIR/runs/, valid or not, is read and
marked; --only keeps the runs whose name contains TEXT, e.g.
wired_rate=100Mbps). Prints
one line per probe: the step, the agents' ratios (the first look against
the baseline; against the tail where checked) and the receivers' (probe
over baseline, tail over baseline, probe over tail: the tail is the learned
value's only where the probe was not adopted at its first look), then the
medians per step over the runs the emulator marked valid."""
import csv
import datetime
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

EVAL = 0.5
EPOCH_TICKS = 10
FIRST = re.compile(r"queue probe (\d+) → (\d+) segments per contender: delivery ×([0-9.]+) \(±([0-9.]+)\)(, | \(arm)")
TAIL = r"queue probe {} → {} segments per contender: delivery ×([0-9.]+) \(±([0-9.]+)\) of the epoch's tail"
OTHER_BASE = ("against the same baseline", "chained into")


def stamp(s):
    return datetime.datetime.fromisoformat(s.rstrip("Z")[:26]).replace(tzinfo=datetime.timezone.utc).timestamp()


def received(run):
    """Bytes received by every receiving socket, per 0.1 s bin."""
    last, bins = {}, defaultdict(float)
    with open(os.path.join(run, "receivers.csv")) as f:
        for r in csv.DictReader(f):
            key, b, t = (r["netns"], r["src"], r["dst"]), int(r["bytes_received"]), float(r["t_s"])
            if key in last:
                bins[int(t * 10)] += b - last[key]
            last[key] = b
    return bins


def rate(bins, a, b):
    return sum(bins.get(k, 0) for k in range(int(a * 10), int(b * 10))) / (b - a)


def notes(run):
    """The probe verdicts of the group's leaders (the notes that are not a
    follower's), with the station whose log has them."""
    out = set()
    for path in glob.glob(os.path.join(run, "logs", "agent-*.log")):
        sta = os.path.basename(path)[len("agent-"):-len(".log")]
        with open(path) as f:
            for line in f:
                if '"queue probe"' not in line:
                    continue
                x = json.loads(line)
                n = x.get("note", "")
                if "probe leader" not in n and "(arm 2" not in n and "(arm 3" not in n and "held" not in n:
                    out.add((stamp(x["time"]), n, sta))
    return sorted(out)


def offset(run, sta):
    """The evaluations' offset in their half-second grid, from the station's bounds records."""
    path = os.path.join(run, "bounds", sta + ".jsonl")
    if not os.path.exists(path):
        return 0.0
    with open(path) as f:
        offs = [stamp(json.loads(line)["t"]) % EVAL for line in f]
    return statistics.median(offs) if offs else 0.0


def probes(run):
    meta = json.load(open(os.path.join(run, "run.json")))
    bins, seq = received(run), notes(run)
    epoch = EPOCH_TICKS * EVAL
    for i, (t, n, sta) in enumerate(seq):
        m = FIRST.search(n)
        if not m or int(m.group(2)) <= int(m.group(1)):
            continue
        if any(t - t0 < epoch + 1 and any(o in n0 for o in OTHER_BASE) for t0, n0, _ in seq[:i]):
            continue
        x = offset(run, sta)
        e0 = (t - x) // epoch * epoch + x  # the epoch's first evaluation
        base = rate(bins, e0 - 4 * EVAL, e0 - EVAL)
        probe = rate(bins, e0 + EVAL, e0 + 4 * EVAL)
        tail = rate(bins, e0 + 6 * EVAL, e0 + 9 * EVAL)
        checked = None
        if "to be checked" in n:
            for t2, n2, _ in seq[i + 1:]:
                mm = re.search(TAIL.format(m.group(1), m.group(2)), n2)
                if mm and t2 - t < epoch:
                    checked = float(mm.group(1))
                    break
        if base > 0 and tail > 0:
            yield {"run": run, "valid": meta.get("valid", False), "step": (int(m.group(1)), int(m.group(2))),
                   "first": float(m.group(3)), "tail": checked,
                   "probe/base": probe / base, "tail/base": tail / base, "probe/tail": probe / tail}


def main(args):
    only = ""
    if len(args) > 1 and args[0] == "--only":
        only, args = args[1], args[2:]
    rows = []
    for d in args:
        for run in sorted(glob.glob(os.path.join(d, "runs", "*"))):
            if only in os.path.basename(run) and all(os.path.exists(os.path.join(run, f)) for f in ("receivers.csv", "run.json")):
                rows += list(probes(run))
    print("step     agents: first  tail    | receivers: probe/base tail/base probe/tail | run")
    for r in rows:
        tail = "×%.3f" % r["tail"] if r["tail"] else "  –   "
        print("%3d → %-3d        ×%.3f %s  |            ×%.3f     ×%.3f    ×%.3f     | %s%s" % (
            *r["step"], r["first"], tail, r["probe/base"], r["tail/base"], r["probe/tail"],
            os.path.basename(r["run"]), "" if r["valid"] else " (invalid)"))
    print()
    valid = [r for r in rows if r["valid"]]
    print("medians over the probes of the valid runs (%d of %d probes):" % (len(valid), len(rows)))
    for step in sorted({r["step"] for r in valid}):
        rs = [r for r in valid if r["step"] == step]
        checked = [r for r in rs if r["tail"]]
        line = "%d → %d: %d probes, median first look ×%.3f, receivers probe/base ×%.3f" % (
            *step, len(rs), statistics.median(r["first"] for r in rs), statistics.median(r["probe/base"] for r in rs))
        if checked:
            line += "; %d checked against the tail: agents ×%.3f, receivers probe/tail ×%.3f, tail/base ×%.3f" % (
                len(checked), statistics.median(r["tail"] for r in checked), statistics.median(r["probe/tail"] for r in checked),
                statistics.median(r["tail/base"] for r in checked))
        print(line)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
