#!/usr/bin/env node
// The `gatehouse` operator CLI: runs src/cli.ts through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
