import { Resolver } from 'node:dns/promises';

/** Where and how long verification asks DNS (GATEHOUSE_DNS_SERVERS, GATEHOUSE_DNS_TIMEOUT_MS). */
export interface DnsOptions {
  /** host[:port] entries as Resolver.setServers takes them (`[::1]:53` for IPv6 with a port); none: the system's resolvers. */
  servers?: string[];
  /** The whole lookup's bound, retries included. */
  timeoutMs?: number;
}
export const DNS_TIMEOUT_MS = 5000;

/** A TXT lookup's outcome: the records' values (each record's strings joined), or the DNS error's code. */
export type TxtAnswer = { records: string[] } | { error: string };

/**
 * TXT lookups through a resolver of their own, so the servers it asks never depend on the process's other
 * DNS use. NXDOMAIN and "no TXT record" are answers (no records), not errors: the customer has not
 * published the record yet. Anything else (timeout, refused, SERVFAIL) is an error the caller reports.
 */
export function createTxtLookup({ servers, timeoutMs = DNS_TIMEOUT_MS }: DnsOptions = {}) {
  return async (name: string): Promise<TxtAnswer> => {
    const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
    if (servers?.length) resolver.setServers(servers);
    let timer: NodeJS.Timeout | undefined;
    // c-ares bounds each try, not the lookup as a whole (several servers are tried in turn): this bounds it all.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' })), timeoutMs);
    });
    try {
      const records = await Promise.race([resolver.resolveTxt(name), deadline]);
      return { records: records.map((strings) => strings.join('')) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENODATA' || code === 'ENOTFOUND') return { records: [] };
      return { error: code ?? 'EUNKNOWN' };
    } finally {
      clearTimeout(timer);
      resolver.cancel();
    }
  };
}
export type TxtLookup = ReturnType<typeof createTxtLookup>;
