/**
 * A schema pattern run on RE2 (the re2js port): linear time in the string whatever the pattern's
 * shape, with Unicode semantics, for the patterns a backtracking engine cannot run safely
 * (docs/security.md § Input schemas).
 *
 * JSON Schema patterns are ECMAScript regular expressions (read with the `u` flag) and RE2's syntax
 * differs in places that change the meaning: RE2's `\s` is five ASCII characters, its `.` matches
 * `\r` and U+2028, it reads `\Q…\E`, `(?i)`, `[[:alpha:]]` and `\z`. So the pattern is not handed to
 * RE2 as written: {@link toRe2Syntax} reads it with ECMAScript's grammar and writes each part in the
 * RE2 form that means the same (every literal as `\x{…}`), and gives up (null) on any part without
 * one (backreferences, lookaround, Unicode properties other than general categories and scripts, a
 * count past RE2's 1,000), leaving the pattern to the other engines.
 */
import { RE2JS } from "re2js";

/** ECMAScript's `\s`: WhiteSpace and LineTerminator, as RE2 class ranges. */
const SPACE_RANGES = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
] as const;
const MAX_CODE_POINT = 0x10ffff;
/** RE2 refuses counted repetitions past this. */
const MAX_REPEAT = 1000;
/**
 * The most instructions one pattern's program may have, and all the patterns of one schema:
 * compiling takes 3–7 µs an instruction here (1,000 patterns of about 2,000 held the thread 6–10 s),
 * and `[a-z]{1000}` written 900 times fits in a pattern's 10,000 characters.
 */
const MAX_PROGRAM = 20_000;
const SCHEMA_PROGRAM = 100_000;

