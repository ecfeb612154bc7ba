/**
 * @module
 * Builds the OpenAPI 3.1 description from the route registry, listing exactly the operations the
 * caller's effective rights permit (spec 4.4, 5.7). Schemas are JSON Schema 2020-12 generated from
 * the same zod declarations that validate requests.
 */
import { z } from 'zod'
import type { Caller } from '../domain/access/index.js'
import { type AnyRoute, missingRights } from './route-registry.js'

type JsonSchema = Record<string, unknown>

const ERROR_STATUSES: Readonly<Record<number, string>> = {
  400: 'Invalid input (the message says which field and why).',
  401: 'Missing or invalid bearer token.',
  403: 'The token lacks a right or scope this operation needs.',
  404: 'Not found.',
  500: 'Server error (the message carries a correlation id for the log).',
  503: 'Capability not provisioned (switched off in the workspace settings or lacking its service).',
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema
  delete out['$schema']
  return out
}

function parametersOf(schema: z.ZodType | undefined, location: 'path' | 'query', wildcardName?: string): JsonSchema[] {
  if (!schema) return []
  const object = jsonSchema(schema, 'input')
  const properties = (object['properties'] ?? {}) as Record<string, JsonSchema>
  const required = new Set((object['required'] ?? []) as string[])
  return Object.entries(properties).map(([key, property]) => {
    // A Fastify wildcard (`*`) is documented under the template's last parameter name.
    const name = key === '*' && wildcardName ? wildcardName : key
    const { description, ...rest } = property
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema: rest,
    }
  })
}

function operation(route: AnyRoute): JsonSchema {
  const responses: Record<string, JsonSchema> = {}
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.schema || response.contentType
        ? {
            content: {
              [response.contentType ?? 'application/json']: { schema: response.schema ? jsonSchema(response.schema, 'output') : {} },
            },
          }
        : {}),
    }
  }
  for (const status of [400, 401, 403, 404, 500, 503]) {
    responses[String(status)] ??= { $ref: `#/components/responses/Error${status}` }
  }
  const rightsNote = route.rights.length
    ? `\n\nRequires the right${route.rights.length > 1 ? 's' : ''} ${route.rights.map((r) => `\`${r}\``).join(', ')}.`
    : ''
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description ?? route.summary}${rightsNote}`,
    tags: [route.tag],
    ...(route.deprecated ? { deprecated: true } : {}),
    parameters: [
      ...parametersOf(route.params, 'path', route.openapiPath?.match(/\{([^}]+)\}$/)?.[1]),
      ...parametersOf(route.query, 'query'),
    ],
    ...(route.body
      ? {
          requestBody: {
            required: !route.body.safeParse(undefined).success,
            content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
          },
        }
      : route.rawBody
        ? {
            requestBody: {
              required: true,
              description: route.rawBody.description,
              content: Object.fromEntries(
                route.rawBody.contentTypes.map((type) => [
                  type,
                  {
                    schema:
                      type.includes('json') && !type.includes('ndjson') ? jsonSchema(route.rawBody!.schema, 'input') : { type: 'string' },
                  },
                ]),
              ),
            },
          }
        : {}),
    responses,
    'x-required-rights': route.rights,
  }
}

export interface OpenApiInfo {
  readonly version: string
  readonly serverUrl: string
}

export function buildOpenApiDocument(routes: readonly AnyRoute[], caller: Caller, info: OpenApiInfo): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {}
  const tags = new Set<string>()
  for (const route of routes) {
    if (missingRights(caller, route.rights).length > 0) continue
    const path = `/oi-api${(route.openapiPath ?? route.path).replace(/:([A-Za-z_]+)/g, '{$1}')}`
    paths[path] ??= {}
    paths[path][route.method.toLowerCase()] = operation(route)
    tags.add(route.tag)
  }
  const errorResponses: Record<string, JsonSchema> = {}
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    errorResponses[`Error${status}`] = {
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Workspace Data Query and Change-History API (Provenant)',
      version: info.version,
      description: `The operations this token may call in workspace ${caller.workspaceId}. Every call needs \`Authorization: Bearer <token>\`; tokens are created and revoked in the portal (API Keys).`,
    },
    servers: [{ url: info.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['HasError', 'Messages'],
          properties: {
            HasError: { type: 'boolean', const: true },
            Messages: { type: 'object', required: ['Error'], properties: { Error: { type: 'string' } } },
          },
        },
      },
      responses: errorResponses,
    },
  }
}
