#!/usr/bin/env bash
# sweep2.sh BIN ROOT DURATION CHUNK... (CHUNK = mode-delay, e.g. coop-4ms): like sweep.sh, explicit chunks, short gaps.
set -u
bin=$1; root=$2; dur=$3; shift 3
for ch in "$@"; do
  mode=${ch%-*}; delay=${ch##*-}
  out="$root/chunks/$ch"
  [ -e "$out/meta.json" ] && grep -q '"end"' "$out/meta.json" && continue
  rm -rf "$out"
  sed -e "s/^modes = .*/modes = [\"$mode\"]/" -e "s/^duration = \"60s\"/duration = \"$dur\"/" \
      -e "s/^delay = .*/delay = [\"$delay\"]/" /work/main/scenarios/scalability.toml > "$root/chunks/$ch.toml"
  flock /work/res/lab.lock "$bin" lab run "$root/chunks/$ch.toml" --coopcc "$bin" --out "$out" >> "$root/sweep.log" 2>&1
  sleep 15
done
echo "sweep2 done $(date)" >> "$root/sweep.log"
