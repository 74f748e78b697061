import { startBridge, type Bridge, type BridgeOptions } from '@ag2net/bridge';
import { randomBytes } from 'node:crypto';
import type { SecuredStack } from './secured-stack.js';

/**
 * The bridge options of a test on a secured stack: the stack's NATS, prefix, registrant and operator credentials, a
 * free port, streams polled every 100 ms and a fresh secret; `extra` adds the people's keys, the operator key and
 * any other option (a given `secret` is shared by replicas).
 */
export function stackBridgeOptions(stack: SecuredStack, extra: BridgeOptions = {}): BridgeOptions {
  return {
    servers: stack.url,
    prefix: stack.prefix,
    registrantCreds: stack.registrantCreds,
    operatorCreds: stack.operatorCallerCreds,
    secret: randomBytes(32),
    port: 0,
    pollMs: 100,
    ...extra,
  };
}

/** A bridge on the secured stack with `stackBridgeOptions`. */
export function startStackBridge(stack: SecuredStack, extra: BridgeOptions = {}): Promise<Bridge> {
  return startBridge(stackBridgeOptions(stack, extra));
}
