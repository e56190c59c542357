// Mocha's configuration for `npm test` (scripts/test.sh) and `npm run test:integration`: the unit,
// integration, fuzz and browser (test/e2e) files.
// The suites mostly wait (sockets, PostgreSQL, child processes), so several run at once, each file
// in a worker process of its own; MOCHA_JOBS overrides how many (default 4). Targeted runs use
// `--no-config` (docs/testing.md) and run serially.
const fs = require('node:fs');

// Worker processes take files in this order: the longest first (as measured in parallel runs), so
// that no long file starts last and runs alone at the end. Then the rest of each folder.
const LONGEST_FIRST = [
  'test/integration/minutes.test.ts',
  'test/integration/video.test.ts',
  'test/integration/risk.test.ts',
  'test/integration/video-restart.test.ts',
  'test/integration/images.test.ts',
  'test/integration/npm-start.test.ts',
  'test/fuzz/bad-requests.test.ts',
  'test/e2e/dashboard.test.ts',
  'test/e2e/dashboard-shell.test.ts',
  'test/integration/assets.test.ts',
  'test/integration/scale-out.test.ts',
  'test/integration/fleet-hosts.test.ts',
];
const ALL = ['test/fuzz', 'test/integration', 'test/e2e', 'test/unit'].flatMap((dir) =>
  fs
    .readdirSync(dir, { recursive: true })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `${dir}/${name}`)
    .sort(),
);

module.exports = {
  require: ['tsx/cjs', 'test/support/global-fixture.ts'],
  spec: [...LONGEST_FIRST.filter((file) => ALL.includes(file)), ...ALL.filter((file) => !LONGEST_FIRST.includes(file))],
  parallel: true,
  jobs: Number(process.env.MOCHA_JOBS ?? 4),
  // A safety net for a test that hangs; a machine whose cores are busy elsewhere is slow, not wrong.
  timeout: 120000,
  slow: 2000,
};
