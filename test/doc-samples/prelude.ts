/**
 * The types of names that documentation fragments use without defining them. A fragment marked
 * `<!-- sample: fragment — declares: runtime, github -->` is compiled with each declared name
 * imported from here when this file exports it, and declared as `any` when it does not: give a
 * name a type here when it means the same thing on every page.
 */
import type { CodemodeRuntime, Connector } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** The application's runtime. */
export declare const runtime: CodemodeRuntime;
/** The store the runtime keeps its executions in. */
export declare const storage: CodemodeStorage;
/** The application's connectors, each as `defineConnector` (or an adapter) returns it. */
export declare const connectors: Connector[];
export declare const github: Connector;
export declare const shop: Connector;
export declare const billing: Connector;
export declare const crm: Connector;
/** A store's address, such as `redis://127.0.0.1:6379`. */
export declare const url: string;
/** A program the model wrote: `async () => …`. */
export declare const code: string;
/** A connected MCP client. */
export declare const client: Client;
