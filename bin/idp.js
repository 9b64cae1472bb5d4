#!/usr/bin/env node
// The `idp` command. Node.js 24 runs the TypeScript sources directly (type stripping).
import '../src/main.ts';
