import { recordingServer, type RecordingServer } from './recording-server';
import { completion } from './scripted-chat';

/** A provider that answers OpenAI's chat completions and model list to a Bearer key it accepts, and records each request. */
export async function keyCheckingOpenAiProvider(accepted: () => readonly string[]): Promise<RecordingServer> {
  return recordingServer((request, res) => {
    const key = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    res.setHeader('content-type', 'application/json');
    if (!key || !accepted().includes(key)) {
      res.statusCode = 401;
      // As OpenAI does: the refusal quotes the key it got, which must never reach an admin answer.
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
      return;
    }
    if (request.url.endsWith('/models')) {
      res.end(JSON.stringify({ object: 'list', data: [] }));
      return;
    }
    res.end(JSON.stringify(completion([[{ content: 'ok' }, 'stop']], { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 })));
  });
}
