/** The steps of the security pages, over the services the client plane's routes call. */
export function createSecurityPages() {
  return {};
}
export type SecurityPages = ReturnType<typeof createSecurityPages>;
