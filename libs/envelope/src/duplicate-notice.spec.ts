import { duplicateNoticeProblem, duplicateNoticeSubject } from './subjects';

describe('duplicateNoticeProblem', () => {
  const notice = { tenant_id: 'acme', message_type: 'query', correlation_id: 'wf-1', idempotency_key: 'k', agent: 'ingress', message_id: 'm', stored_seq: 3, dropped_at: '2026-12-02T07:00:00Z' };

  it('duplicateNoticeProblem - a notice published on the subject of the workflow it names is countable', () => {
    expect(duplicateNoticeProblem(notice, duplicateNoticeSubject('acme', 'query', 'wf-1'))).toBeNull();
  });

  it("duplicateNoticeProblem - another tenant's workflow than its subject names, or no workflow at all, is named", () => {
    expect(duplicateNoticeProblem(notice, duplicateNoticeSubject('globex', 'query', 'wf-1'))).toBe('it is about chorus.dup.acme.query.wf-1, but was published on chorus.dup.globex.query.wf-1');
    expect(duplicateNoticeProblem({}, 'chorus.dup.acme.query.wf-1')).toBe('tenant_id is missing or not a tenant id');
    expect(duplicateNoticeProblem(null, 'chorus.dup.acme.query.wf-1')).toBe('tenant_id is missing or not a tenant id');
    expect(duplicateNoticeProblem({ ...notice, message_type: 'nonsense' }, 'chorus.dup.acme.nonsense.wf-1')).toBe('message_type is missing or not a message type');
    expect(duplicateNoticeProblem({ ...notice, correlation_id: 'a.b' }, 'chorus.dup.acme.query.a.b')).toBe('correlation_id is missing or not a correlation id');
  });
});
