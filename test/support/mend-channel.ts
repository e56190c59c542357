import { expect } from 'chai';
import type { Gateway } from '../../src/gateway';

/**
 * An operator's disable and enable of a channel, which mends it: the router forgets a refusal of
 * its credentials, an open circuit or a cooldown (docs/operations.md, Routing). For the tests whose
 * one shared simulator channel was made to fail on purpose and must serve the tests after. It goes
 * through Upstreams.setEnabled, the seam the channels admin API drives, because the simulator's
 * fallback channels (`default`, …) are not in the channel log the admin API edits; routing.test.ts
 * mends a channel of the log through `PATCH /admin/v1/channels/{id}`.
 */
export function mendChannel(gw: Pick<Gateway, 'upstreams' | 'router'>, name: string): void {
  gw.upstreams.setEnabled(name, false);
  gw.upstreams.setEnabled(name, true);
  expect(gw.router.health(name).state, `channel ${name} mended`).to.equal('closed');
}
