/**
 * Finds the TypeScript samples of a Markdown page and what the page says about each: the marker,
 * an HTML comment on the line before a ```ts fence (blank lines between are allowed).
 *
 *   (no marker)                                    a whole program: type-checked on its own, then run
 *   <!-- sample: no-run — <reason> -->             a whole program, type-checked, not run
 *   <!-- sample: fragment — declares: a, b -->     a part of a page's program: type-checked with the
 *                                                  names it uses from the page declared, not run
 *   <!-- sample: fragment — continues -->          the page's program goes on: type-checked after the
 *                                                  sample before it, as one module, not run
 *   <!-- sample: fragment — continues; declares: a -->   both
 *   <!-- sample: skip — <reason> -->               not checked at all (the test lists it, with its reason)
 */

export type SampleKind = "program" | "no-run" | "fragment" | "skip";

export interface Sample {
  /** The Markdown file, relative to the repository root: `docs/storage.md`. */
  readonly file: string;
  /** The 1-based line of the opening fence; the code starts on the next line. */
  readonly line: number;
  readonly code: string;
  readonly kind: SampleKind;
  /** The names a fragment uses without defining them (typed by the prelude, or `any`). */
  readonly declares: readonly string[];
  /** A fragment that goes on from the page's sample before it (checked together with it). */
  readonly continues: boolean;
  /** Why a `skip` or `no-run` sample is not run. */
  readonly reason?: string;
}

/** A marker the extractor could not read, reported like a failing sample. */
export interface MarkerProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

// A backtick fence's info string holds no backtick (CommonMark): "```` ```ts ````" is inline code.
const FENCE_OPEN = /^(\s*)(`{3,}(?=[^`]*$)|~{3,})\s*([\w-]*)/;
const TYPESCRIPT_LANGUAGES = new Set(["ts", "typescript"]);
const MARKER = /^\s*<!--\s*sample:\s*(.*?)\s*-->\s*$/;
// A dash of any length, then the rest: "skip — reason", "skip -- reason", "skip: reason".
const MARKER_BODY = /^([a-z-]+)\s*(?:(?:—|–|--?|:)\s*(.*))?$/;

/**
 * Answers the ```ts samples of one Markdown page, and the markers that do not read as one.
 *
 * @example
 *   const { samples } = extractSamples("docs/storage.md", readFileSync("docs/storage.md", "utf8"));
 */
export function extractSamples(file: string, markdown: string): { samples: Sample[]; problems: MarkerProblem[] } {
  const lines = markdown.split("\n");
  const samples: Sample[] = [];
  const problems: MarkerProblem[] = [];
  let pendingMarker: { line: number; body: string } | undefined;

  for (let index = 0; index < lines.length; index++) {
    const text = lines[index] ?? "";
    const marker = MARKER.exec(text);
    if (marker) {
      if (pendingMarker) problems.push(strayMarker(file, pendingMarker.line));
      pendingMarker = { line: index + 1, body: marker[1] ?? "" };
      continue;
    }
    const fence = FENCE_OPEN.exec(text);
    if (!fence) {
      if (text.trim() !== "" && pendingMarker) {
        problems.push(strayMarker(file, pendingMarker.line));
        pendingMarker = undefined;
      }
      continue;
    }
    const [, indent = "", ticks = "", language = ""] = fence;
    const end = findClosingFence(lines, index + 1, ticks);
    const body = lines.slice(index + 1, end).map((codeLine) => codeLine.slice(indentWidth(codeLine, indent.length)));
    if (TYPESCRIPT_LANGUAGES.has(language)) {
      const parsed = pendingMarker ? parseMarker(pendingMarker.body) : PROGRAM;
      if ("message" in parsed) {
        problems.push({ file, line: pendingMarker?.line ?? index + 1, message: parsed.message });
      } else if (parsed.continues && !samples.some((sample) => sample.kind !== "skip")) {
        problems.push({ file, line: index + 1, message: "`continues`, but no checked ```ts sample comes before it" });
      } else {
        samples.push({ file, line: index + 1, code: body.join("\n"), ...parsed });
      }
    } else if (pendingMarker) {
      problems.push(strayMarker(file, pendingMarker.line));
    }
    pendingMarker = undefined;
    index = end;
  }
  if (pendingMarker) problems.push(strayMarker(file, pendingMarker.line));
  return { samples, problems };
}

function findClosingFence(lines: readonly string[], from: number, ticks: string): number {
  for (let index = from; index < lines.length; index++) {
    const text = (lines[index] ?? "").trim();
    if (text.startsWith(ticks) && text.slice(ticks.length).trim() === "") return index;
  }
  return lines.length;
}

/** A fence indented in a list item indents its code too: strip up to the fence's own indent. */
function indentWidth(codeLine: string, fenceIndent: number): number {
  let width = 0;
  while (width < fenceIndent && codeLine[width] === " ") width++;
  return width;
}

function strayMarker(file: string, line: number): MarkerProblem {
  return { file, line, message: "a `<!-- sample: … -->` marker must be on the line before a ```ts fence" };
}

type ParsedMarker = Pick<Sample, "kind" | "declares" | "continues" | "reason"> | { message: string };

const PROGRAM: ParsedMarker = { kind: "program", declares: [], continues: false };

function parseMarker(body: string): ParsedMarker {
  const match = MARKER_BODY.exec(body);
  const kind = match?.[1];
  const rest = (match?.[2] ?? "").trim();
  if (kind === "skip" || kind === "no-run") {
    if (rest === "") return { message: `\`sample: ${kind}\` needs a reason: <!-- sample: ${kind} — <reason> -->` };
    return { kind, declares: [], continues: false, reason: rest };
  }
  if (kind === "fragment") return parseFragment(rest);
  return { message: `unknown sample marker "${body}": use skip, no-run or fragment` };
}

/** `continues`, `declares: a, b`, or both separated by `;`. */
function parseFragment(clauses: string): ParsedMarker {
  let continues = false;
  let declares: string[] = [];
  for (const clause of clauses.split(";").map((text) => text.trim())) {
    const declared = /^declares:\s*(.*)$/.exec(clause);
    if (clause === "continues") continues = true;
    else if (declared) declares = (declared[1] ?? "").split(",").map((name) => name.trim());
    else return { message: `a fragment says "continues" or "declares: a, b" (separated by ";"), not "${clause}"` };
  }
  const invalid = declares.filter((name) => !/^[A-Za-z_$][\w$]*$/.test(name));
  if (invalid.length > 0) return { message: `not names a fragment can declare: ${invalid.join(", ")}` };
  if (!continues && declares.length === 0) {
    return { message: "a fragment declares the names it uses or continues the sample before it" };
  }
  return { kind: "fragment", declares, continues };
}
