/**
 * The regular expressions of workflow input schemas (`pattern`, `patternProperties`), run so that
 * no input can hold the process (docs/security.md § Input schemas). A backtracking engine takes
 * exponential time on `^(a+)+$` against `aaaa…!`: one start with a 30-character input held a
 * server for 30 s, every request and the firing loop with it, and any identity allowed to register
 * a workflow could send one.
 *
 * Each pattern is read for its shape ({@link patternShape}) and runs on the engine that shape allows:
 * - The usual (backtracking) engine when its work grows at most linearly with the string: no
 *   repeated part that repeats or has alternatives inside, and at most one unbounded repetition
 *   when anchored with `^` (none when not). It is the fast one (`^[a-z0-9]{1,64}$`, `^\p{L}+$`).
 * - RE2 (re2-pattern.ts) for any other it can run, with the Unicode semantics JSON Schema gives
 *   patterns: nested and overlapping repetition stays linear, charged by the size of its program.
 * - The usual engine for one RE2 does not run (backreferences, lookaround, a count past
 *   1,000, Unicode properties other than categories and scripts) when nothing repeated repeats or
 *   has alternatives; its work is then a polynomial of the string's length, charged as such.
 * - Any other is refused when the schema is registered, naming the pattern.
 *
 * And every test is charged against one check's budget ({@link withPatternBudget}): without it,
 * 2,000 `patternProperties` tried on each of 30,000 keys held a server for 23 s, and a 1 MB string
 * under `^.*x.*y$` 1.5 s per pattern.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { OrbitError } from "./errors.js";
import { MAX_JSON_BYTES } from "./json-limits.js";
import { re2Pattern } from "./re2-pattern.js";

/** The budget's unit: 500 steps of the backtracking engine a character of the largest input. */
const BUDGET_STEPS_PER_CHAR = 500;
/**
 * What one check of an input may spend on its schema's patterns, in steps of the backtracking
 * engine: one pattern on the linear-time engine over every character the largest input holds (1 MB),
 * at most about a second of the server's thread here.
 */
export const PATTERN_BUDGET = BUDGET_STEPS_PER_CHAR * MAX_JSON_BYTES;
/**
 * The longest pattern: V8 took 9.3 s to parse one of 130,000 `\\p{L}` when it was registered, and
 * one of 50,000 `.` overflowed its parser's stack at each start (a 500).
 */
const MAX_PATTERN_LENGTH = 10_000;
/**
 * A pattern longer than this many characters is charged as that many patterns (per character
 * tested): with 16, `"."×5000 + "c"` was charged 0.3 billion steps over 1 MB and took 1.9 s.
 */
const PATTERN_CHARS_PER_STEP = 5;
/** What a step through a `\p{…}` class costs, in steps of the usual engine (measured about 25 ns against 2–3). */
const UNICODE_CLASS_STEPS = 10;
/**
 * What a character costs RE2 per instruction of its program, in steps of the backtracking engine
 * (each live instruction steps once a character: 70–85 ns measured, charged as 100).
 */
const RE2_STEPS_PER_INSTRUCTION = 50;
/** What a test costs whatever its string: the schema's check calling it (about 0.15 µs here). */
const STEPS_PER_TEST = 100;
/** A pattern must be able to test a string this long within the budget, or it is refused. */
const SHORTEST_USEFUL = 64;

/** The shape of a pattern that decides how long a backtracking engine may take on it. */
export interface PatternShape {
  /** A repeated part contains a repetition (`(a+)+`): exponential. */
  nested: boolean;
  /** A part repeated more than once has alternatives (`(a|ab)*`): exponential. */
  repeatedAlternation: boolean;
  /** `^` first and no alternative at the top: only the start of the string is tried. */
  anchored: boolean;
  /** Repetitions without an upper bound (`*`, `+`, `{n,}`). */
  unbounded: number;
  /** The upper bounds of the other repetitions (`?` is 1, `{2,5}` 5). */
  bounded: number[];
  /** The product of the alternatives' counts of the parts that are not repeated. */
  alternatives: number;
  /** Backreferences (`\1`, `\k<name>`): each compares up to the whole string again. */
  backreferences: number;
}

