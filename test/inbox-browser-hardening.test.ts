/**
 * The approval inbox in headless Chromium against requests it must refuse: without the token, a
 * cross-site POST even with the form's value, another local page framing it, and a local server
 * that receives its cookie. Needs `npm run build` and /usr/bin/chromium
 * (`apt-get install -y chromium`; .ci/run installs it).
 */
import { describe, expect, it } from "vitest";
import { GATED_PROGRAM } from "./cli-fixtures/tickets.ts";
import { address, browser, card, runtime, serveHtml, TIMEOUT, useBrowserInbox } from "./inbox-browser-fixtures.ts";

useBrowserInbox();

describe("the approval inbox in a browser", () => {
  it(
    "refuses a request without the token, and a cross-site POST even with the form's value",
    async () => {
      const target = (await runtime.execute({ code: GATED_PROGRAM })).executionId;
      const inboxOrigin = `http://127.0.0.1:${address.port}`;

      // No token: nothing but the refusal, in a browser and from a script.
      const stranger = await browser.newContext();
      const strangerPage = await stranger.newPage();
      const refused = await strangerPage.goto(`${inboxOrigin}/`);
      expect(refused?.status()).toBe(401);
      expect(await strangerPage.textContent("body")).toContain("This inbox needs its token");
      expect((await fetch(`${inboxOrigin}/executions/${target}`)).status).toBe(401);
      await stranger.close();

      // A person who holds the cookie visits another local site (same host, another port: same-site,
      // so the SameSite cookie goes along) whose page posts a decision — with the real form value.
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(address.url);
      const csrf = await card(page, target).locator('input[name="csrf"]').inputValue();
      const evil = await serveHtml(`<form id="f" method="post" action="${inboxOrigin}/executions/${target}/decide">
        <input name="csrf" value="${csrf}"><input name="seq" value="1"><input name="decision" value="approve"><input name="by" value="mallory">
      </form><script>document.getElementById("f").submit()</script>`);
      try {
        const [response] = await Promise.all([
          page.waitForResponse((candidate) => candidate.url().includes("/decide")),
          page.goto(evil.url),
        ]);
        expect(response.status()).toBe(403);
        expect(await response.text()).toContain(`cross-site request from http://127.0.0.1:${evil.port} refused`);
      } finally {
        await evil.close();
      }
      expect((await runtime.execution(target))?.status).toBe("paused");
      await context.close();
    },
    TIMEOUT,
  );
});

describe("hardening: the inbox against other local pages (round two)", () => {
  it(
    "finding 7: a page on another port of 127.0.0.1 frames the inbox's ?fragment=1 (its Approve forms): the browser refuses to show it, and a click approves nothing",
    async () => {
      const paused = await runtime.execute({ code: GATED_PROGRAM });
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(address.url);
      const inboxOrigin = new URL(address.url).origin;
      const framing = await serveHtml(`<p>Win a prize: click the button!</p>
        <iframe id="f" src="${inboxOrigin}/?fragment=1" style="width:800px;height:600px;opacity:0.01;position:absolute;top:0;left:0"></iframe>`);
      try {
        const [response] = await Promise.all([
          page.waitForResponse((candidate) => candidate.url().includes("fragment=1")),
          page.goto(framing.url),
        ]);
        // The response itself forbids framing, as every inbox response does…
        expect(response.headers()["x-frame-options"]).toBe("DENY");
        expect(response.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
        // …so the frame holds no form: the browser blocked it.
        const frame = page.frames().find((candidate) => candidate.url().includes("fragment=1"));
        const buttons = frame
          ? await frame
              .locator("button")
              .count()
              .catch(() => 0)
          : 0;
        expect(buttons).toBe(0);
        await page.mouse.click(200, 200);
      } finally {
        await framing.close();
      }
      expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "finding 8: the cookie holds a session id, never the token; another local server that receives it learns nothing that opens the inbox by itself",
    async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(address.url);
      const cookies = await context.cookies();
      expect(cookies).toHaveLength(1);
      const [cookie] = cookies;
      expect(cookie!.value).not.toContain(address.token);
      expect(cookie!.value.length).toBeGreaterThanOrEqual(40);
      expect(cookie!.httpOnly).toBe(true);
      // Another server on the same host (cookies ignore ports) receives the cookie: the token stays unknown to it.
      let received = "";
      const other = await serveHtml("<p>another local app</p>", (request) => {
        received = request.headers.cookie ?? "";
      });
      try {
        await page.goto(other.url);
        expect(received).toContain(cookie!.name);
        expect(received).not.toContain(address.token);
        // What it received is no bearer token, and the page's HTML never echoes the token either.
        const inboxOrigin = new URL(address.url).origin;
        const value = decodeURIComponent(received.split("=").slice(1).join("="));
        expect((await fetch(`${inboxOrigin}/`, { headers: { authorization: `Bearer ${value}` } })).status).toBe(401);
        await page.goto(`${inboxOrigin}/`);
        expect(await page.content()).not.toContain(address.token);
      } finally {
        await other.close();
      }
      await context.close();
    },
    TIMEOUT,
  );
});
