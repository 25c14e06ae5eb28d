// @swc/jest compiles our TypeScript (legacy decorators + metadata) and the ESM-only packages in
// node_modules: Nest 12, uuid >= 12, stemmer and jose (under @a2a-js/sdk) are ESM-only, and Jest on Node 20 cannot require(esm).
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

const common = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|uuid|file-type|stemmer|jose)/)'],
  moduleNameMapper: { '^@chorus/([a-z-]+)$': '<rootDir>/libs/$1/src' },
  // Decorated contract classes need design-time metadata even when a spec imports them directly.
  setupFiles: ['reflect-metadata'],
};

module.exports = {
  // Integration suites start servers and whole systems; a hung one fails here instead of stalling CI.
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/apps/', '<rootDir>/libs/', '<rootDir>/scripts/'], testRegex: '.*\\.spec\\.ts$' },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/apps/', '<rootDir>/libs/', '<rootDir>/test/'],
      testRegex: '.*\\.int-spec\\.ts$',
    },
  ],
};
