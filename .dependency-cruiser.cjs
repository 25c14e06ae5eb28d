/**
 * The dependency rules of Chorus (docs/architecture.md, "Dependency rules"), checked in CI:
 * `npm run lint:deps`.
 */
const PURE_LIBS = '^libs/(envelope|correlation|fusion|profiles)/';

module.exports = {
  forbidden: [
    {
      name: 'no-app-to-app',
      comment: 'Apps depend on libs, never on each other. apps/chorus (npm start) is the one composition root over them.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/', pathNot: ['^apps/chorus/'] },
      to: { path: '^apps/([^/]+)/', pathNot: '^apps/$1/' },
    },
    {
      name: 'no-lib-to-app',
      comment: 'Libraries never import applications.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'nats-only-in-bus',
      comment: 'libs/bus is the one seam to NATS (and libs/testing, which starts servers).',
      severity: 'error',
      from: { pathNot: '^libs/(bus|testing)/' },
      to: { path: 'node_modules/@nats-io/' },
    },
    {
      name: 'pure-libs-stay-pure',
      comment: 'envelope, correlation, fusion and profiles import no transport and no Nest runtime.',
      severity: 'error',
      from: { path: PURE_LIBS },
      to: { path: ['node_modules/@nats-io/', 'node_modules/@nestjs/', '^libs/(bus|testing|config|observability)/'] },
    },
    {
      name: 'no-deep-lib-imports',
      comment: "Another lib is used through its one public entry, src/index.ts.",
      severity: 'error',
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { path: '^libs/([^/]+)/src/', pathNot: ['^libs/([^/]+)/src/index\\.ts$', '^libs/$2/'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^dist/|\\.spec\\.ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
