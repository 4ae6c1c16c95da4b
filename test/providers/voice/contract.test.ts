import t from 'tap';
import { behaviourContract, targets } from './contract.js';

for (const target of targets) {
  t.test(target.name, async (t) => {
    behaviourContract(t, target);
  });
}
