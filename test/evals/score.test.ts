import t from 'tap';
import { scoreTokens, tokenF1 } from '../../src/evals/index.js';

t.test('tokens: lower-cased letters and digits, articles dropped', async (t) => {
  t.same(scoreTokens('The Returns are FREE within 60 days, an A-grade deal!'), [
    'returns',
    'are',
    'free',
    'within',
    '60',
    'days',
    'grade',
    'deal',
  ]);
  t.same(scoreTokens('  ...  '), []);
});

t.test('token-overlap F1', async (t) => {
  t.equal(
    tokenF1('Within 60 days of delivery.', 'within 60 days of delivery'),
    1,
    'same words, case and punctuation aside',
  );
  t.equal(tokenF1('The answer is within 60 days.', 'Within 60 days'), 0.75, 'P 3/5, R 1 -> 0.75');
  t.equal(tokenF1('Sixty', 'Within 60 days'), 0, 'nothing shared');
  t.equal(tokenF1('', 'Within 60 days'), 0, 'no answer');
  t.equal(tokenF1('days days days', 'days'), 0.5, 'shared words count once per occurrence (P 1/3, R 1)');
  t.equal(tokenF1('the', 'a'), 1, 'both without words');
  const f = tokenF1('Returns are free within 60 days of delivery.', 'Within 60 days of delivery.');
  t.ok(f > 0 && f < 1);
});
