import type { ChannelRoute } from '../../billing/catalog';

/** A number in [0, 1): Math.random, or a seeded one in tests. */
export type Random = () => number;

/**
 * The channels of a model in the order to try them: priority groups from the highest, and within
 * one group a weighted random order (each next pick in proportion to the weights left), so traffic
 * splits by weight and a failed pick falls over to the rest of its group before a lower priority.
 * `routes` come sorted by priority (the catalog sorts them). A one-channel model is yielded with
 * no work at all; a group of one takes no random number.
 */
export function* attemptOrder(routes: readonly ChannelRoute[], random: Random): Generator<string, void, undefined> {
  if (routes.length === 1) {
    yield routes[0]!.name;
    return;
  }
  let start = 0;
  while (start < routes.length) {
    let end = start + 1;
    while (end < routes.length && routes[end]!.priority === routes[start]!.priority) end++;
    if (end - start === 1) yield routes[start]!.name;
    else yield* weightedOrder(routes.slice(start, end), random);
    start = end;
  }
}

function* weightedOrder(group: ChannelRoute[], random: Random): Generator<string, void, undefined> {
  let total = group.reduce((sum, r) => sum + r.weight, 0);
  while (group.length > 0) {
    let point = random() * total;
    let i = 0;
    while (i < group.length - 1 && point >= group[i]!.weight) point -= group[i++]!.weight;
    const [picked] = group.splice(i, 1);
    total -= picked!.weight;
    yield picked!.name;
  }
}
