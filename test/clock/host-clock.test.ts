/**
 * A single server's time (src/clock/host-clock.ts): its host's wall clock read through the
 * monotonic one, following a slow drift, and moving by a step only once what the database holds
 * in wall time has moved with it.
 */
import { expect, it } from "vitest";
import { HostClock, STEP_MS } from "../../src/clock/host-clock.js";

it("moves by a step only after its move is done, follows a drift at once, and tries a failed move again", async () => {
  let wall = Date.UTC(2026, 11, 6, 17, 0, 0);
  let steady = 1000.25;
  const clock = new HostClock(
    () => wall,
    () => steady,
  );
  const moves: number[] = [];
  const stepped: number[] = [];
  let seen = Number.NaN;
  let fail = false;
  const onStep = async (ms: number) => {
    seen = clock.now(); // during the move, the time is still the old one
    if (fail) throw new Error("database away");
    moves.push(ms);
  };
  const look = () => clock.look(onStep, (ms) => stepped.push(ms));
  const start = clock.now();
  // A second passes on both clocks, then a drift under the threshold: followed, no step.
  steady += 1000;
  wall += 1000 + STEP_MS - 1;
  await look();
  expect(clock.now()).toBe(start + 1000 + STEP_MS - 1);
  expect(moves).toEqual([]);
  // An hour forward: the move sees the old time; the time moves once it is done.
  wall += 3_600_000;
  await look();
  expect(seen).toBe(start + 1000 + STEP_MS - 1);
  expect(moves).toEqual([3_600_000]);
  expect(stepped).toEqual([3_600_000]);
  expect(clock.now()).toBe(wall);
  // Back an hour with the database away: the time stays until a move works.
  wall -= 3_600_000;
  fail = true;
  await look();
  expect(clock.now()).toBe(wall + 3_600_000);
  fail = false;
  await look();
  expect(moves).toEqual([3_600_000, -3_600_000]);
  expect(clock.now()).toBe(wall);
});