const hex = (code: number): string => `\\x{${code.toString(16)}}`;
const range = (from: number, to: number): string => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`);
const SPACE = SPACE_RANGES.map(([from, to]) => range(from, to)).join("");
const NOT_SPACE = ((): string => {
  let out = "";
  let next = 0;
  for (const [from, to] of SPACE_RANGES) {
    if (from > next) out += range(next, from - 1);
    next = to + 1;
  }
  return out + range(next, MAX_CODE_POINT);
})();
/** ECMAScript's `.`: any code point but the four line terminators. */
const DOT = "[^\\x{a}\\x{d}\\x{2028}\\x{2029}]";
const SYNTAX_CHARACTERS = "^$\\.*+?()[]{}|/";
const CONTROL_ESCAPES: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
/** A general category, by its short name (`L`, `Lu`: both engines read them alike) or a long one. */
const GENERAL_CATEGORY = /^(?:(?:General_Category|gc)=)?(\w+)$/;
const SHORT_CATEGORY = /^(?:[A-Z][a-z]?|LC)$/;
/** Its long names, which ECMAScript takes and RE2 does not (`\p{Letter}` is `\p{L}`). */
const CATEGORY_NAMES: Readonly<Record<string, string>> = {
  Letter: "L",
  Cased_Letter: "LC",
  Uppercase_Letter: "Lu",
  Lowercase_Letter: "Ll",
  Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Mark: "M",
  Combining_Mark: "M",
  Nonspacing_Mark: "Mn",
  Spacing_Mark: "Mc",
  Enclosing_Mark: "Me",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Connector_Punctuation: "Pc",
  Dash_Punctuation: "Pd",
  Open_Punctuation: "Ps",
  Close_Punctuation: "Pe",
  Initial_Punctuation: "Pi",
  Final_Punctuation: "Pf",
  Other_Punctuation: "Po",
  Symbol: "S",
  Math_Symbol: "Sm",
  Currency_Symbol: "Sc",
  Modifier_Symbol: "Sk",
  Other_Symbol: "So",
  Separator: "Z",
  Space_Separator: "Zs",
  Line_Separator: "Zl",
  Paragraph_Separator: "Zp",
  Other: "C",
  Control: "Cc",
  cntrl: "Cc",
  Format: "Cf",
  Surrogate: "Cs",
  Private_Use: "Co",
  Unassigned: "Cn",
};
/** A script (`Script=Greek`, `sc=Latn`); RE2 knows scripts by long name only, and refuses others. */
const SCRIPT = /^(?:Script|sc)=([A-Za-z_]+)$/;

const LOOKAROUND = /^\(\?(?:=|!|<=|<!)/;
// Sticky: matched where the reader is, without copying the rest of a pattern of 10,000 characters.
const COUNT = /\{(\d+)(,(\d*))?\}/y;
const HEX = /x([0-9A-Fa-f]{2})/y;
const BRACED = /u\{([0-9A-Fa-f]+)\}/y;
const UNICODE = /u([0-9A-Fa-f]{4})(?:\\u([0-9A-Fa-f]{4}))?/y;

class Untranslatable extends Error {}

/** Reads an ECMAScript (`u`) pattern, writing each part in RE2's syntax. */
class Translator {
  private i = 0;
  private out = "";

  constructor(private readonly p: string) {}

  /** `sticky` matched at the reader's place, or null. */
  private at(sticky: RegExp): RegExpExecArray | null {
    sticky.lastIndex = this.i;
    return sticky.exec(this.p);
  }

  /** The RE2 pattern, and about how many instructions RE2's program for it has (an upper bound, near). */
  run(): { syntax: string; size: number } {
    const size = this.disjunction();
    if (this.i !== this.p.length) throw new Untranslatable();
    return { syntax: this.out, size };
  }

  private disjunction(): number {
    let size = 0;
    for (;;) {
      while (this.i < this.p.length && this.p[this.i] !== "|" && this.p[this.i] !== ")") size += this.term();
      if (this.p[this.i] !== "|") return size;
      this.out += "|";
      this.i++;
      size++;
    }
  }

  private term(): number {
    const c = this.p[this.i] as string;
    if (c === "^" || c === "$") {
      this.out += c;
      this.i++;
      return 1;
    }
    let size = 1;
    if (c === "(") {
      if (LOOKAROUND.test(this.p.slice(this.i, this.i + 4))) throw new Untranslatable();
      if (this.p.startsWith("(?:", this.i)) this.i += 3;
      else if (this.p.startsWith("(?<", this.i)) this.i = this.p.indexOf(">", this.i) + 1;
      else this.i++;
      this.out += "(?:";
      size = this.disjunction() + 1;
      if (this.p[this.i] !== ")") throw new Untranslatable();
      this.out += ")";
      this.i++;
    } else if (c === "\\" && (this.p[this.i + 1] === "b" || this.p[this.i + 1] === "B")) {
      // An ASCII word boundary in both (ECMAScript's without the `i` flag).
      this.out += this.p.slice(this.i, this.i + 2);
      this.i += 2;
      return 1;
    } else {
      this.atom();
    }
    return this.quantifier(size);
  }

  /** Writes the quantifier after a term of `size` instructions, if any; returns the size with it. */
  private quantifier(size: number): number {
    const c = this.p[this.i];
    let quantified = size;
    if (c === "*" || c === "+" || c === "?") {
      this.out += c;
      this.i++;
      quantified = size + 1;
    } else if (c === "{") {
      const m = this.at(COUNT);
      if (m === null) throw new Untranslatable();
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? null : Number(m[3]);
      if (min > MAX_REPEAT || (max !== null && max > MAX_REPEAT)) throw new Untranslatable();
      // Written as numbers: RE2 reads `{02}` as the text "{02}", ECMAScript as two.
      this.out += max === min ? `{${min}}` : max === null ? `{${min},}` : `{${min},${max}}`;
      this.i += m[0].length;
      // RE2 writes the term out once per count: the optional ones with a branch each, an open end as a star.
      quantified = min * size + (max === null ? size + 1 : (max - min) * (size + 1));
    } else {
      return size;
    }
    if (this.p[this.i] === "?") {
      this.out += "?";
      this.i++;
    }
    return quantified;
  }

  private atom(): void {
    const c = this.p[this.i] as string;
    if (c === ".") {
      this.out += DOT;
      this.i++;
    } else if (c === "[") {
      this.characterClass();
    } else if (c === "\\") {
      this.i++;
      const set = this.classEscape();
      if (set !== null) this.out += set.standalone;
      else this.out += hex(this.characterEscape());
    } else {
      const code = this.p.codePointAt(this.i) as number;
      this.i += code > 0xffff ? 2 : 1;
      this.out += hex(code);
    }
  }

  /** After a `\`: a class escape (`\d`, `\s`, `\p{L}`) in its two RE2 forms, or null. */
  private classEscape(): { standalone: string; inClass: string } | null {
    const c = this.p[this.i] as string;
    if ("dDwW".includes(c)) {
      this.i++;
      return { standalone: `\\${c}`, inClass: `\\${c}` };
    }
    if (c === "s" || c === "S") {
      this.i++;
      const ranges = c === "s" ? SPACE : NOT_SPACE;
      return { standalone: `[${ranges}]`, inClass: ranges };
    }
    if (c === "p" || c === "P") {
      const end = this.p.indexOf("}", this.i);
      if (this.p[this.i + 1] !== "{" || end < 0) throw new Untranslatable();
      const name = this.p.slice(this.i + 2, end);
      const value = GENERAL_CATEGORY.exec(name)?.[1];
      const category =
        value === undefined || SHORT_CATEGORY.test(value)
          ? value
          : Object.hasOwn(CATEGORY_NAMES, value)
            ? CATEGORY_NAMES[value]
            : undefined;
      const re2Name = category ?? SCRIPT.exec(name)?.[1];
      if (re2Name === undefined) throw new Untranslatable();
      this.i = end + 1;
      const property = `\\${c}{${re2Name}}`;
      return { standalone: property, inClass: property };
    }
    return null;
  }

  /** After a `\`: the code point a character escape stands for. */
  private characterEscape(): number {
    const c = this.p[this.i] as string;
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) {
      this.i++;
      return control;
    }
    if (c === "c" && /[A-Za-z]/.test(this.p[this.i + 1] ?? "")) {
      this.i += 2;
      return (this.p.charCodeAt(this.i - 1) as number) % 32;
    }
    if (c === "0" && !/\d/.test(this.p[this.i + 1] ?? "")) {
      this.i++;
      return 0;
    }
    if (c === "x") {
      const m = this.at(HEX);
      if (m === null) throw new Untranslatable();
      this.i += 3;
      return Number.parseInt(m[1] as string, 16);
    }
    if (c === "u") return this.unicodeEscape();
    if (SYNTAX_CHARACTERS.includes(c) || c === "-") {
      this.i++;
      return c.codePointAt(0) as number;
    }
    // A backreference (`\1`, `\k<name>`) or anything else: no RE2 form.
    throw new Untranslatable();
  }

  /** `\uHHHH`, a surrogate pair of two such escapes (one code point under `u`), or `\u{H…}`. */
  private unicodeEscape(): number {
    const braced = this.at(BRACED);
    if (braced !== null) {
      this.i += braced[0].length;
      const code = Number.parseInt(braced[1] as string, 16);
      if (code > MAX_CODE_POINT) throw new Untranslatable();
      return code;
    }
    const m = this.at(UNICODE);
    if (m === null) throw new Untranslatable();
    const lead = Number.parseInt(m[1] as string, 16);
    const trail = m[2] === undefined ? -1 : Number.parseInt(m[2], 16);
    if (lead >= 0xd800 && lead <= 0xdbff && trail >= 0xdc00 && trail <= 0xdfff) {
      this.i += m[0].length;
      return (lead - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000;
    }
    this.i += 5;
    return lead;
  }

  private characterClass(): void {
    this.i++;
    let negated = false;
    if (this.p[this.i] === "^") {
      negated = true;
      this.i++;
    }
    let body = "";
    while (this.p[this.i] !== "]") {
      if (this.i >= this.p.length) throw new Untranslatable();
      const from = this.classAtom();
      if (typeof from !== "number") {
        body += from;
        continue;
      }
      if (this.p[this.i] === "-" && this.p[this.i + 1] !== "]" && this.i + 1 < this.p.length) {
        this.i++;
        const to = this.classAtom();
        if (typeof to !== "number") throw new Untranslatable();
        body += range(from, to);
      } else {
        body += hex(from);
      }
    }
    this.i++;
    // `[]` matches nothing and `[^]` anything; RE2 has no empty class.
    if (body === "") this.out += negated ? `[${range(0, MAX_CODE_POINT)}]` : `[^${range(0, MAX_CODE_POINT)}]`;
    else this.out += `[${negated ? "^" : ""}${body}]`;
  }

  /** One item of a class: a code point, or a set's ranges (a class escape) as a string. */
  private classAtom(): number | string {
    const c = this.p[this.i] as string;
    if (c !== "\\") {
      const code = this.p.codePointAt(this.i) as number;
      this.i += code > 0xffff ? 2 : 1;
      return code;
    }
    this.i++;
    if (this.p[this.i] === "b") {
      this.i++;
      return 0x08;
    }
    const set = this.classEscape();
    if (set !== null) return set.inClass;
    return this.characterEscape();
  }
}

/**
 * The RE2 pattern that means what the ECMAScript (`u`) pattern means and about the size of its
 * program, or null when a part has no RE2 form.
 */
function translated(pattern: string): { syntax: string; size: number } | null {
  try {
    new RegExp(pattern, "u");
  } catch {
    return null;
  }
  try {
    return new Translator(pattern).run();
  } catch (error) {
    if (error instanceof Untranslatable) return null;
    throw error;
  }
}

/** The RE2 pattern that means what the ECMAScript (`u`) pattern means, or null (see {@link translated}). */
export function toRe2Syntax(pattern: string): string | null {
  return translated(pattern)?.syntax ?? null;
}

/** A pattern compiled by RE2. */
export interface Re2Pattern {
  /** Whether the pattern matches anywhere in `s`, as `RegExp.test` says. */
  test(s: string): boolean;
  /**
   * The instructions of RE2's program: a character of the string may step each of them once, so a
   * test costs up to about this many steps a character (measured 70–85 ns each here, `\p{L}{1,1000}\d`
   * and its 2,002 instructions on 20,000 letters took 3.3 s).
   */
  readonly programSize: number;
  toString(): string;
}

/** Compiled patterns by RE2 syntax: a schema is compiled more than once (to stop at the first problem, to list them). */
const compiledCache = new Map<string, RE2JS>();
const CACHE_SIZE = 4096;
/** The instructions the patterns of the schema being compiled may still compile to ({@link withCompileAllowance}). */
let allowanceLeft = Number.POSITIVE_INFINITY;

/**
 * Runs `compile` (one schema's) letting its patterns compile to at most {@link SCHEMA_PROGRAM}
 * instructions of RE2 in all; past it, the other engines take the rest.
 */
export function withCompileAllowance<T>(compile: () => T): T {
  const outer = allowanceLeft;
  allowanceLeft = SCHEMA_PROGRAM;
  try {
    return compile();
  } finally {
    allowanceLeft = outer;
  }
}

/**
 * The pattern compiled by RE2; or why RE2 would cost too much to compile it (a string); or null when
 * a part has no RE2 form (or RE2 does not compile it).
 */
export function re2Pattern(pattern: string): Re2Pattern | string | null {
  const translation = translated(pattern);
  if (translation === null) return null;
  const size = translation.size.toLocaleString("en-US");
  if (translation.size > MAX_PROGRAM) {
    return `its RE2 program would have about ${size} instructions, more than the ${MAX_PROGRAM.toLocaleString("en-US")} of one pattern`;
  }
  // Charged when cached too: a schema compiled again (to list every problem) then puts each of its
  // patterns on the engine it had the first time.
  if (translation.size > allowanceLeft) {
    return `its RE2 program (about ${size} instructions) would take the schema's patterns past the ${SCHEMA_PROGRAM.toLocaleString("en-US")} they may compile to in all`;
  }
  let compiled = compiledCache.get(translation.syntax);
  if (compiled === undefined) {
    try {
      compiled = RE2JS.compile(translation.syntax);
    } catch {
      // A script RE2 does not know, counts whose product passes 1,000: the other engines decide
      // (and the allowance is not spent on it).
      return null;
    }
    if (compiledCache.size >= CACHE_SIZE) compiledCache.clear();
    compiledCache.set(translation.syntax, compiled);
  }
  allowanceLeft -= translation.size;
  const program = compiled;
  return {
    test: (s) => program.matcher(s).find(),
    programSize: program.programSize(),
    toString: () => `/${pattern}/ on RE2`,
  };
}
