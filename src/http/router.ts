/**
 * Path matching for the route table. Static segments win over parameters (so
 * `/box/swap-region` is not taken for `/box/{carrier_id}`), and a path that exists under
 * another method is told apart from one that does not exist (405 versus 404).
 */
import type { AnyRoute, Method } from './route.js';

interface Node {
  statics: Map<string, Node>;
  param?: Node;
  /** Per method: the route, its parameter names in path order, and its match when it has none. */
  routes: Map<Method, { route: AnyRoute; names: string[]; found?: Match }>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NO_VALUES: string[] = [];

export type Match =
  | { kind: 'found'; route: AnyRoute; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: Method[] }
  | { kind: 'not_found' };

const newNode = (): Node => ({ statics: new Map(), routes: new Map() });

export class Router {
  private readonly root = newNode();
  /** Nodes of paths without parameters by their path: most requests are matched by one lookup. */
  private readonly exact = new Map<string, Node>();
  readonly routes: AnyRoute[] = [];

  /**
   * Adds a route; a duplicate method and path is a programming error. Parameters are matched
   * by position, and each method names its own (the spec has `POST /box/{carrier_id}` next to
   * `PATCH /box/{box_id}`).
   */
  add(route: AnyRoute): void {
    let node = this.root;
    const names: string[] = [];
    for (const segment of split(route.path)) {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        names.push(param[1]!);
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    // The same (frozen) answer for every request of a route without parameters.
    const found: Match | undefined = names.length === 0 ? Object.freeze({ kind: 'found', route, params: NO_PARAMS }) : undefined;
    node.routes.set(route.method, { route, names, found });
    if (names.length === 0) this.exact.set(`/${split(route.path).join('/')}`, node);
    this.routes.push(route);
  }

  /** Finds the route for a method and a URL path (without query). */
  match(method: string, path: string): Match {
    // A static path that has routes is what the tree would find too: statics win at each level.
    const exact = this.exact.get(path);
    const values: string[] = exact ? NO_VALUES : [];
    const node = exact ?? find(this.root, split(path), 0, values);
    if (!node || node.routes.size === 0) return { kind: 'not_found' };
    const entry = node.routes.get(method as Method) ?? (method === 'HEAD' ? node.routes.get('GET') : undefined);
    if (!entry) return { kind: 'method_not_allowed', allow: [...node.routes.keys()] };
    if (entry.found) return entry.found;
    const params: Record<string, string> = {};
    for (let i = 0; i < entry.names.length; i++) params[entry.names[i]!] = values[i]!;
    return { kind: 'found', route: entry.route, params };
  }
}

function split(path: string): string[] {
  const segments = path.split('/');
  // Leading slash gives an empty first segment; a trailing slash is not a different resource.
  return segments.filter((s, i) => i > 0 && (s !== '' || i < segments.length - 1));
}

/** The node of a path; `values` receives the parameter values in path order. */
function find(node: Node, segments: string[], i: number, values: string[]): Node | undefined {
  if (i === segments.length) return node;
  const segment = segments[i]!;
  const exact = node.statics.get(segment);
  if (exact) {
    const found = find(exact, segments, i + 1, values);
    if (found && found.routes.size > 0) return found;
  }
  if (node.param && segment !== '') {
    const depth = values.length;
    values.push(safeDecode(segment));
    const found = find(node.param, segments, i + 1, values);
    if (found && found.routes.size > 0) return found;
    values.length = depth;
  }
  return undefined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
