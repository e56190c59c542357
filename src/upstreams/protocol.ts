import type { ChannelAuth } from './channel';
import type { UpstreamError } from './errors';
import type { WireAnswer } from './wire';

/**
 * A provider protocol, as a channel names it (`"protocol": "ark"`): one folder under
 * src/upstreams/ holds its adapters, and its `protocol.ts` describes it here. Adding a provider is
 * that folder, one line in protocols.ts, a channels entry and the catalog's models naming the
 * channel (docs/providers.md).
 */
export interface Protocol {
  readonly name: string;
  /** The provider's public API reference the folder follows. */
  readonly reference: string;
  /** The model types (catalog `type`) its adapters serve: a model on a channel of another protocol is not sold. */
  readonly serves: readonly string[];
  /** The authentication strategies a channel of this protocol may use. */
  readonly auth: readonly ChannelAuth['kind'][];
  /**
   * Where the built-in simulator serves this provider: the fallback (no CHANNELS) rewrites a
   * channel's base URL `https://host/prefix` to `${simulator}${simulatorPrefix}/prefix`.
   */
  readonly simulatorPrefix: string;
  /** The gateway's error for one of the provider's error answers: the protocol's one error mapping. */
  errorOf(answer: WireAnswer, channel: string): UpstreamError;
}
