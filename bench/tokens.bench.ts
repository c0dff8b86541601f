/**
 * What Code Mode saves: tokens and model turns against direct tool calling, for tool sets of
 * about 10, 100 and 1,000 real tools and four scripted tasks (bench/tokens/). Counts come from the
 * o200k_base tokenizer (`gpt-tokenizer`) over the requests the real `@ai-sdk/openai` provider
 * sent, by OpenAI's cookbook recipe, with the tool definitions counted two ways side by side (raw
 * JSON and the recipe's rendering; bench/tokens/count.ts says how, and what each leaves out).
 * They are estimates of what OpenAI bills, not its figures. Nothing is timed and every random id is
 * fixed before counting, so two runs print the same tables and `repeat` is 1.
 *
 * Its tables are a section of bench/RESULTS.md of their own (`report`), not rows of the timing
 * table.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { Benchmark } from "./harness.ts";
import { type ConversationCount, codeModeTools, converse, directTools } from "./tokens/conversation.ts";
import type { TwoWays } from "./tokens/count.ts";
import { codeModeReply, TASKS, type Task } from "./tokens/tasks.ts";
import { openToolSources, type ToolSet, toolSets } from "./tokens/tool-sets.ts";

interface TaskResult {
  set: ToolSet;
  task: Task;
  direct: ConversationCount;
  codeMode: ConversationCount;
}

interface SetResult {
  set: ToolSet;
  /** Tokens of the tool definitions one request carries, counted both ways. */
  directDefinitions: TwoWays;
  codeModeDefinition: TwoWays;
  /** Tokens of a `codemode.search` answer and of the describe answers of the first task. */
  searchAnswer: number;
  describeAnswers: number;
}

let report = "";

const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)}%`;
const thousands = (value: number) => value.toLocaleString("en-US");
/** A cell of a count taken both ways: "JSON / recipe". */
const both = (value: TwoWays) => `${thousands(value.json)} / ${thousands(value.recipe)}`;
const bothPercent = (part: TwoWays, whole: TwoWays) =>
  `${percent(part.json, whole.json)} / ${percent(part.recipe, whole.recipe)}`;
const perTurn = (total: TwoWays, turns: number): TwoWays => ({
  json: total.json / turns,
  recipe: total.recipe / turns,
});

async function measure(): Promise<{ sets: SetResult[]; tasks: TaskResult[] }> {
  const opened = await openToolSources();
  try {
    const sets: SetResult[] = [];
    const tasks: TaskResult[] = [];
    for (const set of toolSets(opened.sources, opened.mcp)) {
      const direct = directTools(set.sources);
      const codeMode = codeModeTools(set.sources);
      try {
        const { runtime } = codeMode;
        const searchAnswer = countTokens(JSON.stringify(await runtime.search("overdue invoices of a customer")));
        const describeAnswers = countTokens(
          JSON.stringify(await Promise.all(TASKS[0]!.codeMode.describe.map((name) => runtime.describe(name)))),
        );
        for (const task of TASKS) {
          const directCount = await converse(direct, task.prompt, (seen) => task.direct(seen));
          const codeModeCount = await converse(codeMode.tools, task.prompt, (seen) => codeModeReply(task, seen));
          if (directCount.answer !== codeModeCount.answer)
            throw new Error(
              `${task.name}: the two ways ended differently:\n  direct: ${directCount.answer}\n  Code Mode: ${codeModeCount.answer}`,
            );
          tasks.push({ set, task, direct: directCount, codeMode: codeModeCount });
        }
        // Every request of a conversation carries the same tool definitions.
        const first = tasks.find((entry) => entry.set === set)!;
        sets.push({
          set,
          directDefinitions: perTurn(first.direct.toolDefinitionTokens, first.direct.turns),
          codeModeDefinition: perTurn(first.codeMode.toolDefinitionTokens, first.codeMode.turns),
          searchAnswer,
          describeAnswers,
        });
      } finally {
        await codeMode.close();
      }
    }
    return { sets, tasks };
  } finally {
    await opened.close();
  }
}

function setsTable(sets: SetResult[]): string {
  const lines = [
    "| tool set | tools | sources | direct: tool definitions per request (JSON / recipe) | Code Mode: tool definition per request (JSON / recipe) | Code Mode ÷ direct (JSON / recipe) | `codemode.search` answer | describe answers (task 1) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const { set, directDefinitions, codeModeDefinition, searchAnswer, describeAnswers } of sets)
    lines.push(
      `| ${set.label} | ${set.toolCount} | ${set.sources.length} | ${both(directDefinitions)} | ${both(codeModeDefinition)} | ${bothPercent(codeModeDefinition, directDefinitions)} | ${thousands(searchAnswer)} | ${thousands(describeAnswers)} |`,
    );
  return lines.join("\n");
}

function tasksTable(tasks: TaskResult[]): string {
  const lines = [
    "| tool set | task | turns (direct / Code Mode) | input tokens: direct (JSON / recipe) | input tokens: Code Mode (JSON / recipe) | input: Code Mode ÷ direct (JSON / recipe) | output tokens (direct / Code Mode) | output: Code Mode ÷ direct | tool results reaching the model, bytes (direct / Code Mode) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const { set, task, direct, codeMode } of tasks)
    lines.push(
      `| ${set.label} | ${task.name} | ${direct.turns} / ${codeMode.turns} | ${both(direct.inputTokens)} | ${both(codeMode.inputTokens)} | ${bothPercent(codeMode.inputTokens, direct.inputTokens)} | ${thousands(direct.outputTokens)} / ${thousands(codeMode.outputTokens)} | ${percent(codeMode.outputTokens, direct.outputTokens)} | ${thousands(direct.intermediateBytes)} / ${thousands(codeMode.intermediateBytes)} |`,
    );
  return lines.join("\n");
}

/** The README's line: at about 100 tools, over the three multi-step tasks. */
export function summaryLine(tasks: TaskResult[]): string {
  const chosen = tasks.filter((entry) => entry.set.label === "about 100" && entry.task !== TASKS.at(-1));
  const sum = (pick: (entry: TaskResult) => number) => chosen.reduce((total, entry) => total + pick(entry), 0);
  const input = (way: keyof TwoWays) =>
    percent(
      sum((entry) => entry.codeMode.inputTokens[way]),
      sum((entry) => entry.direct.inputTokens[way]),
    );
  return (
    `For about 100 tools and the three multi-step tasks, Code Mode sends ${input("json")} of the input tokens ` +
    `of direct calling with the tool definitions counted as raw JSON (${input("recipe")} with them counted by ` +
    `OpenAI's cookbook recipe), ` +
    `writes ${percent(
      sum((entry) => entry.codeMode.outputTokens),
      sum((entry) => entry.direct.outputTokens),
    )} of its output tokens ` +
    `and takes ${percent(
      sum((entry) => entry.codeMode.turns),
      sum((entry) => entry.direct.turns),
    )} of its model turns.`
  );
}

