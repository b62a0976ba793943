import { describe, expect, it } from 'vitest';
import { beyondXmlLimits } from '../../src/sso/xml-limits.js';

const LIMITS = { bytes: 1_000, nodes: 10, children: 100, depth: 3 };
const TOO_MANY = 'it has more than 10 nodes (elements, attributes, comments)';

describe('the one-pass count of a SAML response before it is parsed', () => {
  it('lets a document within every limit through', () => {
    expect(beyondXmlLimits('<?xml version="1.0"?><r a="1" b=\'>\'><c><d/></c><!-- note --><![CDATA[<x/><x/>]]>text &amp; more</r>', LIMITS)).toBeUndefined();
  });

  it('counts elements, attributes (namespace declarations too), comments, processing instructions and CDATA sections', () => {
    expect(beyondXmlLimits(`<r>${'<e/>'.repeat(10)}</r>`, LIMITS)).toBe(TOO_MANY);
    expect(beyondXmlLimits(`<r${' xmlns:p="urn:p"'.repeat(10)}/>`, LIMITS)).toBe(TOO_MANY);
    expect(beyondXmlLimits(`<r>${'<!---->'.repeat(10)}</r>`, LIMITS)).toBe(TOO_MANY);
    expect(beyondXmlLimits(`<r>${'<?p?>'.repeat(10)}</r>`, LIMITS)).toBe(TOO_MANY);
    expect(beyondXmlLimits(`<r>${'<![CDATA[]]>'.repeat(10)}</r>`, LIMITS)).toBe(TOO_MANY);
  });

  it('counts the attributes a lax parser makes of valueless or unseparated ones', () => {
    expect(beyondXmlLimits(`<r${' a'.repeat(10)}/>`, LIMITS)).toBe(TOO_MANY);
    expect(beyondXmlLimits(`<r ${'a="1"'.repeat(10)}/>`, LIMITS)).toBe(TOO_MANY);
    expect(beyondXmlLimits('<r a = "1" b =\'2\' c=3/>', LIMITS)).toBeUndefined();
  });

  it('refuses an element with more children than the limit (elements, comments, processing instructions, CDATA; not text)', () => {
    const FEW = { ...LIMITS, children: 3 };
    expect(beyondXmlLimits('<r>a<e/>b<e/>c<e/>d</r>', FEW)).toBeUndefined();
    expect(beyondXmlLimits('<r><e/><e/><e/><e/></r>', FEW)).toBe('an element has more than 3 children');
    expect(beyondXmlLimits('<r><e/><!----><?p?><![CDATA[]]></r>', FEW)).toBe('an element has more than 3 children');
    expect(beyondXmlLimits('<r><e><e/><e/><e/></e><e/><e/></r>', FEW)).toBeUndefined();
  });

  it('refuses nesting deeper than the limit, self-closed elements not counting as open', () => {
    expect(beyondXmlLimits('<a><b><c><d/></c></b></a>', LIMITS)).toBeUndefined();
    expect(beyondXmlLimits('<a><b><c><d></d></c></b></a>', LIMITS)).toBe('it nests elements deeper than 3');
  });

  it('refuses a document larger than the limit, in UTF-8 bytes', () => {
    expect(beyondXmlLimits(`<r>${'a'.repeat(993)}</r>`, LIMITS)).toBeUndefined();
    expect(beyondXmlLimits(`<r>${'é'.repeat(500)}</r>`, LIMITS)).toBe('it is larger than 1000 bytes');
  });

  it('refuses a document type declaration, and markup hidden where no parser would look for it', () => {
    expect(beyondXmlLimits('<!DOCTYPE r [<!ENTITY a "b">]><r/>', LIMITS)).toBe('it has a document type declaration');
    expect(beyondXmlLimits('<r a="<e/><e/>"/>', LIMITS)).toBe('it has a start tag that does not end');
    expect(beyondXmlLimits('<r a="1"', LIMITS)).toBe('it has a start tag that does not end');
    expect(beyondXmlLimits('<r><!-- <e/>', LIMITS)).toBe('it has a comment, CDATA section or tag that does not end');
  });

  it('stops at the first limit passed, whatever follows', () => {
    expect(beyondXmlLimits(`<r>${'<e/>'.repeat(11)}<!DOCTYPE x>`, LIMITS)).toBe(TOO_MANY);
  });
});
