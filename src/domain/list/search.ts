/**
 * The `search` language of spec 4.0.1: `field:value` terms, partial and case-insensitive,
 * joined by uppercase AND / OR (AND binds tighter), one level of parentheses, `*:value` for
 * every searchable field. A value may be double-quoted to hold spaces, colons or parentheses;
 * a bare word is `*:word`. Lowercase and/or are ordinary words.
 */
import { ValidationError } from '../errors.js';
import type { FieldTable, SearchNode } from './fields.js';

type Token = { kind: '(' | ')' | 'AND' | 'OR' } | { kind: 'word'; text: string; quoted: boolean };

const fail = (msg: string): never => {
  throw ValidationError.of(['query', 'search'], msg);
};

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '(' || ch === ')') {
      tokens.push({ kind: ch });
      i++;
    } else {
      let text = '';
      let quoted = false;
      while (i < input.length && !/[\s()]/.test(input[i]!)) {
        if (input[i] === '"') {
          const end = input.indexOf('"', i + 1);
          if (end === -1) fail('Unclosed double quote');
          text += input.slice(i + 1, end);
          quoted = true;
          i = end + 1;
        } else {
          text += input[i++];
        }
      }
      if (!quoted && (text === 'AND' || text === 'OR')) tokens.push({ kind: text });
      else tokens.push({ kind: 'word', text, quoted });
    }
  }
  return tokens;
}

/** Parses a search expression against a field table; throws a ValidationError on `search`. */
export function parseSearch<T>(input: string, table: FieldTable<T>): SearchNode {
  const searchable = Object.keys(table).filter((name) => table[name]!.search);
  const tokens = tokenize(input);
  if (tokens.length === 0) fail('Empty search expression');
  let pos = 0;
  let depth = 0;

  const term = (t: Token): SearchNode => {
    if (t.kind !== 'word') return fail(`Expected a term, found ${t.kind}`);
    const colon = t.text.indexOf(':');
    const field = colon === -1 ? '*' : t.text.slice(0, colon);
    const needle = (colon === -1 ? t.text : t.text.slice(colon + 1)).toLowerCase();
    if (needle === '') fail(`Empty value in term ${JSON.stringify(t.text)}`);
    if (field === '*') return { kind: 'term', fields: searchable, needle, all: true };
    if (!table[field]?.search) fail(`Cannot search field ${JSON.stringify(field)}; searchable: ${searchable.join(', ')}`);
    return { kind: 'term', fields: [field], needle };
  };

  const factor = (): SearchNode => {
    const t = tokens[pos++];
    if (!t) return fail('Expression ends after an operator');
    if (t.kind === '(') {
      if (depth > 0) fail('Only one level of parentheses is allowed');
      depth++;
      const inner = expression();
      if (tokens[pos++]?.kind !== ')') fail('Missing closing parenthesis');
      depth--;
      return inner;
    }
    return term(t);
  };

  const conjunction = (): SearchNode => {
    const items = [factor()];
    while (tokens[pos]?.kind === 'AND') {
      pos++;
      items.push(factor());
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  };

  const expression = (): SearchNode => {
    const items = [conjunction()];
    while (tokens[pos]?.kind === 'OR') {
      pos++;
      items.push(conjunction());
    }
    return items.length === 1 ? items[0]! : { kind: 'or', items };
  };

  const tree = expression();
  if (pos < tokens.length) {
    const t = tokens[pos]!;
    fail(t.kind === ')' ? 'Unbalanced closing parenthesis' : `Expected AND or OR before ${t.kind === 'word' ? JSON.stringify(t.text) : t.kind}`);
  }
  return tree;
}
