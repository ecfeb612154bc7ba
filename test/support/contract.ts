/**
 * @module
 * The response contract check: every JSON response a test receives through `api()` is validated
 * against the response schema the server's own OpenAPI description declares for that operation and
 * status (Ajv, JSON Schema 2020-12). A route whose responses drift from its declaration fails every
 * test that calls it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

type Json = Record<string, unknown>

interface Operation {
  readonly method: string
  readonly pattern: RegExp
  readonly responses: Record<string, Json>
}

export class ContractChecker {
  readonly #operations: Operation[] = []
  readonly #validators = new Map<string, ValidateFunction>()
  readonly #ajv: Ajv2020
  readonly #document: Json

  constructor(document: Json) {
    this.#document = document
    this.#ajv = new Ajv2020({ strict: false, allErrors: true })
    ;(addFormats as unknown as (ajv: Ajv2020) => void)(this.#ajv)
    const schemas = ((document['components'] as Json)['schemas'] ?? {}) as Record<string, Json>
    for (const [name, schema] of Object.entries(schemas)) this.#ajv.addSchema(schema, `#/components/schemas/${name}`)
    for (const [path, methods] of Object.entries(document['paths'] as Record<string, Record<string, Json>>)) {
      // A path parameter named lookup may contain slashes (warm query API paths).
      const pattern = new RegExp(
        `^${path
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\{lookup\}/g, '(.+)')
          .replace(/\{[^}]+\}/g, '([^/]+)')}$`,
      )
      for (const [method, op] of Object.entries(methods)) {
        this.#operations.push({ method: method.toUpperCase(), pattern, responses: (op['responses'] ?? {}) as Record<string, Json> })
      }
    }
  }

  #resolve(response: Json): Json {
    const ref = response['$ref']
    if (typeof ref !== 'string') return response
    const name = ref.split('/').pop()!
    return ((this.#document['components'] as Json)['responses'] as Record<string, Json>)[name]!
  }

  /** Throws with the schema errors when `body` does not match the declared response. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
    if (!contentType?.includes('application/json')) return
    const candidates = this.#operations.filter((o) => o.method === method && o.pattern.test(path))
    // Prefer the most specific template, as the router does: fewest parameters, then the longest.
    const params = (o: Operation) => (o.pattern.source.match(/\(/g) ?? []).length
    const operation = candidates.sort((a, b) => params(a) - params(b) || b.pattern.source.length - a.pattern.source.length)[0]
    if (!operation) return // not an operation of the description (e.g. unknown route → 404 envelope below)
    const declared = operation.responses[String(status)]
    if (!declared) throw new Error(`contract: ${method} ${path} answered ${status}, which its OpenAPI operation does not declare`)
    const content = (this.#resolve(declared)['content'] ?? {}) as Record<string, Json>
    const schema = content['application/json']?.['schema'] as Json | undefined
    if (!schema) return
    const key = `${method} ${operation.pattern.source} ${status}`
    let validate = this.#validators.get(key)
    if (!validate) {
      validate = this.#ajv.compile(schema)
      this.#validators.set(key, validate)
    }
    if (!validate(body)) {
      throw new Error(`contract: ${method} ${path} ${status} does not match its declared schema: ${this.#ajv.errorsText(validate.errors)}`)
    }
  }
}
