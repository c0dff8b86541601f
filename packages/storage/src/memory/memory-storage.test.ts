import { memoryStorage } from "@codemode/storage/memory";
import { runExecutionIndexConformance, runStorageConformance } from "@codemode/storage/testing";

runStorageConformance("memoryStorage()", () => memoryStorage(), { shared: false });
runExecutionIndexConformance("memoryStorage()", () => memoryStorage(), { shared: false });
