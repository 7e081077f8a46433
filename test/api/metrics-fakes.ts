/** What the /metrics tests share: a store's scrape reads that answer, and a series' value in a scrape. */

/** Reads that answer: one RUNNING execution, no schedule overdue, no schedules, no tasks waiting. */
export const answering = {
  databaseNow: async () => 1,
  countOverdueSchedules: async () => 0,
  countExecutionsByStatus: async () => ({ RUNNING: 1 }),
  readyTasksByWorkflow: async () => [],
  listScheduleOutcomeFigures: async () => [],
  aggregateScheduleOutcomes: async () => ({
    schedules: 0,
    oldestLastSuccessMs: null,
    maxConsecutiveFailures: 0,
    failures: 0,
  }),
};

/** The value of `series` (its name and labels, as printed) in the scrape `text`, as written; undefined without it. */
export const seriesValue = (text: string, series: string): string | undefined =>
  text
    .split("\n")
    .find((l) => l.startsWith(`${series} `))
    ?.slice(series.length + 1);