const NOTES = `How it is measured (bench/tokens/): each task runs twice through the AI SDK's \`generateText\`
and the real \`@ai-sdk/openai\` provider (Chat Completions) against a local imitation of the OpenAI API
whose "model" is a script, and every request the provider sent is counted with the o200k_base
tokenizer (\`gpt-tokenizer\`) by OpenAI's cookbook recipe ("How to count tokens with tiktoken"). Input
tokens are summed over the requests of a conversation: each message's role and text or tool calls,
3 tokens of framing per message, 3 per reply, and the tool definitions, counted two ways, shown as
"JSON / recipe": the \`tools\` array as sent (raw JSON), and the cookbook's \`num_tokens_for_tools\`
(GPT-4o constants: each function's name and description, each top-level property's name, type,
description and enum values, fixed overheads). Output tokens are what the script wrote: tool-call
names and arguments, programs, the answer. "Tool results reaching the model" are the bytes of the
tool messages in the last request. Every UUID (a Code Mode outcome's \`executionId\`) is replaced by
one fixed UUID of the same length before counting, so the counts repeat from run to run.

- **Tools.** The tasks' six connectors (11 tools, bench/tokens/task-tools.ts), the quickstart's two
  example connectors, and the tools that three MCP servers from npm list over stdio
  (\`server-everything\`, \`server-filesystem\`, \`server-memory\`; 36 tools). The sets of about 100 and
  1,000 tools add copies of those three servers under distinct names (\`filesystem_2\`, …): the same
  real schemas, not invented ones. Direct calling gets one tool per method, \`<source>_<method>\`.
- **The scripts.** Direct calling reads each result and makes the next calls, independent ones
  together in one turn (parallel tool calls), using the tools' own filters (\`city\`, \`status\`).
  Code Mode first asks for the signatures of the connectors it needs (one \`codemode.describe\`
  program), then sends one program, then answers from its result. Both end with the same answer,
  checked by the benchmark. The task tools declare output schemas, so \`describe\` shows the
  fields a program reads; those schemas are counted on the Code Mode side only (direct calling
  sends none). No call here needs an approval; one would add a turn to either style.
- **Where Code Mode costs more.** A task of one call ("one lookup") takes a turn more and writes
  more (the describe program and the program), and with few tools its input is no smaller.
- **How far to trust the counts.** OpenAI does not publish how it renders tool definitions for the
  model, so neither count is its billed figure. Raw JSON counts braces, quotes, keys and every nested
  schema, so it overstates definitions, and wide schemas most: it favours Code Mode. The recipe was
  checked by the cookbook against the API for one flat tool only and counts nothing below the top-level
  properties (nested objects, array items, \`anyOf\`, defaults), so for the nested MCP schemas it
  understates them: it favours direct calling. The Code Mode side's signatures reach the model as
  describe answers (message text) and are counted in full either way.
- **Caveats.** OpenAI accepts at most 128 tools per request: the direct rows at about 1,000 tools
  are what such a request would cost where a provider takes it. Providers bill a repeated prompt
  prefix (the tool definitions are one) at a discount when it is cached; these are token counts,
  not prices.`;

export const tokensBenchmark: Benchmark = {
  name: "tokens",
  description: "tokens and model turns: Code Mode against direct tool calling (10, 100, 1,000 tools; 4 tasks)",
  async run() {
    const { sets, tasks } = await measure();
    report = [summaryLine(tasks), "", setsTable(sets), "", tasksTable(tasks), "", NOTES].join("\n");
    return [];
  },
  section: "Tokens and model turns against direct tool calling",
  report: () => report,
};
