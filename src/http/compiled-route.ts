/**
 * What the request pipeline needs of a route, worked out once when the route is registered:
 * its validators, its success status, how its body is taken.
 */
import { answerChecks } from './answer-check.js';
import { planMultipart, type MultipartPlan } from './multipart.js';
import { bodyOptional, isMultipart, successStatus, type AnyRoute } from './route.js';
import { compile, type Validator } from './validation.js';

export interface CompiledRoute {
  route: AnyRoute;
  status: number;
  params?: Validator;
  query?: Validator;
  /** The query takes `field__op` filters: an unknown one is refused, not ignored. */
  filters: boolean;
  /** The JSON body's validator (a multipart body is checked while parsed). */
  body?: Validator;
  /** No field of the body is required: an empty body means the defaults. */
  bodyOptional: boolean;
  multipart?: MultipartPlan;
  /** Response validators by status; empty unless answers are checked. */
  responses: Map<number, Validator>;
}

export function compileRoute(route: AnyRoute, checkResponses: boolean): CompiledRoute {
  return {
    route,
    status: successStatus(route),
    params: route.params ? compile(route.params) : undefined,
    query: route.query ? compile(route.query) : undefined,
    bodyOptional: bodyOptional(route.body),
    filters: route.query !== undefined && Object.keys(route.query.properties).some((name) => name.includes('__')),
    body: route.body && !isMultipart(route.body) ? compile(route.body) : undefined,
    multipart: isMultipart(route.body) ? planMultipart(route.body.multipart) : undefined,
    responses: checkResponses ? answerChecks(route) : new Map(),
  };
}
