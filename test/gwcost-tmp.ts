import fs from 'node:fs';
import { startTestGateway } from './support/gateway';
import { mochaGlobalSetup, mochaGlobalTeardown } from './support/global-fixture';
function pgTicks() {
  const pm = +fs.readFileSync('/var/run/postgresql/15-main.pid', 'utf8').split('\n')[0]!;
  let total = 0;
  for (const p of fs.readdirSync('/proc')) { if (!/^\d+$/.test(p)) continue; let f; try { f = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); } catch { continue; }
    const r = f.slice(f.lastIndexOf(')') + 2).split(' '); if (+p === pm) total += +r[11]! + +r[12]! + +r[13]! + +r[14]!; else if (+r[1]! === pm) total += +r[11]! + +r[12]!; }
  return total;
}
(async () => {
  process.env.DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
  await mochaGlobalSetup();
  (await startTestGateway()).close();
  const c0 = process.cpuUsage(); const p0 = pgTicks(); const t0 = Date.now();
  for (let i = 0; i < 10; i++) { const gw = await startTestGateway(); await gw.close(); }
  const c = process.cpuUsage(c0);
  console.log('per start+close: wall', (Date.now() - t0) / 10, 'ms; node cpu', (c.user + c.system) / 1000 / 10, 'ms; pg cpu', (pgTicks() - p0) * 10 / 10, 'ms');
  await mochaGlobalTeardown(); process.exit(0);
})();
