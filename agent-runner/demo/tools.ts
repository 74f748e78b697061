import { finish } from '@ag2net/protocol';
import { tool } from 'ai';
import { z } from 'zod';

/** Triage's routing tool: the workflow graph hands the turn to billing when it is called. */
export const triageTools = {
  transfer_to_billing: tool({
    description: 'Hand the case to the billing team.',
    inputSchema: z.object({ reason: z.string().describe('Why billing should take over.') }),
    execute: ({ reason }) => Promise.resolve(`transferred to billing: ${reason}`),
  }),
};

/** Billing's closing tool: returning a Finish ends the workflow with reason `resolved`. */
export const billingTools = {
  resolve_case: tool({
    description: 'Close the case once it is resolved.',
    inputSchema: z.object({ summary: z.string().describe('One line on what was done.') }),
    execute: ({ summary }) => Promise.resolve(finish(summary, 'resolved')),
  }),
};
