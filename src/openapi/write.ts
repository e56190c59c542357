import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from './document';

/** `npm run openapi:write`: docs/openapi.json, the serialization GET /openapi.json serves, formatted. */
export function serializeOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

export const CHECKED_IN_PATH = path.join(__dirname, '..', '..', 'docs', 'openapi.json');

if (require.main === module) {
  writeFileSync(CHECKED_IN_PATH, serializeOpenApiDocument());
  console.log(`wrote ${CHECKED_IN_PATH}`);
}
