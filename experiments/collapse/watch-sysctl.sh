#!/usr/bin/env bash
# Sets sysctls in the station namespaces of ONE lab process (by its PID) as soon as they appear.
# usage: watch-sysctl.sh LABPID LOG key=value...
pid=$1; log=$2; shift 2
declare -A done
while kill -0 "$pid" 2>/dev/null; do
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^cclab-$pid-[0-9]+-sta[0-9]+$"); do
    [ -n "${done[$ns]:-}" ] && continue
    for kv in "$@"; do ip netns exec "$ns" sysctl -q -w "$kv" || echo "FAIL $ns $kv"; done >> "$log" 2>&1
    echo "$(date +%s.%N) $ns $(for kv in "$@"; do ip netns exec "$ns" sysctl -n "${kv%%=*}"; done | tr '\n' ' ')" >> "$log"
    done[$ns]=1
  done
  sleep 0.05
done
