#!/usr/bin/env bash
cd "$(dirname "$0")"   # BIN: a coopcc binary copied or linked here as ./bin
scen=quickack.toml; out=$PWD/quickack
sh -c "./bin lab run $scen --wait --out $out > $out.log 2>&1" &
while :; do pid=$(pgrep -f -x "./bin lab run $scen --wait --out $out" | head -1); [ -n "$pid" ] && break; sleep 0.2; done
./watch-quickack.sh "$pid" "$out.route.log"
wait
