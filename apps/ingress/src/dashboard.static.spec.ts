import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { dashboardDir } from './dashboard.static';

const ROOT = join(__dirname, '..', '..', '..');

/** The destinations of the COPY lines of the Dockerfile's last stage (the image that runs). */
function runtimeCopies(dockerfile: string): string[] {
  const stages = dockerfile.split(/^FROM /m);
  const last = stages[stages.length - 1];
  return last
    .split('\n')
    .filter((l) => /^COPY /.test(l))
    .flatMap((l) => {
      const args = l.replace(/^COPY\s+(--\S+\s+)*/, '').trim().split(/\s+/);
      const [dest, ...sources] = args.reverse();
      return dest === './' ? sources : [dest];
    });
}

describe('infra/Dockerfile', () => {
  it('the image that runs holds what the apps read at run time: the dashboard (GET / was a 404 under docker compose), the default corpus, the build', () => {
    const copied = runtimeCopies(readFileSync(join(ROOT, 'infra', 'Dockerfile'), 'utf8'));
    const wanted = [relative(ROOT, dashboardDir(ROOT)), 'README.md', 'docs', 'dist', 'node_modules', 'package.json'];
    expect(wanted.filter((path) => !copied.includes(path))).toEqual([]);
  });
});
