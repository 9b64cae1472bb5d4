#!/usr/bin/env node
// The `idp` command. Node.js 24 runs the TypeScript sources directly (type stripping); the
// compile cache keeps what it stripped and compiled (in the system's temporary directory, or
// NODE_COMPILE_CACHE), so that a start after the first skips that work: new instances get ready
// sooner, and commands beside the server answer sooner. Where the directory cannot be written,
// Node.js runs without it.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('../src/main.ts');
