// @ts-check
/**
 * Who is signed in and what they may do. `GET /v1/me` answers the identity's grants (workflow
 * globs and actions); the pages ask `may(action, workflow)` and leave out what would be refused.
 * The server still decides: a 403 is shown as it comes (the server's own sentence).
 */
import { ApiError, getToken, setToken, whoAmI } from "./api.js";
import { h, setText } from "./dom.js";

/** @typedef {{workflows: string[], actions: string[]}} Grant */
/** @typedef {{name: string | null, kind: string, allow: Grant[]}} Identity */

/** @type {Identity | null} */
let identity = null;

/** @param {string} pattern */
function glob(pattern) {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${re}$`);
}

/** What an open server answers for /v1/me: nobody, everything allowed. @type {Identity} */
const OPEN = {
  name: null,
  kind: "client",
  allow: [{ workflows: ["*"], actions: ["schedule", "start", "read", "cancel"] }],
};

/** Whether `identity` is assumed (assumeIdentity), not yet answered by /v1/me. */
let assumed = false;
/** The /v1/me in flight, shared by whoever asks meanwhile. @type {Promise<Identity | null> | null} */
let asking = null;

/** The identity, read once per sign-in; null when the server wants a token we do not have. */
export function loadIdentity() {
  if (identity !== null && !assumed) return Promise.resolve(identity);
  asking ??= (async () => {
    try {
      identity = await whoAmI();
    } catch (err) {
      // A server without /v1/me (older): assume everything; the server still refuses with 403.
      identity = err instanceof ApiError && err.status === 401 ? null : OPEN;
    } finally {
      assumed = false;
      asking = null;
    }
    return identity;
  })();
  return asking;
}

/**
 * The identity to draw a page with before /v1/me answers, or null when the page must wait for it.
 * Without a token the server is open, and answers that everything is allowed, or it wants a token
 * and refuses every request alike (the sign-in page follows): so the page's reads go out beside
 * /v1/me, where they waited for it, one round trip more (on a link of 2 s a request, a schedule's
 * page stood under its title for 9 s, a tester). With a token its grants decide what a page may
 * ask (a schedule's page asks nothing of an identity that may not see schedules), so it waits.
 */
export function assumeIdentity() {
  if (identity !== null) return identity;
  if (getToken() !== null) return null;
  identity = OPEN;
  assumed = true;
  return identity;
}

export function currentIdentity() {
  return identity;
}

/**
 * Whether the signed-in identity may do `action` on `workflow` (the server's rule, docs/api.md).
 * @param {"schedule" | "start" | "read" | "cancel"} action
 * @param {string} workflow
 */
export function may(action, workflow) {
  if (identity === null) return false;
  if (identity.kind !== "client" && action !== "read") return false;
  return identity.allow.some((g) => g.actions.includes(action) && g.workflows.some((w) => glob(w).test(workflow)));
}

/**
 * Why the identity sees no schedule at all, or null when it may see some. The server lists and
 * reads only the schedules of workflows the caller may `schedule`; without that grant anywhere a
 * schedule's page would only answer NOT_FOUND, so the pages say this instead and ask nothing.
 */
export function schedulesHiddenText() {
  if (identity === null || identity.allow.some((g) => g.actions.includes("schedule"))) return null;
  const actions = [...new Set(identity.allow.flatMap((g) => g.actions))].join(", ") || "do nothing";
  return `Identity ${identity.name ?? ""} may not see schedules: listing them needs the schedule permission on a workflow (it may ${actions}).`;
}

export function signOut() {
  setToken(null);
  identity = null;
  assumed = false;
}

/**
 * Why a worker identity may not sign in. The server answers /v1/me to any identity, so a worker's
 * token was kept: the top bar read "signed in as pool" and every page a 403 "identity pool is a
 * worker…" (a tester).
 * @param {string | null} name
 */
export function workerRefusal(name) {
  return `${name ?? "This identity"} is a worker identity: its token is for workers (the worker protocol) and cannot sign in to this UI. Sign in with the token of a client identity.`;
}

/** @typedef {{lead: string, server: string | null}} SignInReason what the sign-in page leads with; the server's own words, when kept aside */

/**
 * What the sign-in page says for the server's 401. Without a token the server's sentence is for
 * the CLI ("send Authorization: Bearer <token> (orbit --token or ORBIT_TOKEN)"), which a browser
 * user cannot act on: the page leads with what to do here, the server's words folded under it.
 * A token refused (unknown, revoked) is said with the server's reason.
 * @param {string} message the server's 401 message, "" when none was read
 * @returns {SignInReason}
 */
export function unauthenticatedReason(message) {
  if (message === "" || /requires a bearer token/.test(message)) {
    return {
      lead: "This server has access control: paste your access token below to sign in.",
      server: message === "" ? null : message,
    };
  }
  return {
    lead: `The server refused the token this tab kept (${message}): sign in again with a current token.`,
    server: null,
  };
}

/**
 * Where to go after signing in: the page that asked for it (a route of this UI, never the
 * sign-in page itself), else the schedules list.
 * @param {string | null | undefined} next
 */
function returnHash(next) {
  return next?.startsWith("/") && !next.startsWith("/signin") ? `#${next}` : "#/";
}

