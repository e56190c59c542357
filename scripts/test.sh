#!/usr/bin/env bash
# `npm test`: the static checks (type check, then the dependency rules) and the whole mocha suite
# (unit, integration, fuzz; .mocharc.js) side by side: the suite mostly waits on sockets and the
# database, so the checks' CPU fits beside it. The type check is incremental (its state in
# node_modules/.cache, never committed). Fails when either fails; the checks' output is printed
# after the suite's. Arguments go to mocha. The type check is TypeScript 7's native compiler
# (typescript-native: a fifth of 5.9's CPU); TypeScript 5.9 stays installed for the tools that use
# its JavaScript API (dependency-cruiser, openapi-typescript), which 7.0 does not have.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p node_modules/.cache
checks_log=$(mktemp)
trap 'rm -f "$checks_log"' EXIT
(
  node node_modules/typescript-native/bin/tsc --noEmit -p . --incremental --tsBuildInfoFile node_modules/.cache/typecheck.tsbuildinfo &&
    npm run -s depcheck
) >"$checks_log" 2>&1 &
checks=$!
node_modules/.bin/mocha "$@"
suite=$?
wait "$checks"
static=$?
echo "type check and dependency rules: $([ "$static" -eq 0 ] && echo passed || echo FAILED)"
[ "$static" -eq 0 ] || cat "$checks_log"
[ "$suite" -eq 0 ] && [ "$static" -eq 0 ]
