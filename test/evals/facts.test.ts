import t from 'tap';
import { factScore, tokenF1 } from '../../src/evals/index.js';
import { parseGrade } from '../../src/evals/judge.js';

/**
 * The eval score tells right from wrong: ten questions, each with a right answer (often a long quote of the document,
 * as the local answer engine gives), a wrong one (another number, another name, another policy) and a partly right
 * one. Every right answer beats its wrong counterpart, on average by at least 0.3, and a partial answer lies between.
 */
interface Case {
  question: string;
  expected: string;
  right: string;
  wrong: string;
  partial: string;
}

const CASES: Case[] = [
  {
    question: 'How much does the premium plan cost?',
    expected: 'The premium plan costs 4.99 euros per month.',
    right:
      'The premium plan costs 4.99 euros per month and includes unlimited notebooks. Notes are kept in data centres ' +
      'in Frankfurt, and the support team answers emails within two days.',
    wrong: 'The premium plan costs 9.99 euros per month.',
    partial: 'The premium plan is billed in euros every month.',
  },
  {
    question: 'How long do I have to return an item?',
    expected: 'Returns are accepted within 30 days of delivery.',
    right: 'You can send it back within 30 days of delivery; returns are free.',
    wrong: 'Returns are accepted within 14 days of purchase.',
    partial: 'Returns are accepted after delivery.',
  },
  {
    question: 'Where are the notes stored?',
    expected: 'Notes are stored in data centres in Frankfurt.',
    right: 'Your notes live in our Frankfurt data centres.',
    wrong: 'Notes are stored in data centres in Virginia.',
    partial: 'Notes are kept in data centres.',
  },
  {
    question: 'Who founded the company?',
    expected: 'The company was founded by Maria Lopez in 2015.',
    right: 'Acme was founded in 2015 by Maria Lopez, who still runs it.',
    wrong: 'The company was founded by John Smith in 2009.',
    partial: 'It was started by Maria Lopez.',
  },
  {
    question: 'When is the office open?',
    expected: 'The office is open Monday to Friday from 9 to 5.',
    right: 'Office hours: Monday to Friday, nine to five. On public holidays the office is closed.',
    wrong: 'The office is open Saturday and Sunday from 10 to 2.',
    partial: 'The office is open Monday to Friday.',
  },
  {
    question: 'Is shipping free?',
    expected: 'Shipping is free on orders over 50 euros.',
    right: 'Yes: shipping is free for every order over 50 euros. Smaller orders pay a flat fee.',
    wrong: 'Returns are free within 30 days; refunds go back to the card you paid with.',
    partial: 'Shipping is free on some orders.',
  },
  {
    question: 'Can I use the app offline?',
    expected: 'Yes, notes can be edited offline and sync when you reconnect.',
    right: 'Notes can be edited offline; they sync as soon as you reconnect.',
    wrong: 'No, notes cannot be edited offline.',
    partial: 'Notes can be edited.',
  },
  {
    question: 'How many notebooks does the free plan allow?',
    expected: 'The free plan allows three notebooks.',
    right: 'On the free plan you get 3 notebooks; upgrade for unlimited notebooks.',
    wrong: 'The free plan allows ten notebooks.',
    partial: 'The free plan limits notebooks.',
  },
  {
    question: 'Which payment methods are accepted?',
    expected: 'We accept Visa, Mastercard and PayPal.',
    right: 'You can pay with Visa, Mastercard or PayPal at checkout.',
    wrong: 'We accept bank transfers and cash on delivery only.',
    partial: 'We accept Visa.',
  },
  {
    question: 'How fast does support answer?',
    expected: 'The support team answers emails within two days.',
    right: 'Support answers every email within 2 days, usually sooner.',
    wrong: 'The support team answers emails within 5 working days.',
    partial: 'The support team answers emails.',
  },
];

t.test('30 answers: right beats wrong, each and on average by 0.3; partial lies between', async (t) => {
  t.equal(CASES.length * 3, 30);
  let rightSum = 0;
  let wrongSum = 0;
  for (const c of CASES) {
    const right = factScore(c.right, c.expected, c.question);
    const wrong = factScore(c.wrong, c.expected, c.question);
    const partial = factScore(c.partial, c.expected, c.question);
    rightSum += right;
    wrongSum += wrong;
    t.ok(right > wrong, `${c.question} right ${right} > wrong ${wrong}`);
    t.ok(partial < right, `partial ${partial} < right ${right}`);
    t.ok(partial > wrong || partial === wrong, `partial ${partial} >= wrong ${wrong}`);
  }
  const gap = (rightSum - wrongSum) / CASES.length;
  t.ok(gap >= 0.3, `right answers score ${gap.toFixed(3)} higher on average`);
  t.comment(`right avg ${(rightSum / CASES.length).toFixed(3)}, wrong avg ${(wrongSum / CASES.length).toFixed(3)}`);
  // The old measure (token F1) could not: a long right quote scored below a short wrong answer.
  t.ok(tokenF1(CASES[0]!.right, CASES[0]!.expected) < tokenF1(CASES[0]!.wrong, CASES[0]!.expected));
});

t.test('facts: numbers, names and key words; a contradiction costs most of the score', async (t) => {
  t.equal(factScore('It costs 4.99.', '4.99 euros', 'What does it cost?'), 0.75, 'the number found, not the unit');
  t.equal(factScore('Four', '4'), 1, 'number words are numbers');
  t.equal(factScore('1,000 users', '1000 users'), 1, 'thousands separators');
  t.equal(factScore('', 'Within 30 days'), 0, 'no answer');
  t.equal(factScore('Within 7 days', 'Within 30 days'), 0.08, 'another number: 2/5 of the facts, x0.2');
  t.equal(factScore('Kept in Virginia.', 'Kept in Frankfurt.'), 0.0667, 'another name: 1/3 of the facts, x0.2');
  t.equal(factScore('Returns are not free.', 'Returns are free.'), 0.2, 'negated');
  t.equal(factScore('Returns are free.', 'Returns are free.'), 1);
});

t.test("the judge's grade: its first number, from 0 to 1", async (t) => {
  t.equal(parseGrade('0.8'), 0.8);
  t.equal(parseGrade('1'), 1);
  t.equal(parseGrade('Grade: 0.25.'), 0.25);
  t.equal(parseGrade('.5'), 0.5);
  t.equal(parseGrade('7'), null, 'out of range');
  t.equal(parseGrade('4.5 out of 5'), null);
  t.equal(parseGrade('Looks fine.'), null);
});
