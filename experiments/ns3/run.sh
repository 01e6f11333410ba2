#!/usr/bin/env bash
# Builds sat.cc against the ns-3 libraries of the PyPI `ns3` wheel and runs the saturated upload
# sweep: every rate manager, N = 1, 5, 10, 20, as 802.11a (OFDM rates only: the emulator's 802.11g
# rate set) and as 802.11g (ERP-OFDM + DSSS/CCK rates). Appends to ns3.csv
# (manager,n,msdu_mbps,mean_phy_mbps,jain,seed,standard), skipping points already there (delete
# ns3.csv to redo). Then compare.py puts it next to the emulator.
#
# TRANSPORT=tcp runs bulk TCP uploads instead (sat.cc --transport=tcp: CUBIC to a server 4 ms
# behind the AP, 1000-packet queues) into ns3-tcp.csv
# (manager,n,goodput_mbps,mean_phy_mbps,jain,seed,standard,delay_ms,queue); compare-tcp.py puts it
# next to the lab's runs of tcp-constant.toml and tcp-arf.toml.
#
# usage: [TRANSPORT=tcp] [MANAGERS='arf minstrel'] [NS='1 5'] [STANDARDS='a g'] [NICE=10] run.sh [NS3_DIR] [SECONDS (default 5)]
#   NS3_DIR: the wheel's ns3/ directory (with include/ and lib64/); default: the one pip
#            installed for python3 (pip install ns3), found via `python3 -c 'import ns3'`.
# Not run in CI. Takes a few minutes on an idle machine (N = 20 is the slow case).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns3=${1:-$(python3 -c 'import os, ns3; print(os.path.dirname(ns3.__file__))' 2>/dev/null || true)}
secs=${2:-5}
[ -d "$ns3/include" ] && [ -d "$ns3/lib64" ] || { echo "no ns-3 include/lib64 under '$ns3' (pip install ns3, or pass the unpacked wheel's ns3/ directory)" >&2; exit 1; }
libs=$(cd "$ns3/lib64" && ls | grep -E '^libns3\.[0-9.]+-(core|network|internet|wifi|applications|mobility|propagation|spectrum|antenna|energy|bridge|traffic-control|stats|point-to-point|config-store)\.so$' | sed 's/^lib/-l/; s/\.so$//')
bin=${TMPDIR:-/tmp}/coopcc-ns3-sat
if [ ! "$bin" -nt "$here/sat.cc" ]; then
  nice -n "${NICE:-10}" g++ -std=c++20 -O1 -I "$ns3/include" "$here/sat.cc" -o "$bin" -L "$ns3/lib64" $libs -Wl,-rpath,"$ns3/lib64"
fi
transport=${TRANSPORT:-udp}
if [ "$transport" = tcp ]; then
  out=$here/ns3-tcp.csv
  [ -s "$out" ] || echo "manager,n,goodput_mbps,mean_phy_mbps,jain,seed,standard,delay_ms,queue" > "$out"
else
  out=$here/ns3.csv
  [ -s "$out" ] || echo "manager,n,msdu_mbps,mean_phy_mbps,jain,seed,standard" > "$out"
fi
for std in ${STANDARDS:-a g}; do
  for m in ${MANAGERS:-constant arf aarf minstrel}; do
    for n in ${NS:-1 5 10 20}; do
      grep -q "^$m,$n,[^,]*,[^,]*,[^,]*,[^,]*,$std\(\$\|,\)" "$out" && continue
      nice -n "${NICE:-10}" "$bin" --transport="$transport" --standard="$std" --manager="$m" --n="$n" --seconds="$secs" | tee -a "$out"
    done
  done
done
