/** A uniform float in [0, 1) from the simulator's seeded generator, so a failing run can be replayed from its seed. */
import { Random } from '../../src/sim/random.js';

export function seeded(seed: number): () => number {
  const r = new Random(seed);
  return () => r.next();
}
