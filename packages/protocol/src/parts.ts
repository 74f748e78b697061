import { z } from 'zod';

/** Most parts one envelope carries. */
export const MAX_PARTS = 64;

/** A part of text. */
export const TextPartSchema = z.strictObject({ kind: z.literal('text'), text: z.string() }).describe('A part of text.');
export type TextPart = z.infer<typeof TextPartSchema>;

/** A part of structured data (any JSON value), with its media type. */
export const DataPartSchema = z
  .strictObject({
    kind: z.literal('data'),
    data: z.json(),
    media_type: z.string().min(1).max(128).default('application/json'),
  })
  .describe('A part of structured data (any JSON value), with its media type.');
export type DataPart = z.infer<typeof DataPartSchema>;

/** One part of a message: text or data (AG2's `TextInput` and `DataInput`; A2A's text and data parts). */
export const PartSchema = z.discriminatedUnion('kind', [TextPartSchema, DataPartSchema]);
export type Part = z.infer<typeof PartSchema>;
export type PartInput = z.input<typeof PartSchema>;

/**
 * What an adapter hands a model for an envelope (AG2's `Rendered`): one message or a sequence of them, each a string
 * (a text part) or a part.
 */
export type Rendered = string | PartInput | readonly (string | PartInput)[];

/**
 * AG2's `ensure_parts`: whatever an adapter produced as parts. A string is one text part, a part is itself, a sequence
 * is one part per item; `null` and `undefined` are no parts. A data part without a media type gets
 * `application/json`.
 */
export function ensureParts(content: Rendered | null | undefined): Part[] {
  if (content === null || content === undefined) return [];
  const items: readonly (string | PartInput)[] = typeof content === 'string' || !isList(content) ? [content] : content;
  return items.map((item) => (typeof item === 'string' ? { kind: 'text', text: item } : PartSchema.parse(item)));
}

function isList(content: Exclude<Rendered, string>): content is readonly (string | PartInput)[] {
  return Array.isArray(content);
}

/**
 * The text a reader that shows only text shows for `parts`: each text part as it is, each data part as its compact
 * JSON, joined by blank lines. Builders set an envelope's `text` to this.
 */
export function partsText(parts: readonly Part[]): string {
  return parts.map((part) => (part.kind === 'text' ? part.text : JSON.stringify(part.data))).join('\n\n');
}

/**
 * The `event_data` of a text envelope saying `content`: `{ text }` for plain text, and `{ text, parts }` (`text` being
 * `partsText(parts)`) when it holds data or more than one part.
 */
export function textData(content: Rendered): { text: string; parts?: Part[] } {
  const parts = ensureParts(content);
  const only = parts[0];
  if (parts.length === 1 && only?.kind === 'text') return { text: only.text };
  if (parts.length === 0) return { text: '' };
  return { text: partsText(parts), parts };
}

/** The parts of a text envelope's `event_data`: its `parts` when it has them, else its `text` as one text part. */
export function partsOf(data: { readonly text: string; readonly parts?: readonly Part[] | undefined }): Part[] {
  return data.parts === undefined ? [{ kind: 'text', text: data.text }] : [...data.parts];
}
