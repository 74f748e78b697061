import type { ComponentChildren } from 'preact';
import { isScripted, modelLabel } from '../logic/turns.js';

/** What the scripted badge's tooltip says. */
export const SCRIPTED_TITLE = 'Scripted model: it answers with canned lines, offline. No language model is called.';

/**
 * The model an agent answers with, from its passport or a turn report: `openai / gpt-4.1-mini`; the scripted model as
 * a badge (with its model id when it has one of its own) whose tooltip says it answers with canned lines; `fallback`
 * (default a dash) when neither provider nor model is known.
 */
export function ModelLabel(props: { provider: string | null; model: string | null; fallback?: ComponentChildren }) {
  const { provider, model } = props;
  if (isScripted(provider)) {
    const own = model !== null && model !== provider ? model : null;
    return (
      <span data-testid="model" data-scripted="true">
        <span class="badge badge-warn" title={SCRIPTED_TITLE} data-testid="scripted-badge">
          scripted
        </span>
        {own === null ? null : <span class="muted"> {own}</span>}
      </span>
    );
  }
  const label = modelLabel(provider, model);
  if (label === null) return <>{props.fallback ?? <span class="muted">—</span>}</>;
  return <span data-testid="model">{label}</span>;
}
