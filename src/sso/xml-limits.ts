/**
 * What a posted SAML response may hold before any XML library sees it. node-saml's XPath queries and
 * xml-crypto's reference lookups cost tens of microseconds per element and per attribute (more for many
 * siblings: the XPath sorts them by document order), and they run on the event loop: 20,000 empty siblings
 * took 19 s. A response from Okta or Entra ID with a thousand groups holds about 4,000 of them.
 */
export interface XmlLimits { bytes: number; nodes: number; depth: number }

export const SAML_RESPONSE_LIMITS: XmlLimits = { bytes: 256 * 1024, nodes: 5_000, depth: 50 };

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
 * sections as nodes, and the depth of open elements. It stops at the first limit passed. A document type
 * declaration is refused outright (SAML messages have none; it is where entity expansion attacks live).
 * It is no parser: what it lets through may still be malformed, which the parser then refuses.
 */
export function beyondXmlLimits(xml: string, limits: XmlLimits = SAML_RESPONSE_LIMITS): string | undefined {
  if (xml.length > limits.bytes || Buffer.byteLength(xml) > limits.bytes) return `it is larger than ${limits.bytes} bytes`;
  let nodes = 0;
  let depth = 0;
  for (let i = xml.indexOf('<'); i !== -1; i = xml.indexOf('<', i)) {
    if (xml.startsWith('</', i)) {
      depth--;
      i = endOf(xml, i, '>');
    } else if (xml.startsWith('<!--', i)) {
      nodes++;
      i = endOf(xml, i + 4, '-->');
    } else if (xml.startsWith('<![CDATA[', i)) {
      nodes++;
      i = endOf(xml, i + 9, ']]>');
    } else if (xml.startsWith('<?', i)) {
      nodes++;
      i = endOf(xml, i + 2, '?>');
    } else if (xml.startsWith('<!', i)) {
      return 'it has a document type declaration';
    } else {
      const tag = startTag(xml, i);
      if (!tag) return 'it has a start tag that does not end';
      nodes += 1 + tag.attributes;
      if (!tag.selfClosing && ++depth > limits.depth) return `it nests elements deeper than ${limits.depth}`;
      i = tag.end;
    }
    if (nodes > limits.nodes) return `it has more than ${limits.nodes} nodes (elements, attributes, comments)`;
    if (i === -1) return 'it has a comment, CDATA section or tag that does not end';
  }
  return undefined;
}
