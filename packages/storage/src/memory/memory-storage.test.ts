import { runStorageConformance } from "../testing/index.js";
import { memoryStorage } from "./memory-storage.js";

runStorageConformance("memoryStorage()", () => memoryStorage(), { shared: false });
