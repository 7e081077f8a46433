// @ts-check
/**
 * Cursor paging kept in the URL and the tab's history, shared by the schedules and executions
 * lists. The page is in the hash (`page=3&cursor=…`), so a reload or a link opens it; the cursors
 * of the pages before it are kept in the history entry's state, so Previous still steps back one
 * page after a reload (from a link, where they are not known, it goes to the first page); each page
 * is a history entry of its own, so the browser's Back steps back one page. The schedules list
 * did this; the executions list kept its page in memory only (a reload went to page 1, Back left
 * the list, and it had no Previous), as a tester found.
 */
import { ApiError } from "./api.js";
import { sayLinkNotes } from "./link-params.js";

/** The history state's key for the cursors of the pages before the one shown. */
const KEPT = "pageCursors";

/**
 * @param {URLSearchParams} params the hash's query the list was opened with
 */
export function cursorPager(params) {
  // An empty cursor is none (the server reads it so): page 1's rows were labelled as page 2's.
  /** @type {string | null} */
  let cursor = params.get("cursor") || null;
  /** 0 for the first page. */
  let index = cursor === null ? 0 : Math.max(1, Math.trunc(Number(params.get("page") ?? 1)) || 1) - 1;
  const kept = history.state?.[KEPT];
  /** @type {(string | null)[] | null} the cursors of the pages before this one, null when not known */
  let stack =
    index === 0 ? [] : Array.isArray(kept) && kept.length === index ? /** @type {(string | null)[]} */ (kept) : null;
  const first = () => {
    stack = [];
    cursor = null;
    index = 0;
  };
  return {
    /** This page's cursor, null for the first page. */
    get cursor() {
      return cursor;
    },
    /** This page's number less one. */
    get index() {
      return index;
    },
    /** Back to the first page: a filter or the sort changed. */
    first,
    /** On to the page after this one. @param {string} nextCursor */
    next(nextCursor) {
      stack?.push(cursor);
      cursor = nextCursor;
      index++;
    },
    /** Back one page; to the first when the pages before are not known (opened from a link). */
    prev() {
      if (index === 0) return;
      if (stack === null || stack.length === 0) first();
      else {
        cursor = stack.pop() ?? null;
        index--;
      }
    },
    /** Keeps a page number edited by hand (`page=9` on a list of 134) within the list. @param {number} last */
    clamp(last) {
      index = Math.min(index, Math.max(0, last));
    },
    /**
     * Writes the filters and the page into the hash: a new history entry for a page (so that the
     * browser's Back steps back one page), the same entry for a filter (none per keystroke).
     * @param {string} path the list's hash path, `#/` or `#/executions`
     * @param {URLSearchParams} q the filters
     * @param {boolean} [newEntry]
     */
    write(path, q, newEntry = false) {
      if (index > 0 && cursor !== null) {
        q.set("page", String(index + 1));
        q.set("cursor", cursor);
      }
      const text = q.toString();
      const url = `${path}${text ? `?${text}` : ""}`;
      if (newEntry) history.pushState({ [KEPT]: stack }, "", url);
      else history.replaceState({ [KEPT]: stack }, "", url);
    },
    /**
     * Makes `next` and `prev` step one page: each writes its page into the hash as a new history
     * entry (`writeHash(true)`) and reloads; Next then scrolls `table` into view.
     * @param {{ next: HTMLElement, prev: HTMLElement, table: () => HTMLElement, nextCursor: () => string | null | undefined, writeHash: (newEntry: boolean) => void, reload: () => Promise<unknown> }} o
     */
    buttons(o) {
      o.next.addEventListener("click", () => {
        const after = o.nextCursor();
        if (!after) return;
        this.next(after);
        o.writeHash(true);
        void o.reload().then(() => o.table().scrollIntoView({ block: "start" }));
      });
      o.prev.addEventListener("click", () => {
        if (index === 0) return;
        this.prev();
        o.writeHash(true);
        void o.reload();
      });
    },
    /**
     * Reads this page. A cursor the server does not know (a link edited by hand or from another
     * sort) reads the first page instead, rather than an error above an empty list until a filter
     * changed; not for a read since superseded, whose cursor may no longer be this page's.
     * @template T
     * @param {() => Promise<T>} read
     * @param {() => boolean} current whether this read is still the latest
     * @param {() => void} rewrite writes the hash once the list is back on its first page
     * @returns {Promise<T>}
     */
    async read(read, current, rewrite) {
      try {
        return await read();
      } catch (err) {
        if (!current() || cursor === null || !(err instanceof ApiError) || err.code !== "INVALID_ARGUMENT") throw err;
        // Said as a link's other values not understood are (ui/link-params.js).
        sayLinkNotes([
          `left out page=${index + 1} and its cursor (the server refused the cursor: the first page is shown)`,
        ]);
        first();
        rewrite();
        return read();
      }
    },
  };
}
