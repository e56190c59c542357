import { ACCOUNT_DOCS } from './operations/account';
import { ADMIN_DOCS } from './operations/admin';
import { AGENT_DOCS } from './operations/agents';
import { ASSET_GROUP_DOCS } from './operations/asset-groups';
import { CHANNEL_DOCS } from './operations/channels';
import { CHAT_DOCS } from './operations/chat';
import { DASHBOARD_DOCS } from './operations/dashboard';
import { FILE_DOCS } from './operations/files';
import { MEDIA_TASK_DOCS } from './operations/media-tasks';
import { MINUTES_DOCS } from './operations/minutes';
import { OPERATOR_VIEW_DOCS } from './operations/operator-views';
import { SERVICE_DOCS } from './operations/service';
import { TASK_DOCS } from './operations/tasks';
import { WEBHOOK_DOCS } from './operations/webhooks';
import { VIDEO_DOCS } from './operations/video';
import type { OperationDocs, RouteKey } from './types';

/**
 * Every documented route, keyed by `METHOD /path/:pattern` exactly as its router registers it.
 * One module per area; test/integration/openapi.test.ts fails when a served route is missing
 * here or a key here is not served. See docs/api.md.
 */
export const ROUTE_DOCS: OperationDocs = {
  ...SERVICE_DOCS,
  ...ADMIN_DOCS,
  ...CHANNEL_DOCS,
  ...ACCOUNT_DOCS,
  ...CHAT_DOCS,
  ...AGENT_DOCS,
  ...VIDEO_DOCS,
  ...MEDIA_TASK_DOCS,
  ...MINUTES_DOCS,
  ...FILE_DOCS,
  ...ASSET_GROUP_DOCS,
  ...TASK_DOCS,
  ...WEBHOOK_DOCS,
  ...OPERATOR_VIEW_DOCS,
  ...DASHBOARD_DOCS,
};

/**
 * Whether the route reads a request body: documented with a JSON or multipart one (the document
 * publishes the handlers' own body schemas). The route guard refuses a body on a route documented
 * without one; an undocumented route (openapi.test.ts fails for it) is left to read what it will.
 */
export function documentedWithBody(method: string, path: string): boolean {
  const doc = ROUTE_DOCS[`${method} ${path}` as RouteKey];
  return doc === undefined || doc.body !== undefined || doc.multipart !== undefined;
}
