// A Keyv store that can go down, for the stories of a store outage. core's decide-pending-action
// test keeps a twin of it, deliberately: core's tests import nothing from an adapter package.
import Keyv from "keyv";

/**
 * A Keyv store whose every call fails while `state.down` is set, as a lost server would.
 *
 * @example
 * const { keyv, state } = outageStore();
 * state.down = true; // every get, set, delete and clear now throws "connection refused"
 */
export function outageStore() {
  const data = new Map<string, unknown>();
  const state = { down: false };
  const guard = () => {
    if (state.down) throw new Error("connection refused");
  };
  const store = {
    get: async (key: string) => {
      guard();
      return data.get(key);
    },
    set: async (key: string, value: unknown) => {
      guard();
      data.set(key, value);
      return true;
    },
    delete: async (key: string) => {
      guard();
      return data.delete(key);
    },
    clear: async () => {
      guard();
      data.clear();
    },
  };
  return { keyv: new Keyv({ store }), state };
}
