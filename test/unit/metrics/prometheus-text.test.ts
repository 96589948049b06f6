// The test helper that reads the text format keeps the labels of each histogram series, which
// parse-prometheus-text-format 1.1.1 alone merges into one sample without them.
import t from 'tap';
import { parsePrometheusText } from '../../helpers/prometheus-text.js';

t.test('a labelled histogram: one sample per series, with its labels, buckets, sum and count', async (t) => {
  const text = [
    '# HELP x h', '# TYPE x histogram',
    'x_bucket{a="1",le="0.1"} 1', 'x_bucket{a="1",le="+Inf"} 2', 'x_sum{a="1"} 3', 'x_count{a="1"} 2',
    'x_bucket{a="2",le="0.1"} 0', 'x_bucket{a="2",le="+Inf"} 1', 'x_sum{a="2"} 0.5', 'x_count{a="2"} 1',
    '# HELP y g', '# TYPE y gauge', 'y{b="c"} 7', '',
  ].join('\n');
  const [x, y] = parsePrometheusText(text);
  t.same(x!.metrics, [
    { labels: { a: '1' }, buckets: { '0.1': '1', '+Inf': '2' }, sum: '3', count: '2' },
    { labels: { a: '2' }, buckets: { '0.1': '0', '+Inf': '1' }, sum: '0.5', count: '1' },
  ]);
  t.equal(x!.type, 'HISTOGRAM');
  t.same(y, { name: 'y', help: 'g', type: 'GAUGE', metrics: [{ value: '7', labels: { b: 'c' } }] });
});

t.test('a histogram without labels', async (t) => {
  const [x] = parsePrometheusText('# HELP x h\n# TYPE x histogram\nx_bucket{le="1"} 1\nx_bucket{le="+Inf"} 1\nx_sum 0.2\nx_count 1\n');
  t.same(x!.metrics, [{ buckets: { '1': '1', '+Inf': '1' }, sum: '0.2', count: '1' }]);
});
