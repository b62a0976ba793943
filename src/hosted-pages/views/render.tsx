/** @jsxImportSource preact */
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** A page as the browser gets it: the doctype, then the tree rendered with every text and attribute escaped. */
export const renderDocument = (page: VNode) => `<!doctype html>${renderToString(page)}`;