/**
 * The sign-in page: a token field; the token is checked with /v1/me before it is kept.
 * @param {SignInReason | null} [reason] why the page is shown
 * @param {string | null} [next] the route that needed the sign-in, shown again after it
 */
export function signInView(reason, next) {
  const error = h("p", { id: "signin-error", class: "form-error", role: "alert" });
  const input = h("input", {
    id: "signin-token",
    type: "password",
    autocomplete: "current-password",
    required: true,
    "aria-describedby": "signin-hint",
  });
  const form = h(
    "form",
    { class: "signin card", "aria-labelledby": "signin-heading" },
    h("h1", { id: "signin-heading", text: "Sign in" }),
    reason ? h("p", { id: "signin-reason", class: "muted", text: reason.lead }) : null,
    reason?.server
      ? h(
          "details",
          { class: "signin-server small" },
          h("summary", { text: "What the server answered" }),
          h("p", { class: "muted", text: `UNAUTHENTICATED: ${reason.server}` }),
        )
      : null,
    h("label", { for: "signin-token", text: "Access token" }),
    input,
    h("small", {
      id: "signin-hint",
      class: "muted",
      text: "The bearer token of a client identity in the server's --config file (a worker identity's token cannot sign in). It is kept in this tab only (sessionStorage).",
    }),
    error,
    h("div", { class: "form-buttons" }, h("button", { type: "submit", class: "button primary", text: "Sign in" })),
  );
  const el = h("div", { class: "signin-page" }, form);
  /** An open server takes any token and names nobody: say so instead of asking for one. */
  const showOpen = () => {
    setToken(null);
    // The top bar offered to sign out of the token just dropped.
    document.getElementById("identity")?.replaceChildren();
    el.replaceChildren(
      h(
        "section",
        { class: "signin card", "aria-labelledby": "signin-heading" },
        h("h1", { id: "signin-heading", text: "No sign-in needed" }),
        h("p", {
          id: "signin-open",
          text: "This server has no access control: it needs no token, and everyone may do everything.",
        }),
        h("p", {}, h("a", { href: returnHash(next), text: "Continue" })),
      ),
    );
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    setToken(/** @type {HTMLInputElement} */ (input).value.trim());
    identity = null;
    assumed = false;
    try {
      const me = await whoAmI();
      if (me.name === null) return showOpen();
      if (me.kind === "worker") {
        setToken(null);
        setText(error, workerRefusal(me.name));
        return;
      }
      identity = me;
      location.hash = returnHash(next);
    } catch (err) {
      setToken(null);
      setText(error, String(err));
    }
  });
  // A server with access control answers 401 or names the token's identity (the form stays); an
  // open one names nobody, whatever the token. An open server took any token here, and the top bar
  // then read "signed in as ?". Asked once, not at every refresh (each 401 is a console line).
  let asked = false;
  const refresh = async () => {
    // A 401 brought us here (its reason is shown): that server does ask for a token.
    if (reason || asked) return;
    asked = true;
    const me = await whoAmI().catch(() => null);
    if (me !== null && me.name === null) showOpen();
  };
  return { el, refresh, title: "Sign in" };
}
