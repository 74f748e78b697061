import type { ViewSpec } from '@ag2net/adapters';
import { fullTranscript, namedTranscript, namedWindowedSummary, windowedSummary } from './policies.js';
import type { ViewPolicy } from './types.js';

/** The view an adapter's `defaultViewPolicy` describes. */
export function viewFromSpec(spec: ViewSpec): ViewPolicy {
  switch (spec.name) {
    case 'full_transcript':
      return fullTranscript();
    case 'named_transcript':
      return namedTranscript();
    case 'windowed_summary':
      return windowedSummary(spec.recentN);
    case 'named_windowed_summary':
      return namedWindowedSummary(spec.recentN);
    default:
      return unknownSpec(spec);
  }
}

function unknownSpec(spec: never): never {
  throw new TypeError(`unknown view: ${JSON.stringify(spec)}`);
}
