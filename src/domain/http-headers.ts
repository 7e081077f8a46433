/**
 * The header every answer of an Orbit server carries, with its version (src/api/app.ts): the
 * client refuses a 2xx answer without it (src/client/http.ts `requireOrbit`), so another program
 * on the address is not read as Orbit (docs/api.md § Answers).
 */
export const ORBIT_VERSION_HEADER = "orbit-version";
