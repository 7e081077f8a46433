/**
 * The longest functions of a source tree, in lines (first to last line of the declaration, blank
 * lines and comments inside included): the figure issue 12's closing note reports.
 * `node --import tsx scripts/longest-functions.ts [dir=src] [count=10]`
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const dir = process.argv[2] ?? "src";
const count = Number(process.argv[3] ?? 10);

function sourceFiles(path: string): string[] {
  if (statSync(path).isFile()) return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

/** A readable name: the function's own, else the variable or property it is assigned to. */
function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(file);
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(file).slice(0, 40)})`;
  return "(anonymous)";
}

interface Found {
  lines: number;
  where: string;
  name: string;
}

const found: Found[] = [];
for (const path of sourceFiles(dir)) {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      found.push({ lines: last - first + 1, where: `${relative(".", path)}:${first}`, name: nameOf(node, file) });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
}
found.sort((a, b) => b.lines - a.lines);
for (const f of found.slice(0, count)) console.log(`${String(f.lines).padStart(5)}  ${f.where}  ${f.name}`);
