import { expect } from 'chai';
import { getEventListeners, once } from 'node:events';
import net from 'node:net';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { countTokens } from '../../src/billing/tokens';
import { isRefusal } from '../../src/tasks/upstream-task';
import { UpstreamError } from '../../src/upstreams/errors';
import type { PodcastAsk } from '../../src/upstreams/podcast-synthesis';
import { volcenginePodcasts } from '../../src/upstreams/volcengine-speech/podcast';
import { DAYI, expectedTextSession, MIZAI, podcastChannel, podcastChannelEntry, podcastSessions, releasePodcast } from '../support/simulated-podcasts';
import { waitFor } from '../support/wait';

/**
 * The podcast adapter against the simulated provider, over a real WebSocket and the channels
 * file's entry: what it sends (the reference's StartSession payload, its handshake headers), what
 * it keeps of the rounds, its resumption with `retry_info`, its errors. The frames themselves are
 * checked against the reference's byte layouts in volcengine-podcast-frames.test.ts.
 */

describe('Volcengine podcast synthesis adapter, against the simulated provider', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator();
  });
  after(async () => sim.close());

  const ask = (text: string, changes: Partial<PodcastAsk> = {}): PodcastAsk => ({ model: 'podcast-standard', source: { text }, voices: [DAYI, MIZAI], format: 'wav', ...changes });

  /** Runs a synthesis, collecting the audio handed over. */
  async function synthesize(a: PodcastAsk, signal = new AbortController().signal, channel = podcastChannel(sim.url)) {
    const parts: Buffer[] = [];
    try {
      const report = await volcenginePodcasts.synthesize(channel, a, async (audio) => void parts.push(Buffer.from(audio)), signal);
      return { report, audio: Buffer.concat(parts) };
    } finally {
      await channel.close();
    }
  }

  async function failure(a: PodcastAsk, channel = podcastChannel(sim.url)): Promise<UpstreamError> {
    const err = await synthesize(a, undefined, channel).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }

  it('asks for 24 kHz PCM and hands over every round\'s samples, reporting the rounds\' durations and the usage events', async () => {
    const text = 'a chat about lighthouses and the sea [sim:duration=3]';
    const { report, audio } = await synthesize(ask(text));
    expect(report).to.deep.equal({ durationSeconds: 3, inputTextTokens: countTokens(text.replace('[sim:duration=3]', ' ')), outputAudioTokens: 75 });
    expect(audio.length).to.equal(3 * 24_000 * 2);
    expect(volcenginePodcasts.encoding('wav')).to.deep.equal({ container: 'pcm', sampleRate: 24_000, channels: 1, bitsPerSample: 16 });
    const [session] = await podcastSessions(sim.url, text);
    expect(session!.request).to.deep.equal(expectedTextSession(text));
    expect([session!.outcome, session!.rounds]).to.deep.equal(['finished', [0, 1]]);
  });

  it('asks a topic as the provider\'s online research (action 4) and MP3 as MP3 frames', async () => {
    const topic = 'tea in the Song dynasty [sim:duration=3]';
    const { report, audio } = await synthesize(ask('', { source: { topic }, format: 'mp3', voices: [MIZAI, DAYI] }));
    expect(report.durationSeconds).to.equal(3);
    expect(volcenginePodcasts.encoding('mp3')).to.deep.equal({ container: 'mp3' });
    // 125 frames of 24 ms (MPEG-2 layer III at 24 kHz), each opening with its sync word.
    expect(audio.length % 96).to.equal(0);
    expect(audio.length / 96).to.equal(125);
    expect([audio[0], audio[1]]).to.deep.equal([0xff, 0xf3]);
    const [session] = await podcastSessions(sim.url, topic);
    expect(session!.request).to.deep.include({ action: 4, prompt_text: topic, audio_config: { format: 'mp3', sample_rate: 24_000, speech_rate: 0 }, speaker_info: { random_order: false, speakers: [MIZAI, DAYI] } });
  });

  it('resumes a connection cut inside a round, and a round the provider reports failed, from the last whole round: no audio twice', async () => {
    const whole = (await synthesize(ask('rounds whole [sim:duration=5]'))).audio;
    for (const directive of ['[sim:cut=1]', '[sim:round-error=1]']) {
      const text = `rounds resumed ${directive} [sim:duration=5]`;
      const signal = new AbortController().signal;
      const { report, audio } = await synthesize(ask(text), signal);
      // The task's signal outlives the synthesis's connections: none of them left a listener on it.
      expect(getEventListeners(signal, 'abort'), directive).to.deep.equal([]);
      expect(audio.equals(whole), directive).to.equal(true);
      // The text's tokens, reported by both sessions, once; the audio tokens of every round once.
      expect(report, directive).to.deep.equal({ durationSeconds: 5, inputTextTokens: countTokens(text.replace(/\[sim:[^\]]*\]/g, ' ')), outputAudioTokens: 125 });
      const [first, second] = await podcastSessions(sim.url, text);
      expect(second!.retry_info, directive).to.deep.equal({ retry_task_id: first!.session_id, last_finished_round_id: 0 });
      expect(second!.request, directive).to.deep.include({ input_text: text });
      // The cut and the failed round are the task's: the same text synthesized again (a test run again) is cut again.
      expect((await synthesize(ask(text))).audio.equals(whole), directive).to.equal(true);
      const again = (await podcastSessions(sim.url, text)).slice(2);
      expect(again.map((s) => s.outcome), directive).to.deep.equal([directive === '[sim:cut=1]' ? 'cut' : 'round_error', 'finished']);
      expect(again[1]!.retry_info, directive).to.deep.equal({ retry_task_id: again[0]!.session_id, last_finished_round_id: 0 });
    }
  });

  it('gives up after five connections cut: a transient error, which the task engine retries from the start', async () => {
    const text = 'cut every time [sim:duration=3] [sim:cut=0] [sim:cuts=5]';
    const err = await failure(ask(text));
    expect([err.status, err.kind, isRefusal(err)]).to.deep.equal([502, 'network', false]);
    expect((await podcastSessions(sim.url, text)).map((s) => s.outcome)).to.deep.equal(['cut', 'cut', 'cut', 'cut', 'cut']);
  });

  it('reads the reference\'s error codes: refusals for good, the rest transient', async () => {
    const cases: [string, number, string, boolean][] = [
      ['[sim:fail]', 400, 'upstream_rejected', true], // 50302102, the script model's content filter
      ['[sim:error=40000010]', 400, 'upstream_rejected', true],
      ['[sim:error=40000022]', 400, 'input_sensitive_content', true],
      ['[sim:error=45000000]', 429, 'upstream_rate_limited', false],
      ['[sim:error=55000000]', 502, 'upstream_unavailable', false],
    ];
    for (const [directive, status, code, refusal] of cases) {
      const err = await failure(ask(`errors ${directive}`));
      expect([err.status, err.code, isRefusal(err)], directive).to.deep.equal([status, code, refusal]);
    }
    const invalid = await failure(ask('two speakers only', { voices: [DAYI, MIZAI, DAYI] }));
    expect(invalid.message).to.include('40000010');
  });

  it('takes a refused handshake as the provider answered it: a refused key is the gateway\'s credentials (the mapping: protocol-errors.test.ts)', async () => {
    const err = await failure(ask('who am I'), podcastChannel(sim.url, { headers: { 'X-Api-App-Id': 'your-speech-app-id', 'X-Api-Access-Key': 'a-wrong-token', 'X-Api-App-Key': 'aGjiRDfUWi' } }));
    expect([err.status, err.code, err.message]).to.deep.equal([401, 'upstream_auth_failed', "channel volc-podcast: the provider refused the gateway's credentials (HTTP 401)"]);
    expect(err.message).to.not.include('a-wrong-token');
  });

  it('closes the connection when aborted (a cancelled task), and a held session goes on once released', async () => {
    const text = 'held then abandoned [sim:hold] [sim:duration=2]';
    const controller = new AbortController();
    const running = synthesize(ask(text), controller.signal);
    const session = await waitFor('the session held', async () => (await podcastSessions(sim.url, text)).find((s) => s.outcome === 'held'));
    controller.abort(new Error('cancelled'));
    expect(await running.then(() => 'finished', (e: Error) => e.message)).to.equal('cancelled');
    await waitFor('the connection closed', async () => (await podcastSessions(sim.url, text))[0]!.outcome === 'closed');
    expect(await releasePodcast(sim.url, session.task_id)).to.deep.equal({ status: 200, body: { id: session.task_id, released: true } });
    expect((await releasePodcast(sim.url, session.task_id)).status, 'no longer held').to.equal(409);

    const kept = 'held then released [sim:hold] [sim:duration=2]';
    const finishing = synthesize(ask(kept));
    const held = await waitFor('the session held', async () => (await podcastSessions(sim.url, kept)).find((s) => s.outcome === 'held'));
    expect((await releasePodcast(sim.url, held.task_id)).status).to.equal(200);
    expect((await finishing).report.durationSeconds).to.equal(2);
  });
  it('survives a client frame that breaks the WebSocket framing (unmasked): that connection ends, the simulator goes on', async () => {
    const { hostname, port } = new URL(sim.url);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    const headers = Object.entries(podcastChannelEntry().headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(
      `GET /volcengine-podcast/api/v3/sami/podcasttts HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nX-Api-Resource-Id: volc.service_type.10050\r\n${headers}\r\n`,
    );
    const [answer] = (await once(socket, 'data')) as [Buffer];
    expect(answer.toString('latin1').split('\r\n')[0]).to.equal('HTTP/1.1 101 Switching Protocols');
    // A binary frame of one byte without the mask every client frame must carry (RFC 6455 §5.1).
    const closed = once(socket, 'close');
    socket.on('error', () => undefined);
    socket.write(Buffer.from([0x82, 0x01, 0x00]));
    await closed;
    const { report } = await synthesize(ask('still answering [sim:duration=2]'));
    expect(report.durationSeconds).to.equal(2);
  });
});
