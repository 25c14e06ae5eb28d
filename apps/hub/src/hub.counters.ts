import type { Transition } from '@chorus/correlation';
import type { WorkflowStatus } from '@chorus/envelope';

/** What this hub process has recorded since it started. */
export class HubCounters {
  envelopes = 0;
  duplicatesDropped = 0;
  lateEnvelopes = 0;
  redeliveries = 0;
  readonly finished: Record<WorkflowStatus, number> = { pending: 0, running: 0, completed: 0, failed: 0, timed_out: 0, cancelled: 0 };

  record(t: Transition): void {
    switch (t.effect) {
      case 'duplicate':
        this.duplicatesDropped += 1;
        return;
      case 'redelivered':
        this.redeliveries += 1;
        return;
      case 'late':
        this.lateEnvelopes += 1;
        this.envelopes += 1;
        return;
      default:
        this.envelopes += t.effect === 'applied' || t.effect === 'recorded' ? 1 : 0;
        for (const change of t.emits) this.finished[change.status] += 1;
    }
  }
}
