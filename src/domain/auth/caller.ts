/** Who is calling: resolved from the request's credentials before any handler runs. */
export interface Caller {
  kind: 'anonymous' | 'user' | 'api_key';
  /** User id, or API key id. */
  id?: number;
  /** Permission keys held, composites expanded. */
  permissions: ReadonlySet<string>;
  /** Roles and users at or above this level are out of the caller's reach. */
  authorityLevel: number;
  /** For an API key: the user whose authority bounds it (null for a key made before owners were kept). */
  owner?: number | null;
}

/** How events name a caller: never a secret, only kind and id. */
export function who(caller: Caller): string {
  return caller.kind === 'anonymous' ? 'an anonymous caller' : `${caller.kind === 'user' ? 'user' : 'API key'} ${caller.id}`;
}
