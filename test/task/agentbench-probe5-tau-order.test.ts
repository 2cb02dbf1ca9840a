import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openTauWorld } from "../../src/task/qa/tau/tau-env.ts";
import { ROOT } from "../helpers/fixtures.ts";

const DIR = join(ROOT, "test", "fixtures", "datasets", "tau-bench-airline");

// τ-bench's book_reservation takes len(passengers) only at the seat comparison, after a flight's own checks: an
// agent's passenger list of the wrong type must meet the flight's error first, as there (observed with τ-bench's
// tools at 59a200c on this fixture's database).
describe("τ-bench airline: the order of checks with a hostile passenger list", () => {
  it.each([
    [null, "Error: flight HAT009 not available on date 2024-05-01"],
    [Number.NaN, "Error: flight HAT009 not available on date 2024-05-01"],
  ])("book_reservation with passengers %s reports the flight's status", async (passengers, observation) => {
    const world = await openTauWorld({ dir: DIR, domain: "airline", file: "tasks_test.py", index: 0 });
    try {
      const args = {
        user_id: "mia_li_3668",
        origin: "JFK",
        destination: "LAX",
        flight_type: "one_way",
        cabin: "economy",
        flights: [{ flight_number: "HAT009", date: "2024-05-01" }],
        passengers,
        payment_methods: [],
        total_baggages: 0,
        nonfree_baggages: 0,
        insurance: "no",
      };
      const raw = JSON.stringify(args).replace("null", passengers === null ? "null" : "NaN");
      const r = await world.call("book_reservation", raw);
      expect(r.observation).toBe(observation);
    } finally {
      world.close();
    }
  });
});
