import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** One line of trajectory.jsonl. `t` is milliseconds since the rollout started. */
export interface TrajectoryEvent {
  type: string;
  [key: string]: unknown;
}

export interface TrajectorySink {
  write(event: TrajectoryEvent): void;
}

/** An event as one line of trajectory.jsonl, `t` counted from `started` (a `performance.now()`). */
const jsonlLine = (started: number, event: TrajectoryEvent) =>
  `${JSON.stringify({ t: Math.round(performance.now() - started), ...event })}\n`;

/**
 * Appends each event to a JSONL file as it happens (a synchronous write on a descriptor held open), so a killed
 * rollout keeps everything up to the kill.
 */
export class JsonlTrajectory implements TrajectorySink {
  private readonly started = performance.now();
  private fd: number | undefined;
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "a");
  }
  write(event: TrajectoryEvent): void {
    if (this.fd === undefined) throw new Error(`trajectory ${this.path} is closed`);
    writeSync(this.fd, jsonlLine(this.started, event));
  }
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** trajectory.jsonl's text built in memory, line for line as JsonlTrajectory writes it (a worker ships it back). */
export class JsonlText implements TrajectorySink {
  private readonly started = performance.now();
  private readonly lines: string[] = [];
  write(event: TrajectoryEvent): void {
    this.lines.push(jsonlLine(this.started, event));
  }
  text(): string {
    return this.lines.join("");
  }
}

/** Keeps events in memory; for tests and for callers that store trajectories elsewhere. */
export class MemoryTrajectory implements TrajectorySink {
  readonly events: TrajectoryEvent[] = [];
  write(event: TrajectoryEvent): void {
    this.events.push(event);
  }
}
