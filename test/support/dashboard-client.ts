export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

/** A browser's view of the dashboard API: the session cookie it was given, and the CSRF token it read. */
export class DashboardClient {
  cookie: string | null = null;
  csrf: string | null = null;
  constructor(private readonly url: string, private readonly extraHeaders: Record<string, string> = {}) {}

  async call(method: string, path: string, body?: unknown, options: { csrf?: boolean; headers?: Record<string, string> } = {}): Promise<Reply> {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        ...this.extraHeaders,
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(options.csrf !== false && this.csrf ? { 'x-csrf-token': this.csrf } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      const pair = setCookie.split(';')[0]!;
      this.cookie = pair.endsWith('=') ? null : pair;
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async signIn(secret: string): Promise<Reply> {
    const reply = await this.call('POST', '/dashboard/api/session', { secret });
    if (reply.status === 201) this.csrf = reply.body.csrf_token;
    return reply;
  }
}
