import { runLoad, type LoadOptions, type LoadTarget } from './chat-load';

/**
 * Child-process entry of the chat load generator (BENCH_CHAT_LOAD=child): receives one
 * `{ target, options }` message, runs the load, sends back `{ result }` or `{ error }` and exits.
 */

interface Job {
  readonly target: LoadTarget;
  readonly options: LoadOptions;
}

if (!process.send) {
  process.stderr.write('chat-load-child: run me with child_process.fork\n');
  process.exit(2);
}

process.once('message', (job: Job) => {
  runLoad(job.target, job.options).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (err: unknown) => process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () => process.exit(1)),
  );
});
