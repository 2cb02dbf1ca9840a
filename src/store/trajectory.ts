import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** One line of trajectory.jsonl. `t` is milliseconds since the rollout started. */
export interface TrajectoryEvent {
  type: string;
  [key: string]: unknown;
}

export interface TrajectorySink {
  write(event: TrajectoryEvent): void;
}

/** Appends each event to a JSONL file as it happens, so a killed rollout keeps everything up to the kill. */
export class JsonlTrajectory implements TrajectorySink {
  private readonly started = performance.now();
  constructor(private readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }
  write(event: TrajectoryEvent): void {
    appendFileSync(this.path, `${JSON.stringify({ t: Math.round(performance.now() - this.started), ...event })}\n`);
  }
}

/** Keeps events in memory; for tests and for callers that store trajectories elsewhere. */
export class MemoryTrajectory implements TrajectorySink {
  readonly events: TrajectoryEvent[] = [];
  write(event: TrajectoryEvent): void {
    this.events.push(event);
  }
}
