import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import * as variantModule from "@jitl/quickjs-ng-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";

/** The few WebAssembly APIs used here: the package's TypeScript libraries declare none. */
interface WebAssemblyMemory {
  readonly buffer: ArrayBuffer;
}
interface WebAssemblyApi {
  Memory: new (descriptor: { initial: number; maximum: number }) => WebAssemblyMemory;
  compile(bytes: Uint8Array): Promise<unknown>;
}
const WebAssemblyGlobal = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

/**
 * The quickjs-ng build (release, synchronous, with a separate .wasm file). Its types describe the
 * CommonJS build, whose default export sits one `default` deeper than the ES module's.
 */
const variant = unwrapDefault(variantModule) as QuickJSSyncVariant;

function unwrapDefault(value: unknown): unknown {
  let current = value as { default?: unknown; importFFI?: unknown };
  while (current.importFFI === undefined && typeof current.default === "object" && current.default !== null)
    current = current.default as typeof current;
  return current;
}

const PAGE_BYTES = 65_536;
/** The linear memory the QuickJS build starts with (its INITIAL_MEMORY): an instance never has less. */
export const INITIAL_MEMORY_BYTES = 16 * 1024 * 1024;
/** The most a wasm32 Emscripten heap can grow to. */
const MAX_MEMORY_BYTES = 2 * 1024 * 1024 * 1024;

/** One instance of the QuickJS WebAssembly module, with a linear memory of its own. */
export interface QuickJsModule {
  quickjs: QuickJSWASMModule;
  /** Its linear memory: everything the runtimes in it allocate, QuickJS's own structures included. It never shrinks. */
  memory: WebAssemblyMemory;
  /** The size `memory` may grow to; past it, QuickJS's allocations fail (the program sees "out of memory"). */
  maximumBytes: number;
}

let compiled: Promise<unknown> | undefined;

/**
 * The QuickJS code (quickjs-ng, built by quickjs-emscripten), read and compiled once, on the
 * first pass, and shared by every instance: an instance costs about a millisecond then.
 */
export function compiledCode(): Promise<unknown> {
  compiled ??= (async () => {
    const path = createRequire(import.meta.url).resolve("@jitl/quickjs-ng-wasmfile-release-sync/wasm");
    return WebAssemblyGlobal.compile(await readFile(path));
  })();
  // A failure (an unreadable file) is not remembered: the next pass tries again.
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

/**
 * A new instance of the module whose memory may grow to `maximumBytes` (rounded up to whole
 * pages, at least the build's initial 16 MB, at most 2 GB).
 */
export async function newQuickJsModule(maximumBytes: number): Promise<QuickJsModule> {
  const initialPages = INITIAL_MEMORY_BYTES / PAGE_BYTES;
  const maximumPages = Math.min(
    MAX_MEMORY_BYTES / PAGE_BYTES,
    Math.max(initialPages, Math.ceil(maximumBytes / PAGE_BYTES)),
  );
  const memory = new WebAssemblyGlobal.Memory({ initial: initialPages, maximum: maximumPages });
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant<QuickJSSyncVariant>(variant, {
      wasmModule: compiledCode,
      wasmMemory: memory,
      // The module prints only when it aborts (a runtime that cannot be freed, see
      // QuickJsSandbox.dispose): the pass handles that, by dropping the module.
      emscriptenModule: { print: ignore, printErr: ignore },
    } as never),
  );
  return { quickjs, memory, maximumBytes: maximumPages * PAGE_BYTES };
}

function ignore(): void {}
