/**
 * MiniMax's API (https://api.minimax.cn in mainland China, https://api.minimax.io elsewhere): the
 * video generation v2 of the MiniMax-H3 model, https://platform.minimax.cn/docs/api-reference/video-generation
 * (video.ts). Bearer authentication. Its errors are read in one place (errors.ts): v2's HTTP error
 * bodies, and the platform's `base_resp` codes, which MiniMax also sends with HTTP 200.
 */
import type { Protocol } from '../protocol';
import { minimaxErrorOf } from './errors';

export const minimaxProtocol: Protocol = {
  name: 'minimax',
  reference: 'https://platform.minimax.cn/docs/api-reference/video-generation',
  serves: ['video'],
  auth: ['bearer'],
  simulatorPrefix: '/minimax',
  errorOf: minimaxErrorOf,
};
