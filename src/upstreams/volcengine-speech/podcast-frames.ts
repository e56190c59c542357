/**
 * The binary frames of Volcengine speech's WebSocket protocol (v3), as the podcast synthesis API
 * uses them. Reference: 豆包语音 播客API, https://www.volcengine.com/docs/6561/1668014 ("WebSocket
 * 二进制协议", the frame tables of §2.1, §2.2 and §2.4), and the protocol module of Volcengine's
 * own demo clients linked from that page (`protocols/protocols.py` of the Python demo archive
 * `volc_speech_python_sdk`: the order of the optional fields, which events carry a session id and
 * which a connection id).
 *
 * A frame is a 4-byte header (version and header size, message type and its flags,
 * serialization and compression, a reserved byte), then the optional fields the type and flags
 * call for, all integers big-endian, then the payload's length (uint32) and the payload:
 *
 * - an error frame (type 0b1111): its error code (uint32);
 * - a frame with a sequence (flags 0b0001 or 0b0011): the sequence (int32);
 * - a frame with an event (flags 0b0100): the event (int32), then a session id (uint32 length
 *   and UTF-8 bytes) unless the event is one of the connection's own, then for the server's
 *   connection events a connection id likewise.
 *
 * The reference's frames never carry an event together with a sequence or an error code; for
 * those the demo's writer and reader disagree on the order, so this codec refuses to write one.
 * A client's frames are of type 0b0001 (§2.1 "固定为 0b0001", the demo's FullClientRequest), the
 * header `0x11 0x14 0x10 0x00`; the §2.4 tables print 1001, the server's type, for them too.
 */
import { gunzipSync } from 'node:zlib';

/** The message type, the high half of byte 1. */
export const MessageType = {
  FullClientRequest: 0b0001,
  AudioOnlyClient: 0b0010,
  FullServerResponse: 0b1001,
  AudioOnlyServer: 0b1011,
  Error: 0b1111,
} as const;

/** The message type's flags, the low half of byte 1. */
export const MessageFlags = {
  None: 0b0000,
  PositiveSequence: 0b0001,
  LastNoSequence: 0b0010,
  NegativeSequence: 0b0011,
  WithEvent: 0b0100,
} as const;

export const Serialization = { Raw: 0b0000, Json: 0b0001 } as const;
export const Compression = { None: 0b0000, Gzip: 0b0001 } as const;

/** The events of a podcast synthesis (the reference's §2.3, numbers as the demo's `EventType`). */
export const PodcastEvent = {
  StartConnection: 1,
  FinishConnection: 2,
  ConnectionStarted: 50,
  ConnectionFailed: 51,
  ConnectionFinished: 52,
  StartSession: 100,
  CancelSession: 101,
  FinishSession: 102,
  SessionStarted: 150,
  SessionCanceled: 151,
  SessionFinished: 152,
  SessionFailed: 153,
  UsageResponse: 154,
  PodcastRoundStart: 360,
  PodcastRoundResponse: 361,
  PodcastRoundEnd: 362,
  PodcastEnd: 363,
} as const;

/** Events that belong to the connection, not a session: they carry no session id. */
const CONNECTION_EVENTS: ReadonlySet<number> = new Set([
  PodcastEvent.StartConnection,
  PodcastEvent.FinishConnection,
  PodcastEvent.ConnectionStarted,
  PodcastEvent.ConnectionFailed,
  PodcastEvent.ConnectionFinished,
]);

/** The server's connection events: they carry the connection's id. */
const CONNECTION_ID_EVENTS: ReadonlySet<number> = new Set([PodcastEvent.ConnectionStarted, PodcastEvent.ConnectionFailed, PodcastEvent.ConnectionFinished]);

export interface SpeechFrame {
  readonly type: number;
  readonly flags: number;
  readonly serialization: number;
  readonly compression: number;
  /** Present exactly when the flags say WithEvent. */
  readonly event: number | null;
  /** The session's id, for an event of a session. */
  readonly sessionId: string | null;
  /** The connection's id, on the server's connection events. */
  readonly connectionId: string | null;
  /** Present exactly when the flags say PositiveSequence or NegativeSequence. */
  readonly sequence: number | null;
  /** Present exactly on an error frame. */
  readonly errorCode: number | null;
  /** The payload as sent (decompressed when the frame says gzip). */
  readonly payload: Uint8Array;
}

/** A frame the codec cannot read (too short, a length past its end, bytes left over, an unknown type). */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

const PROTOCOL_VERSION = 0b0001;
const HEADER_WORDS = 0b0001;
const UTF8 = new TextEncoder();
const UTF8_DECODER = new TextDecoder('utf-8', { fatal: true });
const KNOWN_TYPES: ReadonlySet<number> = new Set(Object.values(MessageType));

function hasSequence(flags: number): boolean {
  return flags === MessageFlags.PositiveSequence || flags === MessageFlags.NegativeSequence;
}

function hasEvent(flags: number): boolean {
  return flags === MessageFlags.WithEvent;
}

