#!/usr/bin/env bash
# `npm run demo [-- up|down|status|standby|stop <node>|start <node>]`: set up and build before `up`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-up}" = up ]; then
  bash scripts/setup.sh
  npm run --silent build
fi
exec node --import tsx scripts/demo.ts "$@"
