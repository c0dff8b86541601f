import { ago } from "../explain.js";
import { html, type SafeHtml } from "./html.js";

/** "5 min ago", kept current by the page's script, with the exact time on hover. */
export function timeAgo(at: number): SafeHtml {
  const date = new Date(at);
  return html`<time datetime="${date.toISOString()}" data-at="${at}" title="${date.toLocaleString("en-GB")}">${ago(at)}</time>`;
}
