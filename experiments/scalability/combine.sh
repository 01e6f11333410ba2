#!/usr/bin/env bash
# combine.sh ROOT: merges ROOT/chunks/*/runs into ROOT/all (hard links), with the first chunk's meta.json
# and the full scenario file; the report treats it as one results directory.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=$1
rm -rf "$root/all"; mkdir -p "$root/all/runs"
first=""
for c in "$root"/chunks/*/; do
  [ -f "$c/meta.json" ] || continue
  [ -n "$first" ] || first=$c
  for r in "$c"/runs/*/; do
    [ -f "$r/run.json" ] || continue
    cp -al "$r" "$root/all/runs/"
  done
done
cp "$first/meta.json" "$root/all/meta.json"
cp "$repo/scenarios/scalability.toml" "$root/all/scenario.toml"
ls "$root/all/runs" | wc -l
