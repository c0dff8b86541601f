/**
 * The config module `codemode --config` loads in the fleet stories: the fleet's runtime over its
 * store, from the FleetConfig in CODEMODE_FLEET_CONFIG (as JSON), as an operator's own config
 * would open it.
 */
import type { FleetConfig } from "./shared.ts";
import { openLedger, openRuntime, openStorage } from "./shared.ts";

export default async function createRuntime() {
  const text = process.env.CODEMODE_FLEET_CONFIG;
  if (!text) throw new Error("CODEMODE_FLEET_CONFIG is not set");
  const config = { ...(JSON.parse(text) as FleetConfig), workerId: "operator" };
  const storage = openStorage(config);
  const ledger = await openLedger(config);
  const runtime = openRuntime(config, storage, ledger);
  return {
    runtime,
    async close() {
      await runtime.close();
      await storage.close();
      await ledger.close();
    },
  };
}
