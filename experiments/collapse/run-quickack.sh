#!/usr/bin/env bash
cd /work/res/collapse
scen=quickack.toml; out=/work/res/collapse/quickack
flock /work/res/lab.lock sh -c "./bin lab run $scen --out $out > $out.log 2>&1" &
while :; do pid=$(pgrep -f -x "./bin lab run $scen --out $out" | head -1); [ -n "$pid" ] && break; sleep 0.2; done
./watch-quickack.sh "$pid" "$out.route.log"
wait
