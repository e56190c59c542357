import { IMAGES_GENERATED, type ImagesGenerated } from '../src/media-tasks/images/events';
import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { taskIdOfStream, type ArchivedArtifact, type TaskEvent } from '../src/tasks/events';

/** Streams of async image tasks (`image-<taskId>`); sync generations live on `imagegen-…`. */
const IMAGE_TASK_STREAM = 'image-';

/**
 * The account gallery: every image the account generated, synchronously (`ImagesGenerated`) or by
 * an async image task that succeeded. A task's images enter when it succeeds, which is after they
 * were archived (image tasks succeed with their archive); until then the task waits in
 * `gallery_pending_tasks` with what the gallery will need of it.
 */
export const galleryProjection: Projection = defineProjection<ImagesGenerated | TaskEvent>()({
  name: 'gallery',
  tables: ['gallery_images', 'gallery_pending_tasks'],
  ddl: `
    CREATE TABLE gallery_images (
      image_id text PRIMARY KEY,
      account_id text NOT NULL,
      task_id text,
      model text NOT NULL,
      prompt text NOT NULL,
      size text NOT NULL,
      file_key text NOT NULL,
      content_type text NOT NULL,
      bytes bigint NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX gallery_images_newest ON gallery_images (account_id, created_at DESC, image_id DESC);
    CREATE TABLE gallery_pending_tasks (
      task_id text PRIMARY KEY,
      account_id text NOT NULL,
      model text NOT NULL,
      prompt text NOT NULL,
      size text NOT NULL,
      archived jsonb
    );`,
  handles: [IMAGES_GENERATED, 'TaskSubmitted', 'TaskArtifactsArchived', 'TaskSucceeded', 'TaskFailed', 'TaskCancelled'],
  async apply(tx, event) {
    if (event.type === IMAGES_GENERATED) {
      const { data } = event;
      for (const image of data.images) {
        await tx.query(
          `INSERT INTO gallery_images (image_id, account_id, task_id, model, prompt, size, file_key, content_type, bytes, created_at)
           VALUES ($1, $2, NULL, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (image_id) DO NOTHING`,
          [image.id, data.accountId, data.model, data.prompt, data.size, image.key, image.contentType, image.bytes, data.at],
        );
      }
      return;
    }
    if (!event.streamId.startsWith(IMAGE_TASK_STREAM)) return;
    const taskId = taskIdOfStream(event.streamId);
    switch (event.type) {
      case 'TaskSubmitted': {
        const d = event.data;
        const request = d.request as { prompt?: string; size?: string };
        await tx.query(
          `INSERT INTO gallery_pending_tasks (task_id, account_id, model, prompt, size) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id) DO NOTHING`,
          [taskId, d.accountId, d.model, request.prompt ?? '', request.size ?? ''],
        );
        return;
      }
      case 'TaskArtifactsArchived':
        await tx.query('UPDATE gallery_pending_tasks SET archived = $2 WHERE task_id = $1', [taskId, JSON.stringify(event.data.artifacts)]);
        return;
      case 'TaskSucceeded': {
        const { rows } = await tx.query<{ account_id: string; model: string; prompt: string; size: string; archived: ArchivedArtifact[] | null }>(
          'DELETE FROM gallery_pending_tasks WHERE task_id = $1 RETURNING account_id, model, prompt, size, archived',
          [taskId],
        );
        const task = rows[0];
        if (!task) return;
        const images = (task.archived ?? []).filter((a) => /^image_\d+$/.test(a.name));
        for (const image of images) {
          const index = image.name.slice('image_'.length);
          await tx.query(
            `INSERT INTO gallery_images (image_id, account_id, task_id, model, prompt, size, file_key, content_type, bytes, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (image_id) DO NOTHING`,
            [`img_${taskId.slice(taskId.indexOf('_') + 1)}_${index}`, task.account_id, taskId, task.model, task.prompt, task.size, image.key, image.contentType, image.bytes, event.data.at],
          );
        }
        return;
      }
      case 'TaskFailed':
      case 'TaskCancelled':
        await tx.query('DELETE FROM gallery_pending_tasks WHERE task_id = $1', [taskId]);
        return;
      default:
        return;
    }
  },
});
