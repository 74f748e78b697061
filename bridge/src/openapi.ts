import { z } from 'zod';
import { ErrorBodySchema } from './api-schemas.js';
import type { Route } from './route.js';

/** JSON Schema of a zod schema as an OpenAPI 3.1 document holds it (its dialect is JSON Schema 2020-12). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return rest;
}

/** The query parameters of a route, one per property of its query schema. */
function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const json = jsonSchema(schema, 'input');
  const properties = z.record(z.string(), z.unknown()).safeParse(json['properties']);
  const required = z.array(z.string()).safeParse(json['required']);
  if (!properties.success) return [];
  return Object.entries(properties.data).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.success && required.data.includes(name),
    schema: property,
  }));
}

const ERROR_RESPONSES = {
  '400': 'invalid_request',
  '401': 'auth_failed',
  '403': 'access_denied',
  '404':
    'not_found; a read of a channel whose history expired (its log, state and stream) has details `{ reason: "expired", channel_id, expired_at }`',
  '409': 'conflict',
  '413': 'invalid_request (body too large)',
  '422': 'protocol_error',
  '429': 'inbox_full, or too many requests (rate_limited)',
  '500': 'internal',
  '503': 'unavailable',
} as const;

/** The OpenAPI 3.1 document of `routes`, served at `/v1/openapi.json`. */
export function openApiDocument(routes: readonly Route[], version: string): Record<string, unknown> {
  const errorSchema = jsonSchema(ErrorBodySchema, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters = [
      ...[...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      })),
      ...(route.query === null ? [] : queryParameters(route.query)),
    ];
    const success =
      route.response === null
        ? { description: 'Server-Sent Events', content: { 'text/event-stream': { schema: { type: 'string' } } } }
        : { description: 'OK', content: { 'application/json': { schema: jsonSchema(route.response, 'output') } } };
    const errors = Object.fromEntries(
      Object.entries(ERROR_RESPONSES).map(([status, description]) => [
        status,
        { description, content: { 'application/json': { schema: errorSchema } } },
      ]),
    );
    paths[route.path] = {
      ...paths[route.path],
      [route.method.toLowerCase()]: {
        summary: route.summary,
        operationId: `${route.method.toLowerCase()} ${route.path}`,
        ...(route.access === 'open' ? { security: [] } : {}),
        'x-access': route.access,
        ...(parameters.length === 0 ? {} : { parameters }),
        ...(route.body === null
          ? {}
          : {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
              },
            }),
        responses: { [String(route.status)]: success, ...errors },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'ag2net bridge', version },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
