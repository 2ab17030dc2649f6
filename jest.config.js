/** One config for unit specs (beside the code) and end-to-end specs (under test/). */
const swc = JSON.parse(require('fs').readFileSync(`${__dirname}/.swcrc`, 'utf8'));
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }],
    // jose ships ES modules only; Node 20 loads them, jest's CommonJS runtime needs them compiled.
    '^.+/node_modules/jose/.+\\.js$': ['@swc/jest', { ...swc, swcrc: false, jsc: { ...swc.jsc, parser: { syntax: 'ecmascript' } } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  moduleNameMapper: { '^@parley/([a-z-]+)$': '<rootDir>/libs/$1/src' },
  testTimeout: 60000,
  maxWorkers: 2,
};
