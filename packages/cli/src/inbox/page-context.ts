/** What every inbox page is rendered with: where it is mounted, for whom, and its per-response secrets. */
export interface PageContext {
  base: string;
  title: string;
  operator: string;
  formToken: string;
  nonce: string;
}
