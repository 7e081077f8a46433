/**
 * `orbit backup <file>` and `orbit restore <file>` (docs/operations.md § Back up and restore).
 * SQLite only: they work on the database file directly (`--data-dir`), backup while the server
 * runs, restore while it is stopped. PostgreSQL has its own tools (pg_dump, PITR): the commands say so.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { OrbitError } from "../domain/errors.js";
import { usageError } from "./args.js";
import type { CliIO } from "./io.js";

interface Flags {
  dataDir?: string;
  database?: string;
  force?: boolean;
}

function refusePostgres(flags: Flags, io: CliIO, command: string): void {
  if ((flags.database ?? io.env.ORBIT_DATABASE_URL ?? "") !== "") {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `orbit ${command} works on the SQLite file; for PostgreSQL use pg_dump/pg_restore or point-in-time recovery (docs/operations.md § Back up and restore)`,
    );
  }
}

export function registerBackupCommands(program: Command, io: CliIO): void {
  program
    .command("backup")
    .description("copy the SQLite database to a file, consistently, while the server runs")
    .argument("<file>", "the backup file to write (must not exist)")
    .option("--data-dir <dir>", "folder of orbit.db (default: ./.orbit)")
    .option("--database <url>", "a PostgreSQL URL: refused, with what to use instead")
    .addHelpText(
      "after",
      "\nExample:\n  $ orbit backup backups/orbit-2026-12-02.db\n  backed up .orbit/orbit.db to backups/orbit-2026-12-02.db (55 pages, migration 20)",
    )
    .action(async (file: string, flags: Flags, cmd: Command) => {
      // `orbit backup ''` opened the database before failing on the empty name (a tester).
      if (file.trim() === "") usageError(cmd, "give the backup file to write (the name is empty)");
      refusePostgres(flags, io, "backup");
      const { backupSqlite } = await import("../store/sqlite/backup.js");
      const source = join(flags.dataDir ?? ".orbit", "orbit.db");
      const r = await backupSqlite(source, file).catch((err: unknown) => {
        // The server's folder is its own --data-dir, which this command cannot ask it for: say where to look.
        if (!(err instanceof OrbitError) || err.code !== "NOT_FOUND") throw err;
        throw new OrbitError(
          "NOT_FOUND",
          `${err.message}; --data-dir must be the folder the server was started with (its first line names the file: "orbit server listening on … (sqlite <dir>/orbit.db)")`,
        );
      });
      await io.stdout.write(`backed up ${source} to ${r.file} (${r.pages} pages, migration ${r.migration})\n`);
    });
  program
    .command("restore")
    .description("put a backup in place as the SQLite database (stop the server first)")
    .argument("<file>", "a file written by orbit backup")
    .option("--data-dir <dir>", "folder of orbit.db (default: ./.orbit)")
    .option("--database <url>", "a PostgreSQL URL: refused, with what to use instead")
    .option("--force", "replace an existing orbit.db")
    .addHelpText(
      "after",
      "\nOn its next start the server decides every occurrence that came due since the backup by each\nschedule's catch-up policy, once.",
    )
    .action(async (file: string, flags: Flags, cmd: Command) => {
      if (file.trim() === "") usageError(cmd, "give the backup file to restore (the name is empty)");
      refusePostgres(flags, io, "restore");
      const { restoreSqlite } = await import("../store/sqlite/backup.js");
      const r = restoreSqlite(file, flags.dataDir ?? ".orbit", flags.force === true);
      await io.stdout.write(`restored ${file} to ${r.file} (migration ${r.migration}); start the server\n`);
    });
}