interface Frame {
  branches: number;
  repeats: boolean;
  alternates: boolean;
}

/** The length and upper bound of the quantifier at `at`, or null. */
function quantifierAt(pattern: string, at: number): { length: number; max: number } | null {
  const c = pattern[at];
  if (c === "*" || c === "+") return { length: 1, max: Number.POSITIVE_INFINITY };
  if (c === "?") return { length: 1, max: 1 };
  if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at, at + 40));
    if (m) {
      const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
      return { length: m[0].length, max };
    }
  }
  return null;
}

/** Where the atom starting at `i` (an escape or a class) ends, and whether it is a backreference. */
function atomEnd(pattern: string, i: number): { end: number; backreference: boolean } {
  const c = pattern[i];
  if (c === "\\") {
    const next = pattern[i + 1] ?? "";
    const closing = (close: string): number => {
      const at = pattern.indexOf(close, i + 2);
      return at < 0 ? pattern.length : at + 1;
    };
    if ("pPu".includes(next) && pattern[i + 2] === "{") return { end: closing("}"), backreference: false };
    if (next === "k" && pattern[i + 2] === "<") return { end: closing(">"), backreference: true };
    if (next >= "1" && next <= "9") {
      let j = i + 2;
      while (/^[0-9]$/.test(pattern[j] ?? "")) j++;
      return { end: j, backreference: true };
    }
    return { end: i + 2, backreference: false };
  }
  if (c === "[") {
    // In JavaScript `[]` is the empty class and `[^]` any character: a `]` right after `[` or `[^`
    // closes the class (it was read as a literal, and `^(?:[]|(?:a+)+[b])` passed for linear).
    let j = i + 1;
    if (pattern[j] === "^") j++;
    while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
    return { end: j + 1, backreference: false };
  }
  return { end: i + 1, backreference: false };
}

/** The length of a group's opening: `(`, `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`. */
function groupOpening(pattern: string, i: number): number {
  if (pattern[i + 1] !== "?") return 1;
  if (pattern[i + 2] === "<" && (pattern[i + 3] === "=" || pattern[i + 3] === "!")) return 4;
  return /^\(\?<[A-Za-z_$][\w$]*>/.exec(pattern.slice(i, i + 300))?.[0].length ?? 3;
}

/** Reads `pattern` for what makes a backtracking engine slow on it ({@link PatternShape}). */
export function patternShape(pattern: string): PatternShape {
  const shape: PatternShape = {
    nested: false,
    repeatedAlternation: false,
    anchored: false,
    unbounded: 0,
    bounded: [],
    alternatives: 1,
    backreferences: 0,
  };
  const frames: Frame[] = [{ branches: 1, repeats: false, alternates: false }];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "(") {
      frames.push({ branches: 1, repeats: false, alternates: false });
      i += groupOpening(pattern, i);
      continue;
    }
    if (c === "|") {
      (frames.at(-1) as Frame).branches++;
      i++;
      continue;
    }
    if (c === "^" || c === "$") {
      i++;
      continue;
    }
    let end = i + 1;
    let group: Frame | null = null;
    if (c === ")") {
      group = frames.length > 1 ? (frames.pop() as Frame) : null;
    } else {
      const atom = atomEnd(pattern, i);
      end = atom.end;
      if (atom.backreference) shape.backreferences++;
    }
    const top = frames.at(-1) as Frame;
    const q = quantifierAt(pattern, end);
    const alternates = group !== null && (group.alternates || group.branches > 1);
    if (q !== null) {
      if (group?.repeats) shape.nested = true;
      if (alternates && q.max > 1) shape.repeatedAlternation = true;
      else if (group !== null && group.branches > 1) shape.alternatives *= group.branches;
      if (q.max === Number.POSITIVE_INFINITY) shape.unbounded++;
      else shape.bounded.push(q.max);
      top.repeats = true;
      end += q.length + (pattern[end + q.length] === "?" ? 1 : 0);
    } else if (group !== null && group.branches > 1) {
      shape.alternatives *= group.branches;
    }
    if (group !== null) {
      top.repeats ||= group.repeats;
      top.alternates ||= alternates;
    }
    i = end;
  }
  const outer = frames[0] as Frame;
  shape.alternatives *= outer.branches;
  shape.anchored = pattern.startsWith("^") && outer.branches === 1;
  return shape;
}