/** The frame's bytes. Fields the type and flags do not call for are left out whatever they hold. */
export function encodeFrame(frame: Omit<SpeechFrame, 'compression'>): Uint8Array {
  const event = hasEvent(frame.flags);
  const sequence = hasSequence(frame.flags);
  const error = frame.type === MessageType.Error;
  if (event && (sequence || error)) throw new FrameError('a frame carries an event, or a sequence or an error code, not both');
  const parts: Uint8Array[] = [Uint8Array.of((PROTOCOL_VERSION << 4) | HEADER_WORDS, (frame.type << 4) | frame.flags, frame.serialization << 4, 0)];
  if (error) parts.push(uint32(frame.errorCode ?? 0));
  if (sequence) parts.push(int32(frame.sequence ?? 0));
  if (event) {
    const number = frame.event ?? 0;
    parts.push(int32(number));
    if (!CONNECTION_EVENTS.has(number)) parts.push(...sized(UTF8.encode(frame.sessionId ?? '')));
    if (CONNECTION_ID_EVENTS.has(number)) parts.push(...sized(UTF8.encode(frame.connectionId ?? '')));
  }
  parts.push(...sized(frame.payload));
  return concat(parts);
}

/** Reads one frame (one WebSocket message); throws FrameError when it is not one. */
export function decodeFrame(bytes: Uint8Array): SpeechFrame {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number, what: string) => {
    if (at + n > bytes.byteLength) throw new FrameError(`the frame ends inside its ${what}`);
  };
  need(4, 'header');
  const headerBytes = (bytes[0]! & 0x0f) * 4;
  const type = bytes[1]! >> 4;
  const flags = bytes[1]! & 0x0f;
  const serialization = bytes[2]! >> 4;
  const compression = bytes[2]! & 0x0f;
  if (bytes[0]! >> 4 !== PROTOCOL_VERSION) throw new FrameError(`protocol version ${bytes[0]! >> 4} is not 1`);
  if (headerBytes < 4) throw new FrameError('the header size is under 4 bytes');
  if (!KNOWN_TYPES.has(type)) throw new FrameError(`unknown message type ${type}`);
  need(headerBytes, 'header');
  at = headerBytes;
  const readUint32 = (what: string) => {
    need(4, what);
    const value = view.getUint32(at);
    at += 4;
    return value;
  };
  const readInt32 = (what: string) => {
    need(4, what);
    const value = view.getInt32(at);
    at += 4;
    return value;
  };
  const readSized = (what: string) => {
    const size = readUint32(`${what} length`);
    need(size, what);
    const value = bytes.subarray(at, at + size);
    at += size;
    return value;
  };
  const readText = (what: string) => {
    try {
      return UTF8_DECODER.decode(readSized(what));
    } catch (err) {
      if (err instanceof FrameError) throw err;
      throw new FrameError(`the ${what} is not UTF-8`);
    }
  };
  const errorCode = type === MessageType.Error ? readUint32('error code') : null;
  const sequence = hasSequence(flags) ? readInt32('sequence') : null;
  let event: number | null = null;
  let sessionId: string | null = null;
  let connectionId: string | null = null;
  if (hasEvent(flags)) {
    event = readInt32('event');
    if (!CONNECTION_EVENTS.has(event)) sessionId = readText('session id');
    if (CONNECTION_ID_EVENTS.has(event)) connectionId = readText('connection id');
  }
  const raw = readSized('payload');
  if (at !== bytes.byteLength) throw new FrameError(`${bytes.byteLength - at} bytes follow the payload`);
  return { type, flags, serialization, compression, event, sessionId, connectionId, sequence, errorCode, payload: compression === Compression.Gzip ? gunzipped(raw) : raw };
}

function gunzipped(raw: Uint8Array): Uint8Array {
  try {
    return new Uint8Array(gunzipSync(raw));
  } catch {
    throw new FrameError('the gzip payload does not inflate');
  }
}

/** A JSON payload's value; FrameError when it is not JSON (an empty payload reads as `{}`). */
export function jsonPayload(frame: Pick<SpeechFrame, 'payload'>): unknown {
  if (frame.payload.byteLength === 0) return {};
  try {
    return JSON.parse(UTF8_DECODER.decode(frame.payload)) as unknown;
  } catch {
    throw new FrameError('the payload is not JSON');
  }
}

/** A client's request frame with an event and a JSON payload (the reference's "Full-client request, with event number"). */
export function clientEvent(event: number, payload: unknown, sessionId: string | null = null): Uint8Array {
  return encodeFrame({
    type: MessageType.FullClientRequest,
    flags: MessageFlags.WithEvent,
    serialization: Serialization.Json,
    event,
    sessionId,
    connectionId: null,
    sequence: null,
    errorCode: null,
    payload: UTF8.encode(JSON.stringify(payload)),
  });
}

function uint32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

function int32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, value);
  return bytes;
}

function sized(bytes: Uint8Array): Uint8Array[] {
  return [uint32(bytes.byteLength), bytes];
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
