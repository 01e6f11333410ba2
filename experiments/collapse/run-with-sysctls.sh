#!/usr/bin/env bash
# usage: run-with-sysctls.sh SCENARIO OUT key=value...   (runs under the lab lock; sets the sysctls
# in that run's station namespaces as soon as they exist)
scen=$1; out=$2; shift 2
cd "$(dirname "$0")"   # BIN: a coopcc binary copied or linked here as ./bin
sh -c "./bin lab run $scen --wait --out $out > $out.log 2>&1" &
# wait for our lab process (child of that sh) to appear
while :; do
  pid=$(pgrep -f -x "./bin lab run $scen --wait --out $out" | head -1)
  [ -n "$pid" ] && break
  sleep 0.2
done
./watch-sysctl.sh "$pid" "$out.sysctl.log" "$@"
wait
