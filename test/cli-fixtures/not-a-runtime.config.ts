// A config that loads but exports something else than a runtime.
export default { connectors: [] };
