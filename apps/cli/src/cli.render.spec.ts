import type { StoredDeadLetter } from '@chorus/bus';
import type { HistoryReply } from '@chorus/envelope';
import { renderDeadLetters, renderHistory } from './cli.render';

describe('CLI rendering of what the stream stored', () => {
  it('renderHistory - an entry that is not an object (junk published on a workflow subject) is a line of question marks, not a crash', () => {
    const history = { correlation_id: 'abc', envelopes: [{ timestamp: '2026-12-02T10:00:00.000Z', message_type: 'query', agent: 'cli', status: 'pending', message_id: 'm1', causation_id: null }, null, [], 5] } as unknown as HistoryReply;
    const lines = renderHistory(history).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^2026-12-02T10:00:00.000Z {2}query/);
    expect(lines[1]).toMatch(/^\? {2}undefined/);
  });

  it('renderDeadLetters - an unreadable message, or a letter of another shape, on a dead-letter subject is listed, not a crash', () => {
    const letters = [
      { dlq_seq: 3, dlq_subject: 'chorus.dlq.default.query', unreadable: 'not a dead letter: Unexpected token', data: '{x', data_encoding: 'utf8' },
      { reason: 'step_failed', error: null, dlq_seq: 4 },
      { reason: 5, errors: 'x', subject: { a: 1 }, dlq_seq: 5 },
      { reason: 'invalid_envelope', errors: [{ field: { x: 1 }, messages: 'notarray' }, null, 5], dlq_seq: 6 },
      { dlq_seq: 7 },
    ] as unknown as StoredDeadLetter[];
    const text = renderDeadLetters(letters);
    expect(text).toContain('chorus.dlq.default.query  (dead-letter stream seq 3)\n    not a dead letter: Unexpected token');
    expect(text).toContain('step_failed');
    expect(text).toContain('    notarray'.trim());
  });
});
