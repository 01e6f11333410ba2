#!/usr/bin/env python3
"""Print the queue probe's verdicts of lab runs, one line per run.

usage: verdicts.py RUN_DIR...   (e.g. OUT/runs/*)

Reads the agents' logs (logs/agent-<station>.log, JSON) for their
"queue probe" lines: the credited start ("start ×r", "up" when it was taken
for a gain) and each judged probe ("from→to ×ratio adopted|rejected|
promising|checked"; a probe checked against its epoch's tail, coop step 3a
since the thirty-fourth session, then "tail ×ratio adopted|rejected"). With a probe leader (coop step 3b) only the leader judges; the
followers' lines (the leader's value taken) are left out, so each probe
appears once. Without one, every terminal's verdict is printed.
"""
import glob
import json
import os
import re
import sys

PROBE = re.compile(r"queue probe (\d+) → (\d+) segments per contender: delivery ×([0-9.]+) \(±([0-9.]+)\)( of the epoch's tail)?, (a gain to be checked|\w+)")


def verdicts(run):
    out = []
    for path in glob.glob(os.path.join(run, "logs", "agent-*.log")):
        with open(path) as f:
            for line in f:
                if '"queue probe"' not in line:
                    continue
                d = json.loads(line)
                note = d.get("note", "")
                m = PROBE.match(note)
                if m:
                    verdict = "checked" if m[6].startswith("a gain") else m[6][:3]
                    if m[5]:
                        out.append((d["time"], f"tail ×{m[3]} {verdict}"))
                    else:
                        out.append((d["time"], f"{m[1]}→{m[2]} ×{m[3]} {verdict}"))
                elif note.startswith("uncontrolled start"):
                    r = re.search(r"×[0-9.]+", note)[0]
                    out.append((d["time"], f"start {r}" + (" up" if "probing up" in note else "")))
    return [v for _, v in sorted(out)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for run in sys.argv[1:]:
        print(f"{os.path.basename(run.rstrip('/'))}: {'; '.join(verdicts(run)) or '(no queue probe lines)'}")


if __name__ == "__main__":
    main()
