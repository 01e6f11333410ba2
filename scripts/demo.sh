#!/usr/bin/env bash
# Placeholder until the lab lands: shows the monitor on a real flow.
set -euo pipefail
echo "coopcc demo: the lab is not built yet"
bin/coopcc version
