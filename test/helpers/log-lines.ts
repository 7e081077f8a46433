/** A pino-shaped logger (`log.warn(fields, msg)`) that keeps its lines, for tests of what is logged. */

export type LogLine = { level: string; msg: string; fields: Record<string, unknown> };

export function logLines(): {
  lines: LogLine[];
  log: Record<"error" | "warn" | "info", (o: object, m: string) => void>;
} {
  const lines: LogLine[] = [];
  const at = (level: string) => (fields: object, msg: string) =>
    void lines.push({ level, msg, fields: fields as Record<string, unknown> });
  return { lines, log: { error: at("error"), warn: at("warn"), info: at("info") } };
}
