import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { HttpError, isGone, sendJson } from './http';
import type { ExtraRoute } from './route';

/**
 * `[sim:gate=NAME]`: a request waits at the gate NAME before the simulator answers it, until
 * `POST /sim/gates/NAME/open`; an open gate lets every later request through at once. A test that
 * must act between two steps of the gateway (take the database away after a reservation and
 * before the settlement) opens the gate when it has acted, instead of guessing a delay.
 * `GET /sim/gates/NAME` says how many requests wait there. Names are shared by every simulator of
 * the process, so a test picks a name of its own.
 */
interface Gate {
  open: boolean;
  readonly waiting: Set<() => void>;
}

/** Keeps a hostile or careless prompt from growing the table without bound. */
const MAX_GATES = 10_000;
const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const gates = new Map<string, Gate>();

function gate(name: string): Gate {
  let found = gates.get(name);
  if (!found) {
    if (gates.size >= MAX_GATES) gates.delete(gates.keys().next().value!);
    found = { open: false, waiting: new Set() };
    gates.set(name, found);
  }
  return found;
}

/** Waits at the gate `name` names (none: passes at once); false when the client left meanwhile. */
export function passGate(name: string | true | undefined, res: ServerResponse): Promise<boolean> {
  return passGateWhile(name, res, () => isGone(res));
}

/**
 * Waits at the gate `name` names while `connection` (an answer, a WebSocket: whatever emits
 * `close`) stays open; false when it closed meanwhile (`gone`).
 */
export function passGateWhile(name: string | true | undefined, connection: Pick<EventEmitter, 'once' | 'off'>, gone: () => boolean): Promise<boolean> {
  if (typeof name !== 'string' || !NAME.test(name)) return Promise.resolve(!gone());
  const g = gate(name);
  if (g.open) return Promise.resolve(!gone());
  return new Promise((resolve) => {
    const onClose = (): void => {
      g.waiting.delete(pass);
      resolve(false);
    };
    const pass = (): void => {
      connection.off('close', onClose);
      resolve(!gone());
    };
    g.waiting.add(pass);
    connection.once('close', onClose);
  });
}

function named(params: Readonly<Record<string, string>>): string {
  const name = params.name!;
  if (!NAME.test(name)) throw new HttpError(400, 'a gate name is 1 to 100 letters, digits, _ . or -', 'invalid_gate');
  return name;
}

export function gateRoutes(): ExtraRoute[] {
  return [
    {
      method: 'GET',
      path: '/sim/gates/:name',
      handler: ({ res, params }) => {
        const g = gates.get(named(params));
        sendGate(res, params.name!, g?.open ?? false, g?.waiting.size ?? 0);
      },
    },
    {
      method: 'POST',
      path: '/sim/gates/:name/open',
      body: 'none',
      handler: ({ res, params }) => {
        const g = gate(named(params));
        const released = g.waiting.size;
        g.open = true;
        for (const pass of [...g.waiting]) pass();
        g.waiting.clear();
        sendGate(res, params.name!, true, 0, released);
      },
    },
  ];
}

function sendGate(res: ServerResponse, name: string, open: boolean, waiting: number, released?: number): void {
  sendJson(res, 200, { name, open, waiting, ...(released === undefined ? {} : { released }) });
}