/** The most steps a backtracking engine may take to test a string of `n` characters. */
export function backtrackingSteps(shape: PatternShape, n: number): number {
  let steps = (shape.anchored ? 1 : n + 1) * shape.alternatives * (n + 1) ** (shape.unbounded + shape.backreferences);
  for (const max of shape.bounded) steps *= Math.min(n, max) + 1;
  return steps;
}

/** Whether a backtracking engine's work on `shape` grows at most linearly with the string. */
function linearOnBacktracking(shape: PatternShape): boolean {
  const degree = shape.unbounded + shape.backreferences + (shape.anchored ? 0 : 1);
  return !shape.nested && !shape.repeatedAlternation && degree <= 1;
}

/** Steps left in the check that is running (none running: no bound). */
let stepsLeft = Number.POSITIVE_INFINITY;

/** Whether the running check has spent less than half its budget (none running: true). */
export function patternBudgetHalfLeft(): boolean {
  return stepsLeft >= PATTERN_BUDGET / 2;
}

/**
 * What the checks of one request may spend in all (ten checks' budgets, about 10 s at worst): a
 * batch, validate or apply checks each entry's input with a budget of its own, and 100 entries of
 * one costly pattern (74 KB) held a server 39 s.
 */
export const REQUEST_PATTERN_BUDGET = 10 * PATTERN_BUDGET;

/** The steps left to the request being handled (see {@link withRequestPatternBudget}). */
const requestSteps = new AsyncLocalStorage<{ left: number }>();

/**
 * Thrown by a pattern's test when the check has spent its {@link PATTERN_BUDGET}, or (`request`)
 * the request its {@link REQUEST_PATTERN_BUDGET}.
 */
export class PatternBudgetSpent extends Error {
  constructor(
    readonly pattern: string,
    readonly request = false,
  ) {
    super(`the patterns of one ${request ? "request" : "check"} may take fewer steps; ${pattern} went past them`);
  }
}

/**
 * Runs `work` (a request that checks many inputs: a batch, a validate, an apply) with one
 * {@link REQUEST_PATTERN_BUDGET} that every check in it also draws from.
 */
export function withRequestPatternBudget<T>(work: () => Promise<T>): Promise<T> {
  return requestSteps.run({ left: REQUEST_PATTERN_BUDGET }, work);
}

/**
 * Runs `check` (a schema's check of one input) with a fresh {@link PATTERN_BUDGET}: a pattern
 * test past it throws {@link PatternBudgetSpent}. Checks are synchronous, so one runs at a time.
 */
export function withPatternBudget<T>(check: () => T): T {
  const outer = stepsLeft;
  stepsLeft = PATTERN_BUDGET;
  try {
    return check();
  } finally {
    stepsLeft = outer;
  }
}

/** A pattern whose every test is charged `steps(length)` against the running check's budget. */
class MeteredPattern {
  constructor(
    private readonly regExp: { test(s: string): boolean },
    private readonly steps: (length: number) => number,
    readonly source: string,
  ) {}

  test(s: string): boolean {
    const cost = STEPS_PER_TEST + this.steps(s.length);
    stepsLeft -= cost;
    if (stepsLeft < 0) throw new PatternBudgetSpent(this.source);
    const request = requestSteps.getStore();
    if (request !== undefined) {
      request.left -= cost;
      if (request.left < 0) throw new PatternBudgetSpent(this.source, true);
    }
    return this.regExp.test(s);
  }

  toString(): string {
    return String(this.regExp);
  }
}

