import fs from 'node:fs';

/**
 * `npx tsx bench/profile-summary.ts FILE.cpuprofile [TOP]`: where a V8 CPU profile's time goes,
 * as self time per function and per source (a package under node_modules, a file of this
 * repository, or V8/Node internals), so a profile can be read without DevTools.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function sourceOf(url: string): string {
  if (!url) return '(native/V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const repo = url.replace(/^file:\/\//, '').replace(process.cwd() + '/', '');
  return repo;
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary FILE.cpuprofile [TOP]');
  const top = Number(topArg ?? 30);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const perFunction = new Map<string, number>();
  const perSource = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const key = `${functionName || '(anonymous)'} ${sourceOf(url)}${url ? `:${lineNumber + 1}` : ''}`;
    perFunction.set(key, (perFunction.get(key) ?? 0) + us);
    perSource.set(sourceOf(url), (perSource.get(sourceOf(url)) ?? 0) + us);
  }
  const print = (title: string, m: Map<string, number>) => {
    process.stdout.write(`\n${title}\n`);
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`${(us / 1000).toFixed(1).padStart(10)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}\n`);
    }
  };
  process.stdout.write(`${file}: ${(total / 1000).toFixed(1)} ms sampled over ${((profile.endTime - profile.startTime) / 1000).toFixed(1)} ms\n`);
  print('self time by source', perSource);
  print('self time by function', perFunction);
}

main();
