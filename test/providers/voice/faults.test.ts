import t from 'tap';
import { targets } from './contract.js';
import { faultContract } from './fault-contract.js';

for (const target of targets) {
  t.test(target.name, async (t) => {
    faultContract(t, target);
  });
}
