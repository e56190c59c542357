import type { ChargeChannels } from '../domain/account/events';

/**
 * The channels that served one charge's calls, gathered as the calls are made and recorded on its
 * settlement (docs/auditing.md, "The channel that served"). One rule for every capability: the
 * main call's channel is `channel` (without one, as for a screening whose writer was not
 * called, the first channel that served), and when the calls went to more than one channel,
 * `channels` lists them all.
 */
export function chargeChannels(main: string | null, all: Iterable<string>): ChargeChannels {
  const every = new Set(all);
  if (main !== null) every.add(main);
  const channel = main ?? every.values().next().value;
  if (channel === undefined) return {};
  return every.size > 1 ? { channel, channels: [...every].sort() } : { channel };
}
