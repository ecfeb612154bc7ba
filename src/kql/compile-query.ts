/**
 * @module
 * compileQuery(): parse, bind, plan and generate SQL for one query text.
 */
import type { CompiledQuery, CompileOptions } from './engine-types.js'
import { KqlError } from './kql-error.js'
import type { KqlSchema } from './schema.js'

/**
 * Compiles a KQL query against a schema. MUST throw KqlError (never another error) for any text
 * that is not a valid, supported query; the message carries line and column.
 */
export function compileQuery(text: string, schema: KqlSchema, options: CompileOptions): CompiledQuery {
  void text
  void schema
  void options
  throw new KqlError('unsupported', 'the KQL engine is not built yet')
}
