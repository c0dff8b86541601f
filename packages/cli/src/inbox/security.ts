import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The inbox's door: a token on every request, and for decisions a same-origin browser request
 * that carries the form's anti-forgery value. The token arrives once in the link (`?token=`),
 * is swapped for an HttpOnly SameSite=Strict cookie and removed from the address bar; scripts
 * and curl may send `Authorization: Bearer <token>` instead.
 */
export class InboxGuard {
  readonly cookieName: string;
  /** What decision forms carry: derived from the token, so the page's HTML does not hold the token itself. */
  readonly formToken: string;
  private readonly digest: Buffer;

  constructor(
    token: string,
    private readonly cookiePath: string,
    private readonly allowedOrigins: readonly string[],
  ) {
    this.digest = sha256(token);
    // Cookies ignore ports: two inboxes on one host must not overwrite each other's.
    this.cookieName = `codemode_inbox_${this.digest.subarray(0, 6).toString("hex")}`;
    this.formToken = createHmac("sha256", token).update("codemode-inbox-decide").digest("base64url");
  }

  matches(candidate: string | undefined | null): boolean {
    if (!candidate) return false;
    return timingSafeEqual(sha256(candidate), this.digest);
  }

  formTokenMatches(candidate: string | undefined | null): boolean {
    if (!candidate) return false;
    return timingSafeEqual(sha256(candidate), sha256(this.formToken));
  }

  /** The token this request carries in its cookie or Authorization header. */
  authenticated(request: IncomingMessage): boolean {
    const authorization = request.headers.authorization;
    if (authorization?.startsWith("Bearer ") && this.matches(authorization.slice(7).trim())) return true;
    return this.matches(cookieValue(request.headers.cookie, this.cookieName));
  }

  /** The cookie that stands for the token from now on. */
  cookie(token: string): string {
    return `${this.cookieName}=${encodeURIComponent(token)}; Path=${this.cookiePath || "/"}; HttpOnly; SameSite=Strict`;
  }

  /**
   * Whether a request comes from the inbox's own pages: its Origin is the inbox's (or one the
   * application allowed); without an Origin, the browser's Sec-Fetch-Site says same-origin. A
   * client that sends neither is not a browser, and cannot be made to post by another site.
   */
  sameOrigin(request: IncomingMessage): { ok: true } | { ok: false; reason: string } {
    const origin = request.headers.origin;
    if (origin !== undefined) {
      const host = request.headers.host;
      const own = host ? [`http://${host}`, `https://${host}`] : [];
      if ([...own, ...this.allowedOrigins].includes(origin)) return { ok: true };
      return { ok: false, reason: `cross-site request from ${origin} refused` };
    }
    const site = request.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin" && site !== "none") return { ok: false, reason: `cross-site request (Sec-Fetch-Site: ${String(site)}) refused` };
    return { ok: true };
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) {
      try {
        return decodeURIComponent(rest.join("="));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Headers every page carries: no framing, no referrer (the link had the token), no caching, scripts by nonce only. */
export function pageHeaders(nonce: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}
