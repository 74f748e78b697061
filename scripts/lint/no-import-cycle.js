// A lint rule that forbids import cycles between a package's modules, counting `import type` and `export type`
// edges: `import-x/no-cycle` skips type-only imports, yet a type-only cycle still couples the two modules (neither
// can be understood, moved or split without the other). Only relative specifiers are followed: packages depend on
// each other in one direction, so a cycle can only close inside one package.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** @type {Map<string, string[]>} module file → the module files it imports (relative specifiers only). */
const edges = new Map();

/** @param {string} from @param {string} specifier @returns {string | undefined} */
function resolveRelative(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(js|ts)$/, '');
  for (const candidate of [`${stem}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** @param {string} file @returns {string[]} */
function importsOf(file) {
  const known = edges.get(file);
  if (known !== undefined) return known;
  const text = fs.readFileSync(file, 'utf8');
  const found = ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => resolveRelative(file, f.fileName))
    .filter((f) => f !== undefined);
  edges.set(file, found);
  return found;
}

/** The shortest import path from `start` back to `target`, or undefined when there is none. */
function pathBack(start, target) {
  /** @type {Map<string, string | null>} */
  const parent = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of importsOf(file)) {
      if (next === target) {
        const route = [file];
        for (let p = parent.get(file); p; p = parent.get(p)) route.unshift(p);
        return route;
      }
      if (!parent.has(next)) {
        parent.set(next, file);
        queue.push(next);
      }
    }
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles between modules, type-only imports included.' },
    schema: [],
    messages: { cycle: 'Import cycle (type imports count): {{route}}' },
  },
  create(context) {
    const filename = context.physicalFilename;
    if (!filename.endsWith('.ts')) return {};
    /** @param {import('estree').Node & { source?: import('estree').Literal | null }} node */
    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string') return;
      const target = resolveRelative(filename, specifier);
      if (target === undefined) return;
      const route = target === filename ? [] : pathBack(target, filename);
      if (route === undefined) return;
      const names = [filename, ...route, filename].map((f) => path.relative(path.dirname(filename), f) || f);
      context.report({ node, messageId: 'cycle', data: { route: names.join(' → ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

export default { rules: { 'no-import-cycle': rule } };
