import { RISK_REQUEST_SCHEMA } from '../../agents/risk/schemas';
import { WEBQA_REQUEST_SCHEMA } from '../../agents/webqa/schemas';
import type { OperationDoc, OperationDocs } from '../types';
import { GUARD_ERRORS } from './common';

/** The spec's list for web Q&A; the risk endpoint answers the same (src/agents/feature.ts). */
const AGENT_ERRORS = [400, 401, 402, 502];

const risk: OperationDoc = {
  tag: 'agents',
  summary: 'Risk screening of a company',
  description: 'Only the last 10 messages are used; `identify: true` only checks identity, with at most one search.',
  body: { name: 'RiskRequest', schema: RISK_REQUEST_SCHEMA, example: { messages: [{ role: 'user', content: 'Screen Acme Trading Co., Ltd.' }] } },
  responses: [{ status: 200, description: 'The risk screening result.', schema: 'RiskResult' }],
  stream: 'With `stream: true`: progress and result events.',
  errors: AGENT_ERRORS,
  errorShape: 'risk',
};

const webQa: OperationDoc = {
  tag: 'agents',
  summary: 'Web Q&A with an upstream agent bot',
  body: { name: 'WebQaRequest', schema: WEBQA_REQUEST_SCHEMA, example: { bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'What is new in Node 20?' }] } },
  responses: [{ status: 200, description: 'A chat completion.', schema: 'ChatCompletion' }],
  stream: 'With `stream: true`: `chat.completion.chunk` events, then `data: [DONE]`.',
  errors: AGENT_ERRORS,
};

/** Risk screening and web Q&A, with the spec's aliases. */
export const AGENT_DOCS: OperationDocs = {
  'POST /v1/agent/risk/chat/completions': risk,
  'POST /v1/agent/risk/chat/completion': { ...risk, summary: `${risk.summary} (alias)` },
  'GET /v1/agent/risk/reports/:id': {
    tag: 'agents',
    summary: 'A stored risk report',
    pathParams: { id: 'The report id.' },
    responses: [{ status: 200, description: 'The report.', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS, 404],
    errorShape: 'risk',
  },
  'POST /v1/agent/chat/completions': webQa,
  'POST /v1/agent/chat/completion': { ...webQa, summary: `${webQa.summary} (alias)` },
  'POST /v1/agents/chat/completions': { ...webQa, summary: `${webQa.summary} (alias)` },
};
