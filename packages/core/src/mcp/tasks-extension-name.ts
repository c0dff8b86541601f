/** The tasks extension of the 2026-07-28 protocol (SEP-2663), as clients and servers declare it in capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
