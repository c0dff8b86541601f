import { withLease } from "../../log/lease.js";
import { CodemodeError } from "../../outcome.js";
import type { Snippet } from "../../snippets/snippets.js";
import type { RuntimeContext } from "../context/index.js";
import { asStorageError } from "../transitions/index.js";

export interface SaveSnippetInput {
  executionId: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/**
 * R-SN-1: saves an execution's code as a snippet the model can find and run; any status is
 * accepted. Null for an unknown execution (a stale id is data, R-RT-1); a bad name is a host
 * error (TypeError); a store failure rejects with STORAGE_ERROR (R-RT-3).
 */
export async function saveSnippet(
  context: RuntimeContext,
  name: string,
  input: SaveSnippetInput,
): Promise<Snippet | null> {
  const executionId = String(input?.executionId ?? "");
  let snippet: Snippet;
  try {
    const head = await context.store.readHead(executionId);
    if (!head) return null;
    const code = await context.store.getRaw(context.store.keys.code(executionId));
    if (typeof code !== "string") return null;
    snippet = { name: String(name), code, connectors: [...head.connectors], executionId, createdAt: Date.now() };
  } catch (error) {
    throw asStorageError(`could not read execution ${executionId}`, error);
  }
  if (input.description) snippet.description = input.description;
  if (input.inputSchema) snippet.inputSchema = input.inputSchema;
  return updateCatalogue(context, () => context.snippets.save(snippet));
}

export async function listSnippets(context: RuntimeContext): Promise<Snippet[]> {
  try {
    return await context.snippets.list();
  } catch (error) {
    throw asStorageError("could not read the snippet catalogue", error);
  }
}

/** False when there is no snippet of that name. */
export async function deleteSnippet(context: RuntimeContext, name: string): Promise<boolean> {
  return updateCatalogue(context, () => context.snippets.delete(String(name)));
}

/**
 * The catalogue is one key per runtime, changed only when an application saves or deletes a
 * snippet (never by executions): its read-modify-write runs under a lease of its own.
 */
async function updateCatalogue<T>(context: RuntimeContext, change: () => Promise<T>): Promise<T> {
  const catalogueLease = {
    ...context.leases,
    keyOf: () => context.store.keys.snippetsLock,
    readStatus: async () => undefined,
  };
  let done: { value: T } | null;
  try {
    done = await withLease(catalogueLease, "snippet catalogue", context.settings.lockWaitMs, async () => ({
      value: await change(),
    }));
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw asStorageError("could not change the snippet catalogue", error);
  }
  if (!done) throw new CodemodeError("BUSY", "the snippet catalogue stayed locked; try again");
  return done.value;
}
