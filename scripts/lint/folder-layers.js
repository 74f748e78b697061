// A lint rule that keeps the folders of one source tree in layers: a module may import modules of its own folder and
// of the folders listed below it, never of a folder above it. A folder is a top-level folder of `root` ('.' stands for
// the modules at the root itself); a folder the list does not name is an error until it is given its place. Type-only
// imports count, as in no-import-cycle: a type import from a higher folder still ties the layer to what sits on it.
import path from 'node:path';

/** @param {string} from @param {string} specifier @returns {string | undefined} */
function resolveRelative(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  return path.resolve(path.dirname(from), specifier).replace(/\.js$/, '.ts');
}

/** The folder of `file` under `root` ('.' for a module at the root), or undefined when it lies outside. */
function folderOf(root, file) {
  const rel = path.relative(root, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  return parts.length === 1 ? '.' : parts[0];
}

/** @type {import('eslint').Rule.RuleModule} */
const rule = {
  meta: {
    type: 'problem',
    docs: { description: "Forbid imports from a higher folder of a layered source tree, or a folder it doesn't list." },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string', description: 'The layered tree, relative to the lint working directory.' },
          layers: {
            type: 'array',
            items: { type: 'string' },
            minItems: 1,
            description: "Its top-level folders from the ground up; '.' is the modules at the root.",
          },
        },
        required: ['root', 'layers'],
        additionalProperties: false,
      },
    ],
    messages: {
      upward:
        "{{from}} ({{fromLayer}}) imports {{to}} ({{toLayer}}), a higher layer. The layers of {{root}}, from the ground up: {{layers}}; a module imports only its own folder's and those below it.",
      unlisted:
        "{{from}} imports {{to}}, but folder '{{folder}}' has no place in the layers of {{root}}: {{layers}}. Add it to the list where it belongs.",
    },
  },
  create(context) {
    const [{ root, layers }] = /** @type {[{ root: string; layers: string[] }]} */ (context.options);
    const rootDir = path.resolve(context.cwd, root);
    const filename = context.physicalFilename;
    const fromLayer = folderOf(rootDir, filename);
    if (fromLayer === undefined) return {};
    const shown = (f) => path.relative(context.cwd, f);
    const data = (to) => ({ from: shown(filename), to: shown(to), root, layers: layers.join(' < ') });
    /** @param {import('estree').Node & { source?: import('estree').Literal | null }} node */
    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string') return;
      const target = resolveRelative(filename, specifier);
      if (target === undefined) return;
      const toLayer = folderOf(rootDir, target);
      if (toLayer === undefined || toLayer === fromLayer) return;
      for (const folder of [fromLayer, toLayer]) {
        if (!layers.includes(folder)) {
          context.report({ node, messageId: 'unlisted', data: { ...data(target), folder } });
          return;
        }
      }
      if (layers.indexOf(toLayer) > layers.indexOf(fromLayer)) {
        context.report({ node, messageId: 'upward', data: { ...data(target), fromLayer, toLayer } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

export default { rules: { 'folder-layers': rule } };
