// Loaded with `node --import`: makes `isolated-vm` unresolvable in this process, as on a host
// where it is not installed (an optional peer nobody installed) or cannot load.
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier === "isolated-vm") {
    const error = new Error("Cannot find package 'isolated-vm' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`)}`,
);
