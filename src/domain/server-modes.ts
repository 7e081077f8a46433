/** The choices of two server settings, read by the CLI's flags and the server's checks alike. */

/** How servers share one database (docs/cluster.md § The two modes); `single` is one server. */
export const CLUSTER_MODES = ["single", "active-standby", "shared"] as const;
export type ClusterMode = (typeof CLUSTER_MODES)[number];

/** SQLite's `synchronous` settings Orbit runs on (docs/storage.md). */
export const SQLITE_SYNCHRONOUS_MODES = ["full", "normal"] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS_MODES)[number];
