/** The steps of the account pages, over the services the client plane's routes call. */
export function createAccountPages() {
  return {};
}
export type AccountPages = ReturnType<typeof createAccountPages>;
