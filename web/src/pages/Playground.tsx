import { Fragment, useState, type FormEvent } from 'react';
import { api, ApiFailure, requestWithId, type ListBody } from '../api';
import { countText } from '../format';
import { useI18n } from '../i18n';
import { keyLabel } from '../key-names';
import type { KeyView } from '../keys-panel';
import { keyDirectory, type KeyDirectory } from '../key-names';
import { LedgerLines, type LedgerEntry } from '../ledger-table';
import { ErrorNote, Field, Loading, Section, useLoad } from '../ui';
import { unitLabel } from '../units';

type Endpoint = 'chat' | 'image';

/** The /v1 route each kind of call goes to, under /dashboard/api/playground/{key_id} (docs/dashboard.md). */
const ROUTES: Readonly<Record<Endpoint, string>> = { chat: '/v1/chat/completions', image: '/v1/images/generations' };

interface Model {
  readonly id: string;
  readonly type: string;
}

interface ChatAnswer {
  readonly choices: { message: { content: string | null } }[];
  readonly usage?: Record<string, number>;
}

interface ImageAnswer {
  readonly data: { b64_json?: string; url?: string }[];
  readonly usage?: Record<string, number>;
}

/** What one call answered, and the ledger entries it caused. */
interface Outcome {
  readonly endpoint: Endpoint;
  readonly text: string | null;
  readonly images: string[];
  readonly usage: Record<string, number> | null;
  readonly entries: LedgerEntry[];
  readonly requestId: string | null;
}

/**
 * One chat completion or image generation on behalf of a key of the account that the owner picks
 * among those the session may use (GET /dashboard/api/playground/keys):
 * the gateway serves the /v1 route for that key (its models, budget, rate and expiry apply), and
 * its secret never comes to the browser. Shows the answer, its usage and its ledger entries.
 */
export function Playground() {
  const { t } = useI18n();
  // Only the keys this session may act through (its own, and keys no wider when it has no budget): the gateway decides.
  const keys = useLoad(() => api.get<ListBody<KeyView>>('/playground/keys'), []);
  const models = useLoad(async () => {
    const [chat, image] = await Promise.all([api.get<ListBody<Model>>('/v1/models?type=chat'), api.get<ListBody<Model>>('/v1/models?type=image')]);
    return { chat: chat.data, image: image.data };
  }, []);
  const [keyId, setKeyId] = useState('');
  const [endpoint, setEndpoint] = useState<Endpoint>('chat');
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const reachable = keys.data?.data ?? [];
  const key = reachable.find((k) => k.id === keyId) ?? reachable[0];
  const usable = (models.data?.[endpoint] ?? []).filter((m) => !key?.allowed_models || key.allowed_models.includes(m.id));
  const chosenModel = usable.find((m) => m.id === model)?.id ?? usable[0]?.id ?? '';

  const send = async (event: FormEvent) => {
    event.preventDefault();
    if (!key || !chosenModel) return;
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      const path = `/playground/${encodeURIComponent(key.id)}${ROUTES[endpoint]}`;
      const body = endpoint === 'chat' ? { model: chosenModel, messages: [{ role: 'user', content: prompt }] } : { model: chosenModel, prompt, response_format: 'b64_json' };
      const answer = await requestWithId<ChatAnswer | ImageAnswer>('POST', path, body);
      const entries = answer.requestId ? (await api.get<ListBody<LedgerEntry>>(`/v1/account/ledger?request_id=${encodeURIComponent(answer.requestId)}`)).data : [];
      const chat = endpoint === 'chat' ? (answer.body as ChatAnswer) : null;
      const image = endpoint === 'image' ? (answer.body as ImageAnswer) : null;
      setOutcome({
        endpoint,
        text: chat ? (chat.choices[0]?.message.content ?? '') : null,
        images: image ? image.data.map((d) => (d.b64_json ? `data:image/png;base64,${d.b64_json}` : (d.url ?? ''))).filter(Boolean) : [],
        usage: answer.body.usage ?? null,
        entries,
        requestId: answer.requestId,
      });
    } catch (err) {
      setError(err instanceof ApiFailure ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err));
      // A 401 here is the chosen key's; whether the session itself still holds is asked apart (a 401 there signs out).
      if (err instanceof ApiFailure && err.status === 401) await api.get('/v1/account').catch(() => undefined);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>{t('Playground')}</h1>
      <p className="muted">{t('Send one request on behalf of a key of this account, within that key’s models, budget, rate and expiry: the signed-in key, or (unless it has a budget) a key no wider than it. Its secret is never shown; the call is charged like any other.')}</p>
      <Section title={t('Request')}>
        <ErrorNote error={keys.error ?? models.error} />
        {!keys.data || !models.data ? (
          <Loading />
        ) : (
          <form className="stack" onSubmit={send} data-testid="playground-form">
            <Field label={t('Key')}>
              <select value={key?.id ?? ''} onChange={(e) => setKeyId(e.target.value)} name="key_id">
                {reachable.map((k) => (
                  <option key={k.id} value={k.id}>
                    {keyLabel(k, t)}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('Kind')}>
              <select value={endpoint} onChange={(e) => setEndpoint(e.target.value === 'image' ? 'image' : 'chat')} name="endpoint">
                <option value="chat">{t('Chat completion')}</option>
                <option value="image">{t('Image generation')}</option>
              </select>
            </Field>
            <Field label={t('Model')}>
              <select value={chosenModel} onChange={(e) => setModel(e.target.value)} name="model">
                {usable.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.id}
                  </option>
                ))}
              </select>
            </Field>
            {usable.length === 0 && <p className="muted">{t('This key may use no model of this kind.')}</p>}
            <Field label={t('Prompt')}>
              <textarea value={prompt} onChange={(e) => setPrompt(e.target.value)} name="prompt" rows={4} required />
            </Field>
            <button type="submit" disabled={busy || !key || !chosenModel || prompt.trim() === ''}>
              {busy ? t('Sending…') : t('Send')}
            </button>
          </form>
        )}
        <ErrorNote error={error} />
      </Section>
      {outcome && <OutcomeView outcome={outcome} keys={keyDirectory(keys.data?.data ?? [])} />}
    </>
  );
}

function OutcomeView({ outcome, keys }: { outcome: Outcome; keys: KeyDirectory }) {
  const { t, locale } = useI18n();
  return (
    <Section title={t('Answer')}>
      <div data-testid="playground-answer">
        {outcome.text !== null && <p className="answer">{outcome.text}</p>}
        {outcome.images.map((src, i) => (
          <img key={src} src={src} alt={t('Generated image {n}', { n: i + 1 })} className="answer-image" />
        ))}
      </div>
      <h3>{t('Usage')}</h3>
      {outcome.usage ? (
        <dl className="facts" data-testid="playground-usage">
          {Object.entries(outcome.usage)
            .filter(([, value]) => typeof value === 'number')
            .map(([name, value]) => (
              <Fragment key={name}>
                <dt>{unitLabel(name, t)}</dt>
                <dd>{countText(value, locale)}</dd>
              </Fragment>
            ))}
        </dl>
      ) : (
        <p className="muted">{t('The answer reports no usage.')}</p>
      )}
      <h3>{t('Ledger entries of this request')}</h3>
      <p className="muted">
        {t('Request')} <code>{outcome.requestId ?? '—'}</code>
      </p>
      <LedgerLines entries={outcome.entries} keys={keys} title={t('Ledger entries of this request')} testId="playground-ledger" />
    </Section>
  );
}
