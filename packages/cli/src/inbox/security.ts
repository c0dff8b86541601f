import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** How long a browser session of the inbox lasts, and how many are kept at once (the oldest go first). */
const SESSION_MS = 12 * 60 * 60 * 1000;
const MAX_SESSIONS = 1_000;

/** How a request proved it may use the inbox. */
export type Access = { kind: "bearer" } | { kind: "session"; session: string };

/**
 * The inbox's door: a token on every request, and for decisions from a browser a same-origin
 * request that carries the form's anti-forgery value. The token arrives once in the link
 * (`?token=`) and is exchanged for a session: the cookie holds a random session id, never the
 * token (cookies ignore ports, so any other server on the host that the browser visits receives
 * them), and the anti-forgery value derives from the session. Scripts and curl may send
 * `Authorization: Bearer <token>` instead; a browser never sends that header by itself, so such
 * requests need no anti-forgery value.
 */
export class InboxGuard {
  readonly cookieName: string;
  private readonly digest: Buffer;
  /** Signs session ids into anti-forgery values; new with each process. */
  private readonly secret = randomBytes(32);
  /** Session id → when it expires, oldest first. */
  private readonly sessions = new Map<string, number>();

  constructor(
    token: string,
    private readonly cookiePath: string,
    private readonly allowedOrigins: readonly string[],
  ) {
    this.digest = sha256(token);
    // Two inboxes on one host must not overwrite each other's cookie: named after the token's
    // digest (a prefix of it, which says nothing usable about the token).
    this.cookieName = `codemode_inbox_${this.digest.subarray(0, 6).toString("hex")}`;
  }

  matches(candidate: string | undefined | null): boolean {
    if (!candidate) return false;
    return timingSafeEqual(sha256(candidate), this.digest);
  }

  /** A new browser session, once the link's token was checked; its id goes into the cookie. */
  startSession(): string {
    const session = randomBytes(32).toString("base64url");
    this.sessions.set(session, Date.now() + SESSION_MS);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return session;
  }

  /** The token in an Authorization header, or a live session in the cookie; undefined for neither. */
  access(request: IncomingMessage): Access | undefined {
    const authorization = request.headers.authorization;
    if (authorization?.startsWith("Bearer ") && this.matches(authorization.slice(7).trim())) return { kind: "bearer" };
    const session = cookieValue(request.headers.cookie, this.cookieName);
    if (!session) return undefined;
    const expiresAt = this.sessions.get(session);
    if (expiresAt === undefined) return undefined;
    if (expiresAt <= Date.now()) {
      this.sessions.delete(session);
      return undefined;
    }
    return { kind: "session", session };
  }

  /** What this access's decision forms carry: derived from its session, never the token. */
  formToken(access: Access): string {
    return createHmac("sha256", this.secret)
      .update(`decide:${access.kind === "session" ? access.session : "bearer"}`)
      .digest("base64url");
  }

  formTokenMatches(access: Access, candidate: string | undefined | null): boolean {
    if (!candidate) return false;
    return timingSafeEqual(sha256(candidate), sha256(this.formToken(access)));
  }

  /** The cookie that stands for a session. */
  cookie(session: string): string {
    return `${this.cookieName}=${session}; Path=${this.cookiePath || "/"}; HttpOnly; SameSite=Strict`;
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
    if (site !== undefined && site !== "same-origin" && site !== "none")
      return { ok: false, reason: `cross-site request (Sec-Fetch-Site: ${String(site)}) refused` };
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

/**
 * What every response of the inbox carries, whatever it is (a page, a fragment, JSON, a refusal,
 * a redirect): no framing by any other page, so that no click on another site lands on a form of
 * the inbox, and no caching.
 */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

/** Headers every page carries: no framing, no referrer (the link had the token), no caching, scripts by nonce only. */
export function pageHeaders(nonce: string): Record<string, string> {
  return {
    ...BASE_HEADERS,
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    "referrer-policy": "no-referrer",
  };
}
