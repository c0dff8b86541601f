import { Parser } from "acorn";

/**
 * acorn with its declared-name bookkeeping made linear. acorn keeps the names of each scope in
 * arrays and checks every declaration with `indexOf`, and copies each `var` into every block it
 * is hoisted through: a 1 MB program declaring 174,000 names froze the host's event loop for 88 s
 * before the sandbox's timeout could even start (parsing happens on the host). The rules are
 * acorn's own (`declareName` in acorn's scope.js: a name may not be declared lexically twice in a
 * scope, nor lexically where a `var` of it is hoisted through, …); only the data structures
 * change:
 *
 * - each scope keeps its lexical and function names in Sets;
 * - a `var` is recorded once, on the scope it is hoisted to, with the time it was declared: it
 *   went through a block exactly when it was declared while that block was open;
 * - a `var` finds a clashing lexical or function name on its way up through one map of the names
 *   declared in the scopes now open, by depth.
 *
 * And a regular expression may name at most `MAX_SAME_NAME_GROUPS` groups alike (acorn compares
 * each new one with every earlier one).
 */

// acorn's scope flags and binding kinds (acorn/src/scopeflags.js), stable across acorn 8.
const SCOPE_TOP = 1;
const SCOPE_FUNCTION = 2;
const SCOPE_CLASS_STATIC_BLOCK = 256;
const SCOPE_VAR = SCOPE_TOP | SCOPE_FUNCTION | SCOPE_CLASS_STATIC_BLOCK;
const BIND_LEXICAL = 2;
const BIND_FUNCTION = 3;
const BIND_SIMPLE_CATCH = 4;

/** Capture groups one regular expression may give the same name (in separate alternatives). */
export const MAX_SAME_NAME_GROUPS = 100;

/** The names of one open scope. `lexical` and `var` answer `indexOf` as acorn's arrays did. */
class NameScope {
  readonly lexical = new Set<string>();
  readonly functions = new Set<string>();
  /** On a scope `var`s are hoisted to: when each name was last declared. */
  readonly varDeclaredAt: Map<string, number> | undefined;
  readonly varScope: NameScope;
  /** Names this scope entered in the parser's map of clashing names, taken out when it closes. */
  readonly clashing: string[] = [];
  readonly var = { indexOf: (name: string): number => (this.hasVar(name) ? 0 : -1) };

  constructor(
    readonly flags: number,
    readonly depth: number,
    readonly enteredAt: number,
    parent: NameScope | undefined,
  ) {
    const isVarScope = (flags & SCOPE_VAR) !== 0 || parent === undefined;
    this.varDeclaredAt = isVarScope ? new Map() : undefined;
    this.varScope = isVarScope ? this : parent.varScope;
  }

  /** True when a `var` of `name` was hoisted through this scope (declared while it was open). */
  hasVar(name: string): boolean {
    const at = this.varScope.varDeclaredAt!.get(name);
    return at !== undefined && at >= this.enteredAt;
  }
}

/** The parts of acorn's parser these methods use (not in acorn's public types). */
interface ParserInternals {
  scopeStack: NameScope[];
  inModule: boolean;
  undefinedExports: Record<string, unknown>;
  options: { ecmaVersion: number | "latest" };
  treatFunctionsAsVar: boolean;
  treatFunctionsAsVarInScope(scope: NameScope): boolean;
  currentScope(): NameScope;
  raiseRecoverable(pos: number, message: string): never;
  regexp_eatGroupName(state: RegExpState): boolean;
  /** Depths of the open scopes where each name is declared so that a `var` of it would clash. */
  clashes?: Map<string, number[]>;
  clock?: number;
}

interface RegExpState {
  eat(char: number): boolean;
  raise(message: string): never;
  lastStringValue: string;
  groupNames: Record<string, unknown>;
  branchID: { separatedFrom(other: unknown): boolean };
}

