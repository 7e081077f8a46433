/**
 * What an input schema's references point at (docs/security.md § Input schemas), for the bounds
 * of src/domain/input-schema.ts: an input schema is one document, so a reference that leaves it is
 * refused.
 */
import type { JsonObject } from "./json.js";
/** A reference that points outside the schema (SchemaRefs.targets throws it). */
export class Unresolved extends Error {
  constructor(readonly ref: string) {
    super(ref);
  }
}

/** The base of a schema without an `$id` of its own (only references within it resolve). */
const DOCUMENT_BASE = "orbit:///input-schema";
/** Documents Ajv knows without this schema (the draft's meta-schemas): a reference to one is a leaf. */
const KNOWN_DOCUMENTS = /^https?:\/\/json-schema\.org\//;

/**
 * What a schema's references point at, resolved as JSON Schema resolves them: against the base
 * URI of where they stand (each `$id` sets one, relative to its parent's), to a subschema with that
 * `$id`, then by the fragment's JSON Pointer or anchor (`$anchor`, `$dynamicAnchor`). `$ref`,
 * `$dynamicRef` (taken as the anchor it names in this document) and draft 2019's `$recursiveRef`.
 * A reference to anything else fails the check ({@link Unresolved}): Ajv loads nothing remote, so
 * it is one this walk does not understand.
 */
export class SchemaRefs {
  private readonly bases = new Map<object, string>();
  private readonly documents = new Map<string, object>();
  private readonly anchors = new Map<string, object>();

  constructor(root: JsonObject) {
    const walk = (node: unknown, base: string): void => {
      if (typeof node !== "object" || node === null) return;
      if (Array.isArray(node)) {
        for (const n of node) walk(n, base);
        return;
      }
      const o = node as Record<string, unknown>;
      let here = base;
      if (typeof o.$id === "string") {
        try {
          here = withoutFragment(new URL(o.$id, base).href);
        } catch {
          here = base;
        }
        if (!this.documents.has(here)) this.documents.set(here, node);
      }
      this.bases.set(node, here);
      for (const key of ["$anchor", "$dynamicAnchor"]) {
        const anchor = o[key];
        if (typeof anchor === "string" && !this.anchors.has(`${here}#${anchor}`))
          this.anchors.set(`${here}#${anchor}`, node);
      }
      for (const v of Object.values(o)) walk(v, here);
    };
    this.documents.set(DOCUMENT_BASE, root);
    walk(root, DOCUMENT_BASE);
  }

  /** The subschemas `node`'s references point at (booleans and known documents left out). */
  targets(node: object): object[] {
    const o = node as Record<string, unknown>;
    const out: object[] = [];
    for (const key of ["$ref", "$dynamicRef", "$recursiveRef"]) {
      const ref = o[key];
      if (typeof ref !== "string") continue;
      const target = this.resolve(node, ref);
      if (typeof target === "object" && target !== null) out.push(target);
    }
    return out;
  }

  private resolve(node: object, ref: string): unknown {
    let url: URL;
    try {
      url = new URL(ref, this.bases.get(node) ?? DOCUMENT_BASE);
    } catch {
      throw new Unresolved(ref);
    }
    const document = withoutFragment(url.href);
    const doc = this.documents.get(document);
    if (doc === undefined) {
      if (KNOWN_DOCUMENTS.test(document)) return undefined;
      throw new Unresolved(ref);
    }
    let fragment: string;
    try {
      fragment = decodeURIComponent(url.hash.slice(1));
    } catch {
      throw new Unresolved(ref);
    }
    if (fragment === "") return doc;
    if (fragment.startsWith("/")) return valueAt(doc, fragment);
    const anchored = this.anchors.get(`${document}#${fragment}`);
    if (anchored === undefined) throw new Unresolved(ref);
    return anchored;
  }
}

function withoutFragment(href: string): string {
  const i = href.indexOf("#");
  return i < 0 ? href : href.slice(0, i);
}

/** The value at a JSON Pointer in `doc`, or undefined. */
export function valueAt(doc: unknown, place: string): unknown {
  let at: unknown = doc;
  for (const raw of place.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}
