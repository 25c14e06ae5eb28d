import { connect } from '@nats-io/transport-node';

/** Messages and bytes (headers + payload) of one workflow on one kind of subject. */
export interface SubjectTraffic {
  subject: string;
  messages: number;
  bytes: number;
}

/**
 * A subject with its per-message tokens replaced by `*`: ids, sequence numbers, inbox names. What
 * is left names the kind of traffic (`chorus.wf.default.query.*`, `$JS.ACK.CHORUS_WF.intent_query.*`).
 */
export function subjectKind(subject: string): string {
  const tokens = subject.split('.');
  if (tokens[0] === '_INBOX') return '_INBOX.>';
  if (tokens[0] === '$JS' && tokens[1] === 'ACK') return `$JS.ACK.${tokens[2]}.${tokens[3]}.>`;
  return tokens.map((t) => (/\d/.test(t) && (t.length >= 8 || /^\d+$/.test(t)) ? '*' : t)).join('.');
}

/**
 * Every message one workflow puts through the server, seen by a wildcard subscriber on its own
 * connection: what clients publish (envelopes, KV writes, acks, JetStream API calls, requests and
 * replies) and what the server delivers to the pull consumers' inboxes. Run it on an otherwise idle
 * system: anything else in flight is counted too.
 */
export async function sampleTraffic(url: string, runOne: () => Promise<void>, settleMs = 300): Promise<SubjectTraffic[]> {
  const nc = await connect({ servers: [url], name: 'bench-traffic-sample', noAsyncTraces: true });
  try {
    const kinds = new Map<string, SubjectTraffic>();
    nc.subscribe('>', {
      callback: (_e, m) => {
        const kind = subjectKind(m.subject);
        const t = kinds.get(kind) ?? { subject: kind, messages: 0, bytes: 0 };
        t.messages += 1;
        t.bytes += m.data.length + headerBytes(m.headers);
        kinds.set(kind, t);
      },
    });
    await nc.flush();
    await runOne();
    await new Promise((r) => setTimeout(r, settleMs));
    return [...kinds.values()].sort((a, b) => b.bytes - a.bytes);
  } finally {
    await nc.close();
  }
}

/** Size of a NATS header block as it is framed on the wire (`NATS/1.0\r\n`, `K: V\r\n`…, `\r\n`). */
export function headerBytes(h: { keys(): string[]; values(k: string): string[] } | undefined): number {
  if (!h) return 0;
  let n = 'NATS/1.0\r\n'.length + 2;
  for (const k of h.keys()) for (const v of h.values(k)) n += k.length + 2 + Buffer.byteLength(v) + 2;
  return n;
}
