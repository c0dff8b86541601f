/**
 * The approval inbox served over plain HTTP for the handler tests: a runtime, the inbox mounted
 * on a server of its own, the cookie a browser gets from the link, and a `shop` whose orders
 * need approval and whose tool records every call it receives.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ApprovalInbox, createApprovalInbox, type InboxQueue } from "@codemode/cli/inbox";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  type Connector,
  createCodemodeRuntime,
  defineConnector,
} from "@codemode/core";
import { afterEach } from "vitest";
import { tickets } from "./cli-fixtures/tickets.ts";

export const TOKEN = "test-token-0123456789abcdef";

/** Two orders at once: the run pauses with both pending (R-AP-8); a denied one is caught. */
export const TWO_ORDERS = `async () => {
  const settled = await Promise.allSettled([shop.order({ sku: "mug", qty: 1 }), shop.order({ sku: "teapot", qty: 2 })]);
  return settled.map((each) => each.status === "fulfilled" ? each.value.ordered : each.reason.name);
}`;

/** The anti-forgery value of a page's forms. */
export const formToken = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";

/** `shop.order` needs approval and checks its arguments; `ran` has every order the tool received. */
export function shopConnector(ran: unknown[]): Connector {
  return defineConnector({
    name: "shop",
    tools: {
      order: {
        description: "Places an order for a customer.",
        inputSchema: {
          type: "object",
          properties: {
            sku: { type: "string", minLength: 1 },
            qty: { type: "integer", minimum: 1, maximum: 10 },
          },
          required: ["sku", "qty"],
          additionalProperties: false,
        },
        requiresApproval: true,
        execute: async (args: { sku: string; qty: number }) => {
          ran.push(args);
          return { ordered: args };
        },
      },
    },
  });
}

/** Registers the clean-up, and gives `serve`: a runtime and an inbox over HTTP, logged in. */
export function useInbox() {
  let server: Server | undefined;
  let inbox: ApprovalInbox | undefined;
  let runtime: CodemodeRuntime | undefined;
  afterEach(async () => {
    await inbox?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await runtime?.close();
    server = inbox = runtime = undefined;
  });
  return {
    inbox: () => inbox,
    async serve(
      options: {
        queue?: InboxQueue;
        basePath?: string;
        pollMs?: number;
        connectors?: Connector[];
        storage?: CodemodeRuntimeOptions["storage"];
      } = {},
    ) {
      const { connectors = [tickets], storage, ...inboxOptions } = options;
      runtime = createCodemodeRuntime({ connectors, ...(storage ? { storage } : {}) });
      inbox = createApprovalInbox({ runtime, token: TOKEN, operator: "ops", ...inboxOptions });
      const mounted = inbox;
      server = createServer((request, response) => mounted.handler(request, response));
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const origin = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
      const base = `${origin}${options.basePath ?? ""}`;
      // The cookie a browser gets from the link.
      const login = await fetch(`${base}/?token=${TOKEN}`, { redirect: "manual" });
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      return { runtime: runtime!, origin, base, cookie, login };
    },
  };
}

/**
 * Posts decision forms for one run as the page's script does (same origin, the session's
 * cookie and the form's value, JSON answers); `fields` override or add to the form.
 */
export async function decisionPoster(served: { base: string; origin: string; cookie: string }, executionId: string) {
  const { base, origin, cookie } = served;
  const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
  const csrf = formToken(page);
  const post = async (fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/executions/${executionId}/decide`, {
      method: "POST",
      headers: {
        cookie,
        origin,
        accept: "application/json",
        "content-type": "application/x-www-form-urlencoded",
        ...headers,
      },
      body: new URLSearchParams({ csrf, by: "dana", ...fields }),
    });
    const text = await response.text();
    let answer: Record<string, unknown> = {};
    try {
      answer = JSON.parse(text);
    } catch {
      answer = { text };
    }
    return { status: response.status, answer };
  };
  return { page, csrf, post };
}
