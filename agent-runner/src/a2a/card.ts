import type { AgentCard } from '@a2a-js/sdk';

/** What differs between the text agents' cards the runner and its demo build. */
export interface TextAgentCard {
  readonly name: string;
  readonly description: string;
  /** The JSON-RPC endpoint. */
  readonly url: string;
  readonly version: string;
}

/** An A2A 1.0 card of a text agent served over JSON-RPC with streaming, no security scheme and no skills. */
export function textAgentCard(card: TextAgentCard): AgentCard {
  return {
    name: card.name,
    description: card.description,
    supportedInterfaces: [{ url: card.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: card.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}
