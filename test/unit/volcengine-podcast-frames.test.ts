import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import {
  clientEvent,
  decodeFrame,
  encodeFrame,
  FrameError,
  jsonPayload,
  MessageFlags,
  MessageType,
  PodcastEvent,
  Serialization,
} from '../../src/upstreams/volcengine-speech/podcast-frames';

/**
 * Contract tests of Volcengine speech's binary frames against the byte layouts of the podcast
 * reference, https://www.volcengine.com/docs/6561/1668014 (§2.1 "WebSocket 二进制协议", §2.4 "不同类型帧
 * 举例说明": StartSession, FinishSession, FinishConnection, SessionStarted, UsageResponse,
 * PodcastRoundResponse, the error frame of §2.2), and the protocol module of the page's demo
 * clients (`protocols.py`: a connection event carries no session id; the server's connection
 * events carry a connection id; an error frame's code precedes its payload). There is no official
 * Node SDK of this API on npm; the frames are built here byte by byte from those tables.
 */

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
/** The reference's example session id (its table gives its length as uint32(12), but it has 13 characters). */
const SESSION = 'nxckjoejnkegf';

describe('Volcengine speech binary frames (podcast synthesis)', () => {
  // A client's message type is 0b0001 ("固定为 0b0001", §2.1, and the demo's FullClientRequest): the
  // §2.4 tables print 1001 for the client's frames too, which is the server's type (0b1001).
  it('writes StartSession as the reference lays it out: header 0x11 0x14 0x10 0x00, event 100, the session id, the JSON payload', () => {
    // The reference's action-0 payload (§2.4, its trailing comma left out: the example is not JSON with it).
    const payload = { input_text: '分析下当前的大模型发展', action: 0, use_head_music: false, audio_config: { format: 'pcm', sample_rate: 24000, speech_rate: 0 } };
    const json = Buffer.from(JSON.stringify(payload));
    const expected = Buffer.concat([hex('11 14 10 00'), hex('00 00 00 64'), u32(13), Buffer.from(SESSION), u32(json.length), json]);
    expect(Buffer.from(clientEvent(PodcastEvent.StartSession, payload, SESSION))).to.deep.equal(expected);
  });

  it('writes FinishSession with its session id, and StartConnection and FinishConnection without one (14 bytes: header, event, uint32(2), "{}")', () => {
    expect(Buffer.from(clientEvent(PodcastEvent.FinishSession, {}, SESSION))).to.deep.equal(Buffer.concat([hex('11 14 10 00 00 00 00 66'), u32(13), Buffer.from(SESSION), hex('00 00 00 02 7b 7d')]));
    expect(Buffer.from(clientEvent(PodcastEvent.FinishConnection, {}))).to.deep.equal(hex('11 14 10 00 00 00 00 02 00 00 00 02 7b 7d'));
    expect(Buffer.from(clientEvent(PodcastEvent.StartConnection, {}))).to.deep.equal(hex('11 14 10 00 00 00 00 01 00 00 00 02 7b 7d'));
    // A connection event carries no session id even when one is given.
    expect(Buffer.from(clientEvent(PodcastEvent.FinishConnection, {}, SESSION))).to.deep.equal(hex('11 14 10 00 00 00 00 02 00 00 00 02 7b 7d'));
  });

  it('reads the server\'s frames: SessionStarted, UsageResponse (the reference\'s example), an audio frame, ConnectionStarted with its connection id', () => {
    const started = decodeFrame(Buffer.concat([hex('11 94 10 00 00 00 00 96'), u32(13), Buffer.from(SESSION), hex('00 00 00 02 7b 7d')]));
    expect(started).to.deep.include({ type: MessageType.FullServerResponse, flags: MessageFlags.WithEvent, serialization: Serialization.Json, event: PodcastEvent.SessionStarted, sessionId: SESSION, connectionId: null, errorCode: null, sequence: null });
    expect(jsonPayload(started)).to.deep.equal({});

    const usageJson = Buffer.from('{"usage":{"input_text_tokens":980,"output_audio_tokens":0}}');
    const usage = decodeFrame(Buffer.concat([hex('11 94 10 00 00 00 00 9a'), u32(13), Buffer.from(SESSION), u32(usageJson.length), usageJson]));
    expect([usage.event, jsonPayload(usage)]).to.deep.equal([PodcastEvent.UsageResponse, { usage: { input_text_tokens: 980, output_audio_tokens: 0 } }]);

    // "音频帧返回：0b1011", flags 0b0100, raw serialization: the payload is the audio itself.
    const audio = decodeFrame(Buffer.concat([hex('11 b4 00 00 00 00 01 69'), u32(13), Buffer.from(SESSION), hex('00 00 00 04 de ad be ef')]));
    expect(audio).to.deep.include({ type: MessageType.AudioOnlyServer, event: PodcastEvent.PodcastRoundResponse, sessionId: SESSION, serialization: Serialization.Raw });
    expect(Buffer.from(audio.payload)).to.deep.equal(hex('de ad be ef'));

    const connected = decodeFrame(Buffer.concat([hex('11 94 10 00 00 00 00 32'), u32(7), Buffer.from('conn-01'), hex('00 00 00 02 7b 7d')]));
    expect(connected).to.deep.include({ event: PodcastEvent.ConnectionStarted, sessionId: null, connectionId: 'conn-01' });
  });

  it('reads an error frame (0b11110000): its code, then its message object', () => {
    const message = Buffer.from('{"error":"quota exceeded for types: concurrency"}');
    const frame = decodeFrame(Buffer.concat([hex('11 f0 10 00'), u32(45_000_000), u32(message.length), message]));
    expect(frame).to.deep.include({ type: MessageType.Error, flags: MessageFlags.None, errorCode: 45_000_000, event: null });
    expect(jsonPayload(frame)).to.deep.equal({ error: 'quota exceeded for types: concurrency' });
    const written = encodeFrame({ type: MessageType.Error, flags: MessageFlags.None, serialization: Serialization.Json, event: null, sessionId: null, connectionId: null, sequence: null, errorCode: 45_000_000, payload: message });
    expect(Buffer.from(written)).to.deep.equal(Buffer.concat([hex('11 f0 10 00'), u32(45_000_000), u32(message.length), message]));
  });

  it('reads a sequence, a gzip payload and a longer header; writes what it reads', () => {
    const sequenced = decodeFrame(Buffer.concat([hex('11 b1 00 00'), hex('ff ff ff fe'), hex('00 00 00 01 07')]));
    expect([sequenced.flags, sequenced.sequence, [...sequenced.payload]]).to.deep.equal([MessageFlags.PositiveSequence, -2, [7]]);
    const zipped = gzipSync(Buffer.from('{"usage":{"input_text_tokens":3}}'));
    const inflated = decodeFrame(Buffer.concat([hex('11 94 11 00 00 00 00 9a'), u32(2), Buffer.from('s1'), u32(zipped.length), zipped]));
    expect(jsonPayload(inflated)).to.deep.equal({ usage: { input_text_tokens: 3 } });
    // Header size 2 (8 bytes): the 4 extra bytes are skipped.
    const wide = decodeFrame(Buffer.concat([hex('12 14 10 00 aa bb cc dd 00 00 00 01 00 00 00 02 7b 7d')]));
    expect(wide.event).to.equal(PodcastEvent.StartConnection);
    for (const frame of [sequenced, decodeFrame(clientEvent(PodcastEvent.StartSession, { action: 4, prompt_text: '火山引擎' }, SESSION))]) {
      expect(decodeFrame(encodeFrame(frame))).to.deep.equal(frame);
    }
  });

  it('refuses what is not a frame, and an event together with an error code', () => {
    const bad = [
      hex('11 94 10'), // shorter than a header
      hex('21 94 10 00 00 00 00 01 00 00 00 00'), // version 2
      hex('10 94 10 00 00 00 00 01 00 00 00 00'), // header size 0
      hex('11 54 10 00 00 00 00 01 00 00 00 00'), // message type 0b0101
      Buffer.concat([hex('11 94 10 00 00 00 00 64'), u32(40), Buffer.from(SESSION)]), // a session id past the end
      hex('11 94 10 00 00 00 00 01 00 00 00 02 7b 7d 00'), // a byte after the payload
      Buffer.concat([hex('11 94 10 00 00 00 00 64'), u32(2), hex('ff fe'), hex('00 00 00 00')]), // a session id that is not UTF-8
      Buffer.concat([hex('11 94 11 00 00 00 00 01'), hex('00 00 00 02 7b 7d')]), // "gzip" that is not
    ];
    for (const bytes of bad) expect(() => decodeFrame(bytes), bytes.toString('hex')).to.throw(FrameError);
    expect(() => jsonPayload({ payload: Buffer.from('not json') })).to.throw(FrameError);
    expect(() =>
      encodeFrame({ type: MessageType.Error, flags: MessageFlags.WithEvent, serialization: Serialization.Json, event: 1, sessionId: null, connectionId: null, sequence: null, errorCode: 1, payload: new Uint8Array() }),
    ).to.throw(FrameError);
  });
});
