import { createRootLogger } from '@chorus/observability';
import { LogCapture, waitFor } from '@chorus/testing';
import { warnUnserved } from './planner.app';

describe('warnUnserved', () => {
  it('warnUnserved - a configured profile no instance serves is said once, with the running profile it most likely meant; none missing, nothing said', async () => {
    const logs = new LogCapture();
    const log = createRootLogger({ name: 'test', level: 'info', destination: logs });
    warnUnserved(['bm25', 'trigram'], ['bm25', 'trigram', 'wordvec'], log);
    warnUnserved(['bm25', 'trigam', 'custom'], ['bm25', 'trigram'], log);
    warnUnserved(['bm25'], ['bm25', 'trigram'], log, ['bm25', 'trigam']);
    await waitFor(() => logs.lines.length > 1);
    expect(logs.lines).toEqual([
      expect.objectContaining({
        level: 40,
        missing: ['trigam', 'custom'],
        msg: 'CHORUS_PROFILES names trigam (trigram?), custom, which no instance serves 30 s after the planner started (running: bm25, trigram); it is planned all the same and its lens is lost in every workflow that plans it',
      }),
      expect.objectContaining({
        level: 40,
        weighted: ['trigam'],
        msg: 'CHORUS_RRF_WEIGHTS names trigam (trigram?), which is neither configured (CHORUS_PROFILES) nor running (running: bm25, trigram): its weight applies to nothing',
      }),
    ]);
  });
});
