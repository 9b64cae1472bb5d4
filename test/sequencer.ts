/**
 * The order test files start in: longest first, so that the two workers end together. A long
 * file started last runs on alone while the other worker waits for nothing; started first, the
 * short ones fill in around it. vitest orders by the durations of the last run on this machine
 * (its cache); a fresh clone (CI) has none and would go by file size, which says little (a
 * short file that starts three servers outlasts a long file of unit tests). So the durations of
 * a measured run are kept in test/durations.json, in seconds, and used where the cache has none.
 * A file in neither starts first (it may be long), the larger of two such first, as vitest does.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const MEASURED: Record<string, number> = JSON.parse(readFileSync(join(import.meta.dirname, 'durations.json'), 'utf8')) as Record<string, number>;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification): number => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      if (cached) return cached.duration / 1000;
      return MEASURED[relative(spec.project.config.root, spec.moduleId).split('\\').join('/')] ?? Number.POSITIVE_INFINITY;
    };
    const size = (spec: TestSpecification): number => statSync(spec.moduleId).size;
    const key = new Map(files.map((spec) => [spec, { seconds: seconds(spec), size: size(spec) }]));
    return [...files].sort((a, b) => {
      const [x, y] = [key.get(a), key.get(b)];
      if (!x || !y) return 0;
      return x.seconds === y.seconds ? y.size - x.size : y.seconds - x.seconds;
    });
  }
}
