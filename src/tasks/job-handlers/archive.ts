import { request } from 'undici';
import { extensionFor } from '../../files/content-types';
import type { TaskState } from '../decider';
import type { ArchivedArtifact, Artifact } from '../events';
import { causedBy, done, streamOf, type TaskJobDeps, type TaskJobEngine, type TaskJobHandler } from './common';

/** How often an archive download is retried before the task gives up on its archive. */
const MAX_ARCHIVE_ATTEMPTS = 5;

/**
 * Downloads one of the provider's files into the file store, verified whole and not empty; a file
 * the gateway already stored (it received the bytes itself) is archived as it is.
 */
async function archiveOne(files: TaskJobDeps['files'], task: TaskState, artifact: Artifact): Promise<ArchivedArtifact> {
  if ('stored' in artifact) return { name: artifact.name, ...artifact.stored };
  const res = await request(artifact.sourceUrl, { method: 'GET', headersTimeout: 30_000, bodyTimeout: 60_000 });
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`download of ${artifact.name} answered HTTP ${res.statusCode}`);
  }
  const declared = Number(res.headers['content-length'] ?? NaN);
  const contentType = String(res.headers['content-type'] ?? artifact.contentType ?? 'application/octet-stream');
  const stored = await files.put(`tasks/${task.kind}/${task.taskId}/${artifact.name}${extensionFor(contentType)}`, res.body);
  // Verified: the bytes arrived whole (as many as announced) and are not empty.
  if (stored.bytes === 0 || (Number.isFinite(declared) && declared !== stored.bytes)) throw new Error(`download of ${artifact.name} was incomplete`);
  return { name: artifact.name, key: stored.key, bytes: stored.bytes, sha256: stored.sha256, contentType };
}

/**
 * Archives a succeeded task's files. After the last attempt the archive is recorded as failed,
 * and a task that succeeds only with its archive fails.
 */
export function archiveJob(engine: TaskJobEngine, deps: Pick<TaskJobDeps, 'files'>): TaskJobHandler {
  return async (job) => {
    const stream = streamOf(job);
    const task = await engine.load(stream);
    if (task.archived || task.status === 'failed' || task.status === 'cancelled') return done;
    try {
      const archived: ArchivedArtifact[] = [];
      for (const artifact of task.artifacts) archived.push(await archiveOne(deps.files, task, artifact));
      await engine.run(stream, { type: 'RecordArchive', artifacts: archived, now: engine.now() }, causedBy(job));
      return done;
    } catch (err) {
      if (job.attempts < MAX_ARCHIVE_ATTEMPTS) throw err;
      const message = `archiving failed: ${(err as Error).message}`;
      await engine.run(stream, { type: 'RecordArchiveFailure', message, now: engine.now() }, causedBy(job));
      // A task that succeeds only with its archive cannot succeed now.
      if (task.status !== 'succeeded') await engine.run(stream, { type: 'Fail', error: { code: 'archive_failed', message }, now: engine.now() }, causedBy(job));
      return done;
    }
  };
}
