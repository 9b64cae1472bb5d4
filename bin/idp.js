#!/usr/bin/env node
// The `idp` command. Node.js 24 runs the TypeScript sources directly (type stripping); the
// compile cache keeps what it stripped and compiled (in the system's temporary directory, or
// NODE_COMPILE_CACHE), so that a start after the first skips that work: new instances get ready
// sooner, and commands beside the server answer sooner. Where the directory cannot be written,
// Node.js runs without it.
//
// This file is read by whatever `node` comes first on the PATH, often an older system Node.js:
// it uses no syntax or import newer than Node.js 12 (no top-level await, no static import), so
// that an older one gets the one line below instead of a SyntaxError from the sources.
var major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write('idp needs Node.js 24 or newer (this is v' + process.versions.node + '); run it as "npm run idp -- ' +
    'COMMAND" from the project folder, which uses the Node.js 24 that npm install brought\n');
  process.exit(2);
}

import('node:module').then(function (module) {
  module.enableCompileCache();
  return import('../src/main.ts');
});
