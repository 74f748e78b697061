import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  DataPartSchema,
  MAX_PARTS,
  PacketDataSchema,
  EV_TEXT,
  TextDataSchema,
  partsOf,
  textData,
  type Envelope,
  type Part as EnvelopePart,
} from '@ag2net/protocol';
import type { Part } from '@a2a-js/sdk';

/**
 * The `event_data` of the text envelope an A2A message becomes: text parts as text parts, data parts as data parts
 * (their media type kept, `application/json` when none), `text` their text rendering; files (`raw`, `url`) are refused.
 */
export function requestData(parts: readonly Part[]): { text: string; parts?: EnvelopePart[] } {
  if (parts.length > MAX_PARTS) throw new RequestMalformedError(`a message carries at most ${MAX_PARTS} parts`);
  const mine = parts.map((part): EnvelopePart => {
    const content = part.content;
    if (content?.$case === 'text') return { kind: 'text', text: content.value };
    if (content?.$case === 'data') {
      // The SDK types a data part's value as `any`: it is checked here as what it must be, a JSON value.
      const value: unknown = content.value;
      const parsed = DataPartSchema.safeParse({ kind: 'data', data: value, media_type: mediaTypeOf(part) });
      if (!parsed.success) throw new RequestMalformedError('a data part must hold a JSON value');
      return parsed.data;
    }
    throw new ContentTypeNotSupportedError('only text and data parts are accepted');
  });
  const data = textData(mine);
  if (data.text.trim() === '') throw new RequestMalformedError('the message has no content');
  return data;
}

function mediaTypeOf(part: Part): string {
  return part.mediaType === '' || part.mediaType === 'text/plain' ? 'application/json' : part.mediaType;
}

/** An envelope's content as A2A parts: a text's parts (or its text), a packet's body. */
export function a2aPartsOf(envelope: Envelope, text?: string): Part[] {
  if (text !== undefined) return [textPart(text)];
  if (envelope.event_type === EV_TEXT) {
    const data = TextDataSchema.safeParse(envelope.event_data);
    if (!data.success) return [textPart('')];
    return partsOf(data.data).map((part) =>
      part.kind === 'text'
        ? textPart(part.text)
        : {
            content: { $case: 'data', value: part.data },
            metadata: undefined,
            filename: '',
            mediaType: part.media_type,
          },
    );
  }
  const packet = PacketDataSchema.safeParse(envelope.event_data);
  return [textPart(packet.success ? (packet.data.body ?? '') : '')];
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}
