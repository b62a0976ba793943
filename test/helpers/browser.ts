import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser); browser suites skip where it is not installed. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

// Flags for a closed network: no background traffic, no first-run work; *.localhost resolves to this machine.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP *.localhost 127.0.0.1'];

export const launchChromium = () => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
