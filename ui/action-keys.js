// @ts-check
/**
 * The Idempotency-Key of an action whose outcome the page does not know. api.js stops waiting for
 * a write after 10 s without aborting it, and the button is pressable again; a Trigger pressed then
 * sent a new key, and under `overlap: allow` the server started a second run (a tester, through a
 * proxy adding 12 s to every request). The key of an action is now kept until an answer says that
 * it was done, and every press of the same action with the same body meanwhile sends it again, so
 * the server answers them all with the one run (docs/api.md: a repeat with the same key and body
 * returns the first answer; one still in progress waits for it). Once an answer comes, in time or
 * late, the outcome is known and the next press is a new action with a new key.
 *
 * A refusal (4xx) keeps the key too: the server stores no key for a refused write, so sending it
 * again is a new attempt all the same, and a 409 "in use by a request still in progress" or a 5xx
 * says nothing of whether the first was done.
 */
import { ApiError, actionKey } from "./api.js";
import { iso } from "./dom.js";
import { errorText, say } from "./status.js";

/** The key of each action (its name and body) whose outcome the page does not know. @type {Map<string, string>} */
const unsettled = new Map();

/**
 * Sends one keyed action: with the key of its last attempt while that one's outcome is unknown,
 * with a new key otherwise. An answer that comes after the page stopped waiting (TIMEOUT) is said
 * in the status line when it comes: "may or may not have been applied" stood until the next action.
 * @template T
 * @param {string} what the action, as the status line names it ("trigger nightly")
 * @param {string} body what it sends, as text: one key goes with one body (another is a 422)
 * @param {(key: string) => Promise<T>} send
 * @param {(answer: T) => readonly [string, "ok" | "warn"]} text what the answer did, as said
 * @returns {Promise<T>}
 */
export async function keyed(what, body, send, text) {
  const name = `${what} ${body}`;
  const key = unsettled.get(name) ?? actionKey();
  unsettled.set(name, key);
  const settled = () => {
    if (unsettled.get(name) === key) unsettled.delete(name);
  };
  try {
    const answer = await send(key);
    settled();
    return answer;
  } catch (err) {
    if (err instanceof ApiError && err.late !== undefined) {
      err.late.then(
        (answer) => {
          settled();
          const [said, tone] = text(answer);
          say(`${what}, answered late: ${said}`, tone);
        },
        (late) => {
          // Only the server's refusal tells the outcome; a dropped connection does not.
          if (late instanceof ApiError && late.status !== 0)
            say(`could not ${what} (answered late): ${iso(errorText(late))}`, "error");
        },
      );
    }
    throw err;
  }
}
