/**
 * A channel's name, wherever it comes from (CHANNELS, the admin API, a catalog model's channels):
 * it becomes a stream id (`channel-<name>`) and a URL path segment. Not `health-…`: the routing's
 * health streams are `channel-health-<name>`, so a channel `health-x` would share channel `x`'s.
 */
export const CHANNEL_NAME_PATTERN = '^(?!health-)[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
