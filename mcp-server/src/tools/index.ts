import { channelsTool } from './channels.js';
import { contextTool } from './context.js';
import { delegateTool } from './delegate.js';
import { inboxTool } from './inbox.js';
import { peersTool } from './peers.js';
import { sayTool } from './say.js';
import { tasksTool } from './tasks.js';
import type { NetworkTool } from './tool.js';

/** Every tool the server offers, in the order it lists them. */
export const NETWORK_TOOLS: readonly NetworkTool[] = [
  sayTool,
  delegateTool,
  peersTool,
  channelsTool,
  tasksTool,
  contextTool,
  inboxTool,
];
