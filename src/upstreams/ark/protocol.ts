/**
 * Volcengine Ark (火山方舟) data-plane API, `https://ark.cn-beijing.volces.com/api/v3`:
 * https://www.volcengine.com/docs/82379/1298454 (API reference), errors
 * https://www.volcengine.com/docs/82379/1299023. Bearer authentication with an Ark API key.
 * Its error body is OpenAI's shape (`{"error": {"code", "message", "param", "type"}}`), so its
 * error mapping is the OpenAI protocol's reader; Ark's codes (e.g.
 * `InputImageSensitiveContentDetected.PrivacyInformation`) are carried as the error's code.
 */
import { openaiErrorOf } from '../openai/errors';
import type { Protocol } from '../protocol';

export const arkProtocol: Protocol = {
  name: 'ark',
  reference: 'https://www.volcengine.com/docs/82379/1298454',
  serves: ['video', 'image', 'bot'],
  auth: ['bearer'],
  simulatorPrefix: '/ark',
  errorOf: openaiErrorOf,
};