function linearNames(Base: typeof Parser): typeof Parser {
  const overrides = {
    enterScope(this: ParserInternals, flags: number): void {
      this.clock = (this.clock ?? 0) + 1;
      const parent = this.scopeStack[this.scopeStack.length - 1];
      this.scopeStack.push(new NameScope(flags, this.scopeStack.length, this.clock, parent));
    },

    exitScope(this: ParserInternals): void {
      const scope = this.scopeStack.pop();
      if (scope && this.clashes) for (const name of scope.clashing) this.clashes.get(name)?.pop();
    },

    declareName(this: ParserInternals, name: string, bindingType: number, pos: number): void {
      const scope = this.currentScope();
      const clash = (): void => {
        this.clashes ??= new Map();
        let depths = this.clashes.get(name);
        if (!depths) {
          depths = [];
          this.clashes.set(name, depths);
        }
        depths.push(scope.depth);
        scope.clashing.push(name);
      };
      let redeclared = false;
      if (bindingType === BIND_LEXICAL) {
        redeclared = scope.lexical.has(name) || scope.functions.has(name) || scope.hasVar(name);
        scope.lexical.add(name);
        clash();
        if (this.inModule && scope.flags & SCOPE_TOP) delete this.undefinedExports[name];
      } else if (bindingType === BIND_SIMPLE_CATCH) {
        // A `var` of the catch parameter's name inside the catch block is allowed (Annex B).
        scope.lexical.add(name);
      } else if (bindingType === BIND_FUNCTION) {
        redeclared = this.treatFunctionsAsVar ? scope.lexical.has(name) : scope.lexical.has(name) || scope.hasVar(name);
        scope.functions.add(name);
        if (!this.treatFunctionsAsVarInScope(scope)) clash();
      } else {
        const target = scope.varScope;
        const depths = this.clashes?.get(name);
        redeclared = depths !== undefined && depths.length > 0 && depths[depths.length - 1]! >= target.depth;
        if (!redeclared) {
          this.clock = (this.clock ?? 0) + 1;
          target.varDeclaredAt!.set(name, this.clock);
          if (this.inModule && target.flags & SCOPE_TOP) delete this.undefinedExports[name];
        }
      }
      if (redeclared) this.raiseRecoverable(pos, `Identifier '${name}' has already been declared`);
    },

    checkLocalExport(this: ParserInternals, id: { name: string }): void {
      const top = this.scopeStack[0]!;
      if (!top.lexical.has(id.name) && !top.hasVar(id.name)) this.undefinedExports[id.name] = id;
    },

    regexp_groupSpecifier(this: ParserInternals, state: RegExpState): void {
      if (!state.eat(0x3f /* ? */)) return;
      if (!this.regexp_eatGroupName(state)) state.raise("Invalid group");
      const trackDisjunction = this.options.ecmaVersion === "latest" || this.options.ecmaVersion >= 16;
      const known = state.groupNames[state.lastStringValue] as Array<RegExpState["branchID"]> | true | undefined;
      if (known) {
        if (!trackDisjunction || known === true) state.raise("Duplicate capture group name");
        if (known.length >= MAX_SAME_NAME_GROUPS)
          state.raise(`More than ${MAX_SAME_NAME_GROUPS} capture groups named ${state.lastStringValue}`);
        for (const alternative of known)
          if (!alternative.separatedFrom(state.branchID)) state.raise("Duplicate capture group name");
      }
      if (trackDisjunction) {
        const list = (known as Array<RegExpState["branchID"]> | undefined) ?? [];
        list.push(state.branchID);
        state.groupNames[state.lastStringValue] = list;
      } else {
        state.groupNames[state.lastStringValue] = true;
      }
    },
  };
  const Linear = class extends Base {} as typeof Parser;
  Object.assign(Linear.prototype, overrides);
  return Linear;
}

/** acorn's Parser with linear name bookkeeping: use its static `parse` like acorn's `parse`. */
export const LinearParser: typeof Parser = Parser.extend(linearNames);
