// What the program can find: search and describe over the connectors and snippets.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export { type DescribeOutput, Discovery, type SearchOutput } from "./discovery.js";
