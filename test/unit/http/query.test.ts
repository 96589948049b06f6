// Query strings: repeated keys, commas kept, + and % decoding, conversion to schema types.
import t from 'tap';
import fc from 'fast-check';
import Type from 'typebox';
import { coerceQuery, parseQuery } from '../../../src/http/query.js';

t.test('repeated keys, commas, escapes', async (t) => {
  t.strictSame({ ...parseQuery('a=1&b=2&b=3&c=x,y&d&=e') }, { a: '1', b: ['2', '3'], c: 'x,y', d: '', '': 'e' });
  t.strictSame({ ...parseQuery('q=red+apple&n=%C3%A9t%C3%A9&k%20x=1&bad=50%&mixed=%41%zz') }, { q: 'red apple', n: 'été', 'k x': '1', bad: '50%', mixed: '%41%zz' });
  t.strictSame({ ...parseQuery('') }, {});
});

t.test('property: skipping decodeURIComponent when there is no % changes nothing', async (t) => {
  // What decode did before it learnt the shortcut: always decodeURIComponent, a stray % literal.
  const reference = (qs: string) => {
    const decode = (s: string) => {
      const plus = s.replace(/\+/g, ' ');
      try {
        return decodeURIComponent(plus);
      } catch {
        return plus;
      }
    };
    const out: Record<string, string | string[]> = {};
    for (const pair of qs.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const key = decode(eq === -1 ? pair : pair.slice(0, eq));
      const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
      const prev = out[key];
      out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
    return out;
  };
  const part = fc.stringMatching(/^[a-z0-9_+%,.~\-]{0,8}$/).map((s) => s.replace(/%(?=[0-9a-f]{2})/, '%2'));
  const qs = fc.array(fc.tuple(part, fc.option(part, { nil: undefined })), { maxLength: 6 })
    .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&'));
  fc.assert(fc.property(qs, (q) => {
    const got = { ...parseQuery(q) };
    return JSON.stringify(got) === JSON.stringify(reference(q));
  }), { numRuns: 2000 });
  t.pass('2000 query strings');
});

t.test('values are converted to the schema types', async (t) => {
  const schema = Type.Object({ n: Type.Integer(), f: Type.Number(), b: Type.Boolean(), list: Type.Array(Type.Integer()), s: Type.String() });
  t.strictSame(coerceQuery(parseQuery('n=4&f=1.5&b=true&list=1&list=2&s=7&other=x'), schema), { n: 4, f: 1.5, b: true, list: [1, 2], s: '7' }, 'undeclared parameters are dropped');
  const hostile = coerceQuery(parseQuery('__proto__=a&__proto__=b&constructor=x&n=1'), schema);
  t.equal(Object.getPrototypeOf(hostile), Object.prototype, '__proto__ cannot change the prototype');
  t.strictSame(hostile, { n: 1 });
  t.strictSame(coerceQuery(parseQuery('n=abc&n=5'), schema), { n: 5 }, 'the last of a repeated scalar wins');
  t.strictSame(coerceQuery(parseQuery('n=4.5'), schema), { n: '4.5' }, 'left as it is for the validator to refuse');
});
