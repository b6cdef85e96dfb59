/**
 * Seeded randomness for the fault-injection suite: every random choice of a scenario (when to kill, how long to
 * stay down, which fault next) comes from one of these, so a failing run is repeated with `FAULT_SEED=<seed>`.
 * The generator is mulberry32: small, fast and good enough to spread faults; not for anything secret.
 */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** The seed of this run: `FAULT_SEED` when set (a failing run's seed, to repeat it), else a fresh one. */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.FAULT_SEED;
  if (given !== undefined && given.trim() !== "") {
    const seed = Number(given);
    if (!Number.isInteger(seed) || seed < 0)
      throw new Error(`FAULT_SEED must be a non-negative integer, not "${given}"`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/**
 * The random stream of one scenario: the run's seed mixed with the scenario's name (so scenarios do not share
 * choices and adding one does not change the others). Prints the seed, which is what reproduces a failure.
 */
export function scenarioRandom(scenario: string, seed = runSeed()): SeededRandom {
  let h = seed >>> 0;
  for (let i = 0; i < scenario.length; i++) h = Math.imul(h ^ scenario.charCodeAt(i), 2654435761) >>> 0;
  console.log(`[fault] ${scenario}: seed ${seed} (repeat with FAULT_SEED=${seed})`);
  return new SeededRandom(h);
}
