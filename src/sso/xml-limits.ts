/**
 * What a posted SAML response may hold before any XML library sees it. node-saml's XPath queries and
 * xml-crypto's reference lookups cost tens of microseconds per element and per attribute, and more than
 * that per sibling (the XPath sorts siblings into document order by walking them: 20,000 siblings took
 * 19 s), all on the event loop. A response from Okta or Entra ID with a thousand groups holds about 4,000
 * nodes, 1,000 of them the values of one attribute.
 */
export interface XmlLimits { bytes: number; nodes: number; children: number; depth: number }

export const SAML_RESPONSE_LIMITS: XmlLimits = { bytes: 256 * 1024, nodes: 5_000, children: 1_000, depth: 50 };

const isSpace = (c: string) => c === ' ' || c === '\n' || c === '\t' || c === '\r';
const isQuote = (c: string) => c === '"' || c === "'";

/**
 * A start tag from its `<` at `start`: where it ends (after its `>`), its attributes, whether it closes
 * itself. Undefined when it does not end, or holds a `<` (never well-formed, even quoted), so no markup can
 * hide from the count inside a tag. An attribute is counted wherever a name starts after a space or a quote,
 * which counts every attribute a lax parser could make (valueless or unseparated ones too), and some more.
 */
function startTag(xml: string, start: number) {
  let attributes = 0;
  let quote = '';
  let previous = '';
  for (let i = start + 1; i < xml.length; i++) {
    const c = xml[i]!;
    if (quote) {
      if (c === quote) { quote = ''; previous = c; }
      else if (c === '<') return undefined;
      continue;
    }
    if (c === '>') return { end: i + 1, attributes, selfClosing: previous === '/' };
    if (c === '<') return undefined;
    if (isQuote(c)) quote = c;
    else if (!isSpace(c) && c !== '=' && c !== '/' && (isSpace(previous) || isQuote(previous))) attributes++;
    previous = c;
  }
  return undefined;
}

/** Where the construct opened at `start` ends (after `terminator`), or -1. */
const endOf = (xml: string, start: number, terminator: string) => {
  const at = xml.indexOf(terminator, start);
  return at === -1 ? -1 : at + terminator.length;
};

/**
 * Why `xml` is beyond the limits, or undefined when it is within them: one pass over the text, counting
 * elements, attributes (namespace declarations included), comments, processing instructions and CDATA
 * sections as nodes, the children of each element (but its text) and the depth of open elements. It stops
 * at the first limit passed. A document type declaration is refused outright (SAML messages have none; it
 * is where entity expansion attacks live). It is no parser: what it lets through may still be malformed,
 * which the parser then refuses.
 */
export function beyondXmlLimits(xml: string, limits: XmlLimits = SAML_RESPONSE_LIMITS): string | undefined {
  if (xml.length > limits.bytes || Buffer.byteLength(xml) > limits.bytes) return `it is larger than ${limits.bytes} bytes`;
  let nodes = 0;
  // The number of children of each open element, outermost first.
  const open: number[] = [];
  const child = () => {
    nodes++;
    if (open.length > 0 && ++open[open.length - 1]! > limits.children) return `an element has more than ${limits.children} children`;
    return nodes > limits.nodes ? `it has more than ${limits.nodes} nodes (elements, attributes, comments)` : undefined;
  };
  for (let i = xml.indexOf('<'); i !== -1; i = xml.indexOf('<', i)) {
    let beyond: string | undefined;
    if (xml.startsWith('</', i)) {
      open.pop();
      i = endOf(xml, i, '>');
    } else if (xml.startsWith('<!--', i)) {
      beyond = child();
      i = endOf(xml, i + 4, '-->');
    } else if (xml.startsWith('<![CDATA[', i)) {
      beyond = child();
      i = endOf(xml, i + 9, ']]>');
    } else if (xml.startsWith('<?', i)) {
      beyond = child();
      i = endOf(xml, i + 2, '?>');
    } else if (xml.startsWith('<!', i)) {
      return 'it has a document type declaration';
    } else {
      const tag = startTag(xml, i);
      if (!tag) return 'it has a start tag that does not end';
      nodes += tag.attributes;
      beyond = child();
      if (!tag.selfClosing && open.push(0) > limits.depth) return `it nests elements deeper than ${limits.depth}`;
      i = tag.end;
    }
    if (beyond) return beyond;
    if (i === -1) return 'it has a comment, CDATA section or tag that does not end';
  }
  return undefined;
}
