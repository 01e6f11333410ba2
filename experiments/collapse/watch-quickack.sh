#!/usr/bin/env bash
# Adds "quickack 1" to every IPv4 route of ONE lab process's server namespace (receiver ACKs every
# segment instead of every 2nd). usage: watch-quickack.sh LABPID LOG
pid=$1; log=$2
declare -A done
while kill -0 "$pid" 2>/dev/null; do
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^cclab-$pid-[0-9]+-srv$"); do
    [ -n "${done[$ns]:-}" ] && continue
    routes=$(ip -n "$ns" -4 route show | grep -v quickack)
    [ -z "$routes" ] && continue
    while read -r r; do ip -n "$ns" route change $r quickack 1 >> "$log" 2>&1 || echo "FAIL $ns $r" >> "$log"; done <<< "$routes"
    echo "$(date +%s.%N) $ns: $(ip -n "$ns" -4 route show | tr '\n' ';')" >> "$log"
    done[$ns]=1
  done
  sleep 0.05
done
