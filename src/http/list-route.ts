/**
 * A list endpoint in one declaration: the query schema comes from the field table, the list
 * engine does the work, and `view` turns each row into its response item.
 */
import type { TSchema } from 'typebox';
import { executeList, listQuerySchema, parseListQuery, type FieldTable, type ListOptions, type ListSource } from '../domain/list/index.js';
import { route, type AnyRoute } from './route.js';
import { Page } from './schemas/common.js';

export interface ListRouteSpec<T> {
  path: string;
  tag: string;
  summary: string;
  description?: string;
  permission: string;
  fields: FieldTable<T>;
  source: ListSource<T>;
  item: TSchema;
  view(row: T): unknown;
  options: ListOptions;
}

/** Declares `GET path` answering the paginated envelope of `item`. */
export function listRoute<T>(spec: ListRouteSpec<T>): AnyRoute {
  const { fields, source, options, view } = spec;
  return route({
    method: 'GET', path: spec.path, tag: spec.tag, permission: spec.permission, summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    query: listQuerySchema(fields, options),
    responses: { 200: Page(spec.item) },
    handler: ({ query }) => {
      const page = executeList(fields, source, parseListQuery(fields, query, options));
      return { ...page, items: page.items.map(view) };
    },
  });
}
