import type { JsonSchema } from "../connectors/define-connector.js";
import type { ExecutionStore } from "../log/execution-store.js";
import { CodemodeError } from "../outcome.js";

/** Saved source of an execution that the model can find, read and run again (R-SN-1). */
export interface Snippet {
  name: string;
  description?: string;
  /** The code as the model wrote it; `codemode.run(name, input)` makes `input` available to it. */
  code: string;
  /** Connectors the code uses; running it needs them configured. */
  connectors: string[];
  inputSchema?: JsonSchema;
  /** The execution it was saved from. */
  executionId: string;
  createdAt: number;
}

const SNIPPET_NAME = /^[A-Za-z0-9_][\w.-]{0,63}$/;

/** Snippets of one runtime, kept in one store key as a small catalogue. */
export class SnippetStore {
  private readonly key: string;

  constructor(private readonly store: ExecutionStore) {
    this.key = store.keys.snippets;
  }

  async list(): Promise<Snippet[]> {
    const text = await this.store.getRaw(this.key);
    if (text === undefined || text === null) return [];
    if (typeof text !== "string")
      throw new CodemodeError("STORAGE_ERROR", "the snippet catalogue in the store is not text");
    try {
      return JSON.parse(text) as Snippet[];
    } catch {
      throw new CodemodeError("STORAGE_ERROR", "the snippet catalogue in the store is not valid JSON");
    }
  }

  async get(name: string): Promise<Snippet | undefined> {
    return (await this.list()).find((snippet) => snippet.name === name);
  }

  /** Saves or replaces a snippet. Callers serialise catalogue writes (see the runtime's lock). */
  async save(snippet: Snippet): Promise<Snippet> {
    if (!SNIPPET_NAME.test(snippet.name)) {
      throw new TypeError(
        `snippet name ${JSON.stringify(snippet.name)} must be 1–64 letters, digits, "_", "-" or "." and start with a letter, digit or "_"`,
      );
    }
    const others = (await this.list()).filter((existing) => existing.name !== snippet.name);
    await this.store.setRaw(
      this.key,
      JSON.stringify([...others, snippet].sort((a, b) => a.name.localeCompare(b.name))),
    );
    return snippet;
  }

  async delete(name: string): Promise<boolean> {
    const all = await this.list();
    const kept = all.filter((snippet) => snippet.name !== name);
    if (kept.length === all.length) return false;
    await this.store.setRaw(this.key, JSON.stringify(kept));
    return true;
  }
}
