import fs from 'node:fs';
import path from 'node:path';
import { arkProvider } from '../../simulator/providers/ark';
import { mountPath } from '../../simulator/providers/provider';

/** The simulated Ark's content-generation tasks on a simulator (`/ark/api/v3/contents/generations/tasks`). */
export const ARK_TASKS_PATH = `${mountPath(arkProvider)}/contents/generations/tasks`;

/** The key the simulated Ark accepts: the `ark` channel's placeholder in the checked-in channels file. */
export function arkPlaceholderKey(): string {
  const entries = JSON.parse(fs.readFileSync(path.join(__dirname, '../../deploy/channels.example.json'), 'utf8')) as { name: string; api_key?: string }[];
  const key = entries.find((e) => e.name === 'ark')?.api_key;
  if (!key) throw new Error('the channels file has no ark channel with an api_key');
  return key;
}
