import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../plugin-api/types.js";
import { builtinTools, selectTools } from "./index.js";

const fakeTool = (name: string, description = name): ToolDefinition => ({
  name,
  description,
  parameters: { type: "object", properties: {} },
  execute: async () => ({ ok: true, output: description }),
});

describe("builtinTools", () => {
  it("offers bash, read_file, write_file, edit_file and send_file with JSON Schema parameters", () => {
    const tools = builtinTools();
    expect(tools.map((t) => t.name)).toEqual(["bash", "read_file", "write_file", "edit_file", "send_file"]);
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.parameters.type).toBe("object");
      const properties = tool.parameters.properties as Record<string, { description?: string }>;
      for (const name of tool.parameters.required as string[])
        expect(properties[name]?.description).toBeTruthy();
    }
  });
});

describe("selectTools", () => {
  const all = [fakeTool("bash"), fakeTool("read_file"), fakeTool("weather"), fakeTool("bash", "duplicate")];

  it('"*" selects every tool, each name once (the first wins)', () => {
    const selected = selectTools(all, ["*"]);
    expect(selected.map((t) => t.name)).toEqual(["bash", "read_file", "weather"]);
    expect(selected[0]?.description).toBe("bash");
  });

  it("selects listed names in the order of the tools; unknown names and an empty list select nothing", () => {
    expect(selectTools(all, ["weather", "bash", "nope"]).map((t) => t.name)).toEqual(["bash", "weather"]);
    expect(selectTools(all, [])).toEqual([]);
  });
});