/** What keeps a pattern off RE2, the linear-time engine. */
const NO_LINEAR_ENGINE =
  "a backreference, lookaround, a count past 1,000 (counts inside counts multiply) or a Unicode property other than a general category (\\p{L}) or script (\\p{Script=Greek}), which no linear-time engine here runs";

function quoted(pattern: string): string {
  return JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern);
}

/** Ajv's `code.regExp`: the engine for a schema's patterns, or a refusal for a pattern no engine runs safely. */
export function safePatternEngine(pattern: string, flags: string): { test(s: string): boolean } {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `pattern ${quoted(pattern)} is ${pattern.length.toLocaleString("en-US")} characters long; a pattern may have at most ${MAX_PATTERN_LENGTH.toLocaleString("en-US")}`,
    );
  }
  // JSON Schema reads patterns with Unicode semantics (ECMAScript's `u` flag), as Ajv does: one
  // valid only without it (`\-` outside a class, `\q`) is refused, not read another way.
  try {
    new RegExp(pattern, "u");
  } catch (error) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `pattern ${quoted(pattern)} is not a valid regular expression with Unicode semantics, as JSON Schema reads patterns: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const shape = patternShape(pattern);
  // Either engine may compare each character with much of a long pattern: `"."×10000 + "c"` took
  // 5.9 s over 1 MB on the usual engine, `"[ab]?"×2000 + "c"` 6.5 s over 20,000 characters on the
  // linear one, each charged as if the pattern were short.
  const size = Math.max(1, Math.ceil(pattern.length / PATTERN_CHARS_PER_STEP));
  // A `\p{…}` class costs the usual engine several steps a character: 2^27 ways through
  // `(?:\p{L}|a)`×27 took 3.3 s a test, charged as a tenth of the budget.
  const perStep = /\\[pP]\{/.test(pattern) ? UNICODE_CLASS_STEPS : 1;
  const backtracking = (n: number): number => perStep * size * backtrackingSteps(shape, n);
  const affordable = backtracking(SHORTEST_USEFUL) <= PATTERN_BUDGET;
  if (linearOnBacktracking(shape) && affordable) {
    return new MeteredPattern(new RegExp(pattern, flags), backtracking, quoted(pattern));
  }
  // RE2: linear, with the Unicode semantics JSON Schema gives patterns. (V8's linear engine, tried
  // after it, took seconds and gigabytes on capture-heavy patterns its charge let through:
  // `\q(.*)×100c` on 40,000 characters 6 s and 3.9 GB, ×400 14 GB.)
  const re2 = re2Pattern(pattern);
  if (re2 !== null && typeof re2 !== "string") {
    const perChar = RE2_STEPS_PER_INSTRUCTION * re2.programSize;
    if (perChar * (SHORTEST_USEFUL + 1) <= PATTERN_BUDGET) {
      return new MeteredPattern(re2, (n) => perChar * (n + 1), quoted(pattern));
    }
  }
  // Why RE2 does not take it, for a refusal below.
  const noLinearEngine = typeof re2 === "string" ? re2 : `it has ${NO_LINEAR_ENGINE}`;
  if (shape.nested || shape.repeatedAlternation) {
    const what = shape.nested ? "repeats a part that itself repeats" : "repeats a part that has alternatives";
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `pattern ${quoted(pattern)} ${what}, and ${noLinearEngine}: an input could hold the server for minutes; bound lengths with minLength/maxLength rather than counted repetitions, and write alternatives of single characters as one class ([\\p{L}-])`,
    );
  }
  if (!affordable) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `pattern ${quoted(pattern)} has repetitions that a backtracking engine may try against each other, and ${noLinearEngine}: testing one string of ${SHORTEST_USEFUL} characters could take more than ${PATTERN_BUDGET.toLocaleString("en-US")} steps; use fewer repetitions`,
    );
  }
  return new MeteredPattern(new RegExp(pattern, flags), backtracking, quoted(pattern));
}
safePatternEngine.code = "orbit-safe-pattern";

/** Whether a quantifier applies to a group that contains a quantifier (star height above 1). */
export function nestedRepetition(pattern: string): boolean {
  return patternShape(pattern).nested;
}
