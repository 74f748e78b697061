import { InternalError, NotFoundError, RETRYABLE_ERROR_CODES, UnavailableError } from '@ag2net/protocol';
import { toNetworkError } from '@ag2net/protocol/internal';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { JetStreamStatusError, jserrors } from '@nats-io/jetstream/internal';
import { errors } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../base/logger.js';
import { natsOutageOf, unavailableOnNatsOutage } from './errors.js';

/** A logger that keeps what it was told, level first. */
function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      lines.push(`${level} ${msg ?? ''} ${JSON.stringify({ ...obj, err: undefined })}`);
    };
  const logger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

const timeout = () => new errors.TimeoutError();
const noResponders = () => new errors.RequestError('no responders', { cause: new errors.NoRespondersError('x.y') });
const apiError = (code: number, errCode: number) =>
  new JetStreamApiError({ code, err_code: errCode, description: `status ${code}` });
/** What nats.js throws for no responders on a `$JS.API` subject. */
const jetStreamNoResponders = () =>
  new jserrors.JetStreamNotEnabled('jetstream is not enabled', { cause: noResponders() });

describe('natsOutageOf', () => {
  it('names every passing NATS failure, judging wrappers by what they wrap', () => {
    const cases: [string, unknown][] = [
      ['timeout', timeout()],
      ['request timeout', new errors.RequestError('timeout', { cause: timeout() })],
      ['request no responders', noResponders()],
      ['no responders', new errors.NoRespondersError('x.y')],
      ['disconnected', new errors.RequestError('connection disconnected')],
      ['closed', new errors.ClosedConnectionError()],
      ['draining', new errors.DrainingConnectionError()],
      ['js 503', apiError(503, 10008)],
      ['js no responders', jetStreamNoResponders()],
      ['pull 408', new JetStreamStatusError('Request Timeout', 408)],
      ['pull 503', new JetStreamStatusError('No Responders', 503)],
      ['wrapped timeout', new Error('kv get failed', { cause: timeout() })],
    ];
    expect(cases.map(([what, err]) => [what, natsOutageOf(err)?.kind])).toEqual([
      ['timeout', 'unanswered'],
      ['request timeout', 'unanswered'],
      ['request no responders', 'unsent'],
      ['no responders', 'unsent'],
      ['disconnected', 'unanswered'],
      ['closed', 'unsent'],
      ['draining', 'unsent'],
      ['js 503', 'unsent'],
      ['js no responders', 'unsent'],
      ['pull 408', 'unanswered'],
      ['pull 503', 'unsent'],
      ['wrapped timeout', 'unanswered'],
    ]);
  });

  it('names nothing else an outage: refusals, permissions, missing streams, bugs', () => {
    const others: unknown[] = [
      new errors.RequestError('Permissions Violation', {
        cause: new errors.PermissionViolationError('Permissions Violation', 'publish', 'x.y'),
      }),
      apiError(404, JetStreamApiCodes.StreamNotFound),
      apiError(400, JetStreamApiCodes.StreamWrongLastSequence),
      new jserrors.JetStreamNotEnabled('jetstream not enabled for account', {
        cause: apiError(503, JetStreamApiCodes.JetStreamNotEnabledForAccount),
      }),
      new JetStreamStatusError('Conflict', 409),
      new TypeError('undefined is not a function'),
      new InternalError('timeout', { cause: timeout() }),
      'timeout',
      null,
    ];
    expect(others.map(natsOutageOf)).toEqual(others.map(() => null));
  });
});

describe('unavailableOnNatsOutage', () => {
  it('answers a nats.js TimeoutError thrown in a handler with a retryable unavailable naming the op, and warns once', () => {
    const logger = recordingLogger();
    const answer = toNetworkError(unavailableOnNatsOutage(timeout(), { op: 'getTask', logger }));
    expect(answer).toBeInstanceOf(UnavailableError);
    expect(answer.toWire()).toEqual({
      code: 'unavailable',
      message: 'getTask could not be served now: a NATS request timed out; retry',
    });
    expect(RETRYABLE_ERROR_CODES).toContain(answer.code);
    expect(logger.lines).toEqual([
      'warn rpc answered unavailable {"op":"getTask","reason":"a NATS request timed out"}',
    ]);
    // The boundary applies it again to what it returned: nothing changes and nothing more is logged.
    expect(unavailableOnNatsOutage(answer, { op: 'getTask', logger })).toBe(answer);
    expect(logger.lines).toHaveLength(1);
  });

  it('answers an op that is not idempotent unavailable, marked may_have_applied unless NATS provably did nothing', () => {
    const context = { op: 'fireTaskEvent', logger: silentLogger } as const;
    expect(toNetworkError(unavailableOnNatsOutage(noResponders(), context)).toWire()).toEqual({
      code: 'unavailable',
      message: 'fireTaskEvent could not be served now: NATS had no responder; retry',
    });
    expect(toNetworkError(unavailableOnNatsOutage(timeout(), context)).toWire()).toEqual({
      code: 'unavailable',
      message: 'fireTaskEvent could not be completed: a NATS request timed out, and it may have been applied',
      details: { reason: 'may_have_applied' },
    });
  });

  it('leaves network errors and everything that is no outage as they are', () => {
    const context = { op: 'readWal', logger: silentLogger } as const;
    const refusal = new NotFoundError('channel not found: c');
    const bug = new TypeError('x is undefined');
    expect(unavailableOnNatsOutage(refusal, context)).toBe(refusal);
    expect(unavailableOnNatsOutage(bug, context)).toBe(bug);
    expect(unavailableOnNatsOutage('text', context)).toBe('text');
  });
});
