/** The CLI's exit codes (docs/cli.md) and the usage error commands raise for bad flags. */

/** The command did what was asked. */
export const EXIT_OK = 0;
/** The request was refused (an Orbit error, such as INVALID_SCHEDULE); the message is on stderr. */
export const EXIT_REFUSED = 1;
/**
 * Bad usage, found before any request: unknown command or option, a missing or malformed flag, or a
 * value a command that sends nothing refuses (`schedule preview`'s cron); the message is on stderr.
 */
export const EXIT_USAGE = 2;

/** A command that printed its own report and ends with `code` (`orbit doctor`: 1 when a check failed). */
export class ExitWith extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}
