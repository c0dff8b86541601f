// Loaded with `node --import`: makes `isolated-vm` unresolvable in this process, as on a host
// where it is not installed (an optional peer nobody installed) or cannot load; for `import()`
// and for `require()` alike (module.registerHooks runs its hooks for both).
import { registerHooks } from "node:module";

registerHooks({
  resolve(specifier, context, next) {
    if (specifier === "isolated-vm") {
      const error = new Error(`Cannot find package 'isolated-vm' imported from ${context.parentURL}`);
      error.code = "ERR_MODULE_NOT_FOUND";
      throw error;
    }
    return next(specifier, context);
  },
});
