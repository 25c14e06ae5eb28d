import { startProfileService, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { ProfileDocument } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { PROFILE_ENGINES, isProfileEngineName, type Document, type SearchEngine } from '@chorus/profiles';
import { loadCorpus } from './corpus.loader';

const VERSION = '0.1.0';

/**
 * Profile workers: one NATS service per configured profile, each over the same corpus. Replicas
 * of a profile (this app started again) share its queue group.
 */
export async function startProfiles(bus: Bus, config: ChorusConfig, parentLog: Logger, names = config.profiles): Promise<Component> {
  const unknown = names.filter((n) => !isProfileEngineName(n));
  if (unknown.length > 0) {
    throw new Error(`no search engine for profile(s) ${unknown.join(', ')}; known: ${Object.keys(PROFILE_ENGINES).join(', ')}`);
  }
  const started = Date.now();
  const corpus = loadCorpus(config.corpusPath, config.root);
  const byId = new Map(corpus.documents.map((d) => [d.id, d]));
  const services: Array<{ stop(): Promise<void> }> = [];
  for (const name of names) {
    const log = parentLog.child({ agent: `profile-${name}` });
    const t0 = Date.now();
    const engine: SearchEngine = PROFILE_ENGINES[name as keyof typeof PROFILE_ENGINES](corpus.documents);
    log.info({ documents: engine.size, build_ms: Date.now() - t0, corpus: corpus.source }, `profile ${name} indexed`);
    services.push(
      await startProfileService(
        bus,
        {
          name,
          version: VERSION,
          description: engine.description,
          metadata: { corpus: corpus.source, documents: String(engine.size) },
          search: (req) => {
            const t = performance.now();
            const hits = engine.search(String(req.text ?? ''), Math.max(1, Math.min(10_000, Number(req.limit) || 10)));
            return { profile: name, hits, corpus_size: engine.size, took_ms: performance.now() - t };
          },
          documents: (req) => ({
            documents: (Array.isArray(req.ids) ? req.ids : [])
              .map((id) => byId.get(String(id)))
              .filter((d): d is Document => d !== undefined)
              .map((d) => truncate(d, req.max_chars)),
          }),
        },
        log,
      ),
    );
  }
  parentLog.info({ profiles: names, ms: Date.now() - started }, 'profiles serving');
  return {
    name: `profiles(${names.join(',')})`,
    close: async () => {
      await Promise.all(services.map((s) => s.stop()));
    },
  };
}

function truncate(d: Document, maxChars: number | undefined): ProfileDocument {
  if (!maxChars || d.text.length <= maxChars) return { id: d.id, title: d.title, text: d.text };
  return { id: d.id, title: d.title, text: d.text.slice(0, maxChars) };
}
