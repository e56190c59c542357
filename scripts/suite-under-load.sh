#!/usr/bin/env bash
# Runs `npm test` several times in a row while other processes keep every core busy, as the
# project's standard asks (a suite must not depend on timing). Stops at the first failing run.
#   scripts/suite-under-load.sh [runs]        (default 3; DATABASE_URL is passed through)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
burners=()
for _ in $(seq "$(nproc)"); do
  node -e 'for (;;) {}' &
  burners+=("$!")
done
trap 'kill "${burners[@]}" 2>/dev/null || true' EXIT
for run in $(seq "$runs"); do
  echo "== run $run of $runs, with $(nproc) busy processes beside it"
  start=$(date +%s)
  npm test
  echo "== run $run passed in $(( $(date +%s) - start )) s"
done
