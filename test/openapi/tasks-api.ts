/**
 * A real HTTP API for the openApiConnector tests: a small task tracker on 127.0.0.1, on
 * node:http only, with in-memory state. Its OpenAPI 3.1 document is tasks-api.openapi.yaml
 * beside this file (the source, with a {{SERVER_URL}} placeholder), served at GET /openapi.yaml
 * and, as JSON, at GET /openapi.json. Every request is recorded in `requests`. Its state and seed
 * are in tasks-api-state.ts, its routes in tasks-api-routes.ts, its HTTP plumbing in
 * tasks-api-http.ts.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse as parseYaml } from "yaml";
import { HttpError, type RecordedRequest, readBody, sendError, sendJson } from "./tasks-api-http.ts";
import { routeRequest } from "./tasks-api-routes.ts";
import { seed } from "./tasks-api-state.ts";

export interface TasksApi {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
  /** The OpenAPI document with its server url filled in ("json" by default). */
  document(format?: "json" | "yaml"): string;
  /** Clears `requests` and puts the tasks, comments and users back to the seed. */
  reset(): void;
}

const SOURCE_URL = new URL("./tasks-api.openapi.yaml", import.meta.url);

/** Starts the API on a free port of 127.0.0.1; requests other than the document and /health need `token`. */
export async function startTasksApi(options: { token?: string } = {}): Promise<TasksApi> {
  const token = options.token ?? "secret-token";
  const source = readFileSync(SOURCE_URL, "utf8");
  let state = seed();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let url = "";

  const yamlText = () => source.replaceAll("{{SERVER_URL}}", url);
  const jsonText = () => `${JSON.stringify(parseYaml(yamlText()), null, 2)}\n`;

  async function handle(req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): Promise<void> {
    const { method, path } = recorded;

    if (method === "GET" && path === "/openapi.json") {
      const text = jsonText();
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(text);
      return;
    }
    if (method === "GET" && path === "/openapi.yaml") {
      res.writeHead(200, { "content-type": "application/yaml; charset=utf-8" });
      res.end(yamlText());
      return;
    }
    if (method === "GET" && path === "/health") {
      sendJson(res, 200, { ok: true });
      return;
    }

    if (req.headers.authorization !== `Bearer ${token}`) {
      throw new HttpError(
        401,
        "unauthorized",
        req.headers.authorization ? "the bearer token is wrong" : "an Authorization: Bearer header is required",
      );
    }

    const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
    await routeRequest({ recorded, segments, state, timers }, res);
  }

  const server = createServer((req, res) => {
    const parsed = new URL(req.url ?? "/", "http://127.0.0.1");
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    }
    readBody(req)
      .then(async (body) => {
        const recorded: RecordedRequest = {
          method: (req.method ?? "GET").toUpperCase(),
          path: parsed.pathname,
          query: Object.fromEntries(parsed.searchParams),
          headers,
          body,
        };
        requests.push(recorded);
        await handle(req, res, recorded);
      })
      .catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        sendError(
          res,
          error instanceof HttpError
            ? error
            : new HttpError(500, "internal", error instanceof Error ? error.message : String(error)),
        );
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    document: (format = "json") => (format === "yaml" ? yamlText() : jsonText()),
    reset() {
      requests.length = 0;
      state = seed();
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
