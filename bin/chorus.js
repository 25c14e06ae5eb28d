#!/usr/bin/env node
'use strict';
// The `chorus` command. It runs the compiled CLI; `npm install` (or `npm run build`) compiles it.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const main = join(__dirname, '..', 'dist', 'apps', 'cli', 'src', 'main.js');
if (!existsSync(main)) {
  console.error('chorus: not built yet. Run `npm install` (or `npm run build`) in ' + join(__dirname, '..'));
  process.exit(2);
}
require(main);
