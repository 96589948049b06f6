/**
 * Path matching for the route table. Static segments win over parameters (so
 * `/box/swap-region` is not taken for `/box/{carrier_id}`), and a path that exists under
 * another method is told apart from one that does not exist (405 versus 404).
 */
import type { AnyRoute, Method } from './route.js';

interface Node {
  statics: Map<string, Node>;
  param?: { name: string; node: Node };
  routes: Map<Method, AnyRoute>;
}

export type Match =
  | { kind: 'found'; route: AnyRoute; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: Method[] }
  | { kind: 'not_found' };

const newNode = (): Node => ({ statics: new Map(), routes: new Map() });

export class Router {
  private readonly root = newNode();
  readonly routes: AnyRoute[] = [];

  /** Adds a route; a duplicate method and path, or clashing parameter names, is a programming error. */
  add(route: AnyRoute): void {
    let node = this.root;
    for (const segment of split(route.path)) {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        const name = param[1]!;
        if (node.param && node.param.name !== name) {
          throw new Error(`${route.path}: parameter {${name}} clashes with {${node.param.name}} at the same position`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    node.routes.set(route.method, route);
    this.routes.push(route);
  }

  /** Finds the route for a method and a URL path (without query). */
  match(method: string, path: string): Match {
    const params: Record<string, string> = {};
    const node = find(this.root, split(path), 0, params);
    if (!node || node.routes.size === 0) return { kind: 'not_found' };
    const route = node.routes.get(method as Method) ?? (method === 'HEAD' ? node.routes.get('GET') : undefined);
    if (!route) return { kind: 'method_not_allowed', allow: [...node.routes.keys()] };
    return { kind: 'found', route, params };
  }
}

function split(path: string): string[] {
  const segments = path.split('/');
  // Leading slash gives an empty first segment; a trailing slash is not a different resource.
  return segments.filter((s, i) => i > 0 && (s !== '' || i < segments.length - 1));
}

function find(node: Node, segments: string[], i: number, params: Record<string, string>): Node | undefined {
  if (i === segments.length) return node;
  const segment = segments[i]!;
  const exact = node.statics.get(segment);
  if (exact) {
    const found = find(exact, segments, i + 1, params);
    if (found && found.routes.size > 0) return found;
  }
  if (node.param && segment !== '') {
    const found = find(node.param.node, segments, i + 1, params);
    if (found && found.routes.size > 0) {
      params[node.param.name] = safeDecode(segment);
      return found;
    }
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
