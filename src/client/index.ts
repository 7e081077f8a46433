/** The typed HTTP client of Orbit's API (docs/api.md), shared by the CLI and the worker SDK. */
export {
  type Created,
  type ListExecutionsQuery,
  type ListSchedulesQuery,
  OrbitClient,
  type OrbitClientOptions,
  type PageQuery,
} from "./client.js";
export { type KeyedWriteOptions, ServerUnreachableError, type WriteOptions } from "./http.js";
export type * from "./types.js";
