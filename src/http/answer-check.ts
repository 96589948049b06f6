/**
 * The check of every answer against its route's documented response schema, which the tests
 * turn on (`checkResponses`): an answer the OpenAPI document does not describe fails the test
 * that provoked it instead of reaching a client. Off, nothing here runs.
 */
import type { TSchema } from 'typebox';
import type { AnyRoute, JsonReply } from './route.js';
import { compile, type Validator } from './validation.js';

/** The validators of a route's JSON answers by status (answers of another content type are not checked). */
export function answerChecks(route: AnyRoute): Map<number, Validator> {
  const checks = new Map<number, Validator>();
  for (const [status, spec] of Object.entries(route.responses)) {
    const schema = 'contentType' in spec ? spec.schema : (spec as TSchema);
    if (schema && !('contentType' in spec)) checks.set(Number(status), compile(schema));
  }
  return checks;
}

/** Throws unless the answer's value fits the schema. */
export function checkAnswer(route: AnyRoute, check: Validator, value: unknown): void {
  if (!check.check(value)) {
    throw new Error(`response of ${route.method} ${route.path} does not match its schema: ${JSON.stringify(check.issues(value, 'response').slice(0, 5))}`);
  }
}

/** The check of an answer serialized by its handler: the same bytes as from its value, and the schema. */
export function checkJsonReply(route: AnyRoute, check: Validator, reply: JsonReply): void {
  if (reply.fresh) {
    const expected = JSON.stringify(reply.fresh() ?? null);
    if (reply.json !== expected) {
      let at = 0;
      while (reply.json.charCodeAt(at) === expected.charCodeAt(at)) at++;
      throw new Error(`response of ${route.method} ${route.path} differs from JSON.stringify of its value from character ${at}: ${reply.json.slice(Math.max(0, at - 40), at + 40)} | expected ${expected.slice(Math.max(0, at - 40), at + 40)}`);
    }
  }
  checkAnswer(route, check, JSON.parse(reply.json));
}
