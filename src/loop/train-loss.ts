// The training contracts, after harness-training: the harness parameter, a Loss whose backward() records the
// verdict, and GreedyMonotonic, whose step() applies it. Misuse (forgetting a call, calling one twice, a stale
// verdict) throws.
import { HoneError } from "../errors.ts";
import type { Measurement, Verdict } from "../method/criteria.ts";
import type { Trainer } from "./train.ts";

/** The harness parameter: `data` is the incumbent commit (HEAD), `grad` the verdict waiting for step(). */
export interface HarnessParameter {
  data: string;
  grad: Loss | undefined;
}

export class TrainingMisuse extends HoneError {
  constructor(message: string) {
    super("usage", message);
  }
}

/** One epoch's result. backward() records the verdict on the harness parameter; nothing else. */
export class Loss {
  backwardCalled = false;
  stepped = false;
  constructor(
    readonly trainer: Trainer,
    readonly epoch: number,
    readonly candidate: string,
    readonly baseline: Measurement,
    readonly measured: Measurement,
    readonly verdict: Verdict,
  ) {}
  get value(): number {
    return this.verdict.loss;
  }
  backward(): void {
    if (this.backwardCalled) throw new TrainingMisuse(`loss.backward() was called twice in epoch ${this.epoch}`);
    if (this.trainer.current !== this)
      throw new TrainingMisuse(
        `loss.backward() on a stale loss (epoch ${this.epoch}; the trainer is at epoch ${this.trainer.current?.epoch ?? "-"})`,
      );
    this.backwardCalled = true;
    this.trainer.harness.grad = this;
  }
  /** Valid once step() ran. */
  get promoted(): boolean {
    if (!this.stepped) throw new TrainingMisuse("loss.promoted is known only after optimizer.step()");
    return this.trainer.harness.data === this.candidate;
  }
}

/** Applies a verdict: fast-forward to the candidate when it promotes, otherwise stay. Nothing else. */
export class GreedyMonotonic {
  private trainer: Trainer | undefined;
  bind(trainer: Trainer): void {
    this.trainer = trainer;
  }
  step(): void {
    const t = this.trainer;
    if (!t) throw new TrainingMisuse("the optimizer is not bound to a trainer; pass it to new Trainer({ optimizer })");
    const grad = t.harness.grad;
    if (!grad) throw new TrainingMisuse("optimizer.step() without loss.backward(): there is no verdict to apply");
    if (grad.stepped) throw new TrainingMisuse(`optimizer.step() was called twice in epoch ${grad.epoch}`);
    if (grad !== t.current) throw new TrainingMisuse("optimizer.step() with a stale verdict");
    if (grad.verdict.decision === "promote" && grad.verdict.loss < 0) {
      if (!t.repo.fastForwardMain(grad.candidate, t.harness.data))
        throw new Error(`main cannot fast-forward to ${grad.candidate}`);
      t.harness.data = grad.candidate;
    }
    grad.stepped = true;
    t.harness.grad = undefined;
  }
}
