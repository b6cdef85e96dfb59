import { describe, expect, it } from "vitest";
import { runShutdown } from "./shutdown.js";

describe("runShutdown", () => {
  it("runs the stages in order, awaiting each", async () => {
    const ran: string[] = [];
    const stage = (name: string) => ({
      name,
      run: async () => {
        await Promise.resolve();
        ran.push(name);
      },
    });
    const failed = await runShutdown([stage("drain"), stage("outbox"), stage("journal")], () => {});
    expect(ran).toEqual(["drain", "outbox", "journal"]);
    expect(failed).toEqual([]);
  });

  it("reports a failing stage by name and still runs the rest", async () => {
    const ran: string[] = [];
    const reported: Array<[string, unknown]> = [];
    const boom = new Error("boom");
    const failed = await runShutdown(
      [
        {
          name: "host",
          run: () => {
            throw boom;
          },
        },
        {
          name: "http",
          run: async () => {
            throw boom;
          },
        },
        {
          name: "journal",
          run: () => {
            ran.push("journal");
          },
        },
      ],
      (name, error) => reported.push([name, error]),
    );
    expect(ran).toEqual(["journal"]);
    expect(failed).toEqual(["host", "http"]);
    expect(reported).toEqual([
      ["host", boom],
      ["http", boom],
    ]);
  });
});
