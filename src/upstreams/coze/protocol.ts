/**
 * Coze (扣子) OpenAPI, `https://api.coze.cn` (coze.com: `https://api.coze.com`), Bearer with a
 * personal or service access token. Reference: https://www.coze.cn/open/docs/developer_guides/chat_v3
 * (English: https://www.coze.com/open/docs/developer_guides/chat_v3); error codes
 * https://www.coze.cn/open/docs/developer_guides/coze_error_codes. Official Node SDK: `@coze/api`.
 */
import type { Protocol } from '../protocol';
import { cozeErrorOf } from './errors';

export const cozeProtocol: Protocol = {
  name: 'coze',
  reference: 'https://www.coze.cn/open/docs/developer_guides/chat_v3',
  serves: ['bot'],
  auth: ['bearer'],
  simulatorPrefix: '/coze',
  errorOf: cozeErrorOf,
};
