import fs from 'node:fs';
import path from 'node:path';
import { mountPath } from '../../simulator/providers/provider';
import { volcenginePodcastProvider, type SimPodcastSession } from '../../simulator/providers/volcengine-podcast';
import { channelConfigs } from '../../src/config';
import { Channel } from '../../src/upstreams/channel';
import { simulatedBaseUrl, type ChannelEntry } from '../../src/upstreams/registry';

/** The simulated podcast synthesis's controls on a simulator (`/volcengine-podcast/api/v3/sim/podcasts`). */
const CONTROLS = `${mountPath(volcenginePodcastProvider)}/sim/podcasts`;

/** The sessions the simulated provider ran whose text contains `marker`, oldest first. */
export async function podcastSessions(simulatorUrl: string, marker: string): Promise<SimPodcastSession[]> {
  const res = await fetch(`${simulatorUrl}${CONTROLS}/sessions`);
  const sessions = ((await res.json()) as { data: SimPodcastSession[] }).data;
  return sessions.filter((s) => s.text.includes(marker));
}

/** Releases the held task (`[sim:hold]`) whose first session was `taskId`. */
export async function releasePodcast(simulatorUrl: string, taskId: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${simulatorUrl}${CONTROLS}/${taskId}/release`, { method: 'POST' });
  return { status: res.status, body: await res.json() };
}

/** The channels file's podcast entry (deploy/channels.example.json). */
export function podcastChannelEntry(): ChannelEntry {
  const entries = JSON.parse(fs.readFileSync(path.join(__dirname, '../../deploy/channels.example.json'), 'utf8')) as ChannelEntry[];
  const entry = entries.find((e) => e.protocol === 'volcengine_podcast');
  if (!entry) throw new Error('the channels file has no volcengine_podcast channel');
  return entry;
}

/** A channel of the file's podcast entry, its base URL moved onto the simulator at `simulatorUrl` (`changes` applied). */
export function podcastChannel(simulatorUrl: string, changes: Partial<ChannelEntry> = {}): Channel {
  const entry = podcastChannelEntry();
  return new Channel(channelConfigs([{ ...entry, base_url: simulatedBaseUrl(simulatorUrl, entry), ...changes }], 'the podcast entry')[0]!);
}

/** The provider's podcast voices, as the catalog lists them. */
export const DAYI = 'zh_male_dayixiansheng_v2_saturn_bigtts';
export const MIZAI = 'zh_female_mizaitongxue_v2_saturn_bigtts';
export const LIUFEI = 'zh_male_liufei_v2_saturn_bigtts';
export const XIAOLEI = 'zh_male_xiaolei_v2_saturn_bigtts';

/** The StartSession payload the gateway sends for a text and the default hosts (in PCM, which it makes a WAV of). */
export function expectedTextSession(text: string): Record<string, unknown> {
  return {
    action: 0,
    input_text: text,
    use_head_music: false,
    use_tail_music: false,
    speaker_info: { random_order: false, speakers: [DAYI, MIZAI] },
    audio_config: { format: 'pcm', sample_rate: 24_000, speech_rate: 0 },
  };
}
