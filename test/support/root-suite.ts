/**
 * Work to do when mocha's root suite ends: in a serial run that is the end of the run, in a
 * parallel run the end of each file a worker runs (root hooks run per file there). A shared
 * resource that lives beyond one test file (the browser suite's Chromium, test/e2e/browser.ts)
 * registers its closing here, so a serial run shares it across files and a worker never leaves it
 * running after the last of its files.
 */
const closers = new Set<() => Promise<void>>();

export function closeWhenRootSuiteEnds(close: () => Promise<void>): void {
  closers.add(close);
}

export async function closeRootSuiteResources(): Promise<void> {
  const pending = [...closers];
  closers.clear();
  await Promise.all(pending.map((close) => close()));
}
