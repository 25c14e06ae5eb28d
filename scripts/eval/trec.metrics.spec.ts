import { parseRun, toRunLines } from './trec.metrics';

describe('TREC run files', () => {
  it('toRunLines - a run in the system order reads back as that order (a tie takes the next score below)', () => {
    const lines = toRunLines('q1', [{ id: 'd2', score: 0.5 }, { id: 'd1', score: 0.5 }, { id: 'd3', score: 0.2 }], 'chorus');
    expect(lines.map((l) => l.split(' ').length)).toEqual([6, 6, 6]);
    expect(parseRun(lines.join('\n')).get('q1')).toEqual(['d2', 'd1', 'd3']);
  });

  it('toRunLines - an id holding white space is refused: it would shift the columns and the run would score 0', () => {
    expect(() => toRunLines('q1', [{ id: 'doc one', score: 1 }], 'chorus')).toThrow('id "doc one" holds white space, which a TREC run file cannot');
    expect(() => toRunLines('q 1', [{ id: 'd1', score: 1 }], 'chorus')).toThrow('id "q 1" holds white space');
  });
});
