/**
 * The gateway's dependency rules, checked by `npm test` (`npm run depcheck`).
 * Layers: the composition root (src/gateway.ts, src/features.ts, src/model-types.ts and the entry
 * points src/main.ts and src/cli/) knows every service and wires them; everything below it (the rest of src/ and the
 * read models in projections/) is handed what it uses and never imports the root. Type-only
 * imports count (tsPreCompilationDeps): a cycle through `import type` is still a cycle.
 */
const ROOT = '^src/(gateway|features|main|model-types)\\.ts$|^src/cli/';
const BELOW_ROOT = '^(src|projections)/';
const FEATURE_DIRS = '^src/(agents|assets|chat|dashboard|media-tasks|minutes|uploads|video)/';
/** Modules that use providers: the features and the task engine they run on. */
const PROVIDER_USERS = '^src/(agents|assets|chat|dashboard|media-tasks|minutes|tasks|uploads|video)/';
/**
 * Modules allowed to name the transport: the task engine's shared helper hands each task kind its
 * channel (as the type Channel) to pass to its protocol's adapter; it builds no wire request.
 */
const TRANSPORT_EXCEPTIONS = [
  '^src/tasks/upstream-task\\.ts$', // taskChannel's return type
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle (type-only imports included) ties modules that should be layered.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-import-of-composition-root',
      severity: 'error',
      comment: 'Only the composition root knows every service: nothing below it imports it.',
      from: { path: BELOW_ROOT, pathNot: ROOT },
      to: { path: ROOT },
    },
    {
      name: 'feature-types-know-no-feature',
      severity: 'error',
      comment: 'The feature types are what features build on; they import none of the features.',
      from: { path: '^src/feature-types\\.ts$' },
      to: { path: FEATURE_DIRS },
    },
    {
      name: 'http-knows-no-feature',
      severity: 'error',
      comment: 'The HTTP layer mounts what features hand it (routers, the dashboard) through its own types; it imports none of them.',
      from: { path: '^src/http/' },
      to: { path: FEATURE_DIRS },
    },
    {
      name: 'features-use-protocol-adapters',
      severity: 'error',
      comment:
        "A feature never builds a provider's wire request: it hands its typed request to its protocol's adapter (src/upstreams/<protocol>/), which uses the transport. Errors come from src/upstreams/errors.ts; the OpenAI relay's channel type from src/upstreams/openai/relay.ts.",
      from: { path: PROVIDER_USERS, pathNot: TRANSPORT_EXCEPTIONS },
      to: { path: '^src/upstreams/(channel|wire)\\.ts$' },
    },
    {
      name: 'no-simulator-in-src',
      severity: 'error',
      comment: 'The simulator is a provider reached over HTTP; only the entry point (src/main.ts) starts it.',
      from: { path: '^(src|projections)/', pathNot: '^src/main\\.ts$' },
      to: { path: '^simulator/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
