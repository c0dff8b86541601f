/**
 * What the stories of a call asked again share (R-AP-9): a card charger whose calls need approval
 * and are asked again when interrupted (`onInterrupted: "ask"`: a charge may have gone through),
 * and the state a host leaves in the store when it dies inside a call.
 */
import { type Connector, defineConnector } from "@codemode/core";
import type Keyv from "keyv";

/** `<name>.<method>({ card })`: needs approval, asked again when interrupted; `charged` has every card charged. */
export function cardCharger(name = "payments", method = "charge"): { connector: Connector; charged: string[] } {
  const charged: string[] = [];
  const connector = defineConnector({
    name,
    tools: {
      [method]: {
        requiresApproval: true,
        onInterrupted: "ask",
        execute: (args: { card: string }) => {
          charged.push(args.card);
          return { charged: args.card };
        },
      },
    },
  });
  return { connector, charged };
}

/** Leaves entry `seq` of the run as a host that died inside the call leaves it: under way, no result. */
export async function crashInside(keyv: Keyv, executionId: string, seq: number): Promise<void> {
  const key = `cm:default:e:${executionId}:${seq}`;
  const entry = JSON.parse((await keyv.get(key)) as string) as Record<string, unknown>;
  entry.state = "executing";
  delete entry.result;
  delete entry.endedAt;
  await keyv.set(key, JSON.stringify(entry));
}
