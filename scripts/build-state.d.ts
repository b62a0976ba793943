// Types of build-state.js for the TypeScript that imports it (the test helpers).
export const ROOT: string;
export const DIST: string;
export function sourceFingerprint(): string;
export function isBuildFresh(): boolean;
export const buildInfoPath: string;
