#!/usr/bin/env bash
# sweep.sh BIN ROOT DURATION CHUNK... (CHUNK = mode-delay, e.g. coop-4ms): one results directory per
# chunk under ROOT/chunks, from the repository's scenarios/scalability.toml; `coopcc lab run --wait`
# queues on the machine's lab lock, so other lab runs may interleave between chunks.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1; root=$2; dur=$3; shift 3
mkdir -p "$root/chunks"
for ch in "$@"; do
  mode=${ch%-*}; delay=${ch##*-}
  out="$root/chunks/$ch"
  [ -e "$out/meta.json" ] && grep -q '"end"' "$out/meta.json" && continue
  rm -rf "$out"
  sed -e "s/^modes = .*/modes = [\"$mode\"]/" -e "s/^duration = \"60s\"/duration = \"$dur\"/" \
      -e "s/^delay = .*/delay = [\"$delay\"]/" "$repo/scenarios/scalability.toml" > "$root/chunks/$ch.toml"
  "$bin" lab run "$root/chunks/$ch.toml" --coopcc "$bin" --wait --out "$out" >> "$root/sweep.log" 2>&1
  sleep 15
done
echo "sweep done $(date)" >> "$root/sweep.log"
