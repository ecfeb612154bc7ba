/**
 * @module
 * The type of a parsed JSON reply in tests. Tests read replies field by field and assert on what
 * they find, so the body is deliberately untyped: a wrong guess fails the assertion, not the compiler.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests index reply bodies freely; their assertions check the shape
export type JsonBody = any
