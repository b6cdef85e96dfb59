import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, flushLogLines } from "./logger.js";

/** What the default sink wrote to stderr, one string per write. */
function captureStderr(): string[] {
  const writes: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  });
  return writes;
}

const nextImmediate = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the default sink (stderr)", () => {
  afterEach(() => {
    flushLogLines();
    vi.restoreAllMocks();
  });

  it("writes the info lines of one turn of the event loop in one write, after it", async () => {
    const writes = captureStderr();
    const logger = createLogger({ level: "debug" });
    logger.info("turn one", { session: "group:a" });
    logger.debug("turn two");
    expect(writes).toEqual([]);
    await nextImmediate();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/INFO turn one session=group:a\n.*DEBUG turn two\n$/);
  });

  it("writes a warn or error line at once, after the lines that waited, in order", () => {
    const writes = captureStderr();
    const logger = createLogger();
    logger.info("first");
    logger.error("broken", { why: "disk full" });
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/INFO first\n.*ERROR broken why="disk full"\n$/);
    logger.warn("careful");
    expect(writes).toHaveLength(2);
    expect(writes[1]).toMatch(/WARN careful\n$/);
  });

  it("flushLogLines writes what waits now, once", () => {
    const writes = captureStderr();
    createLogger().info("waiting");
    flushLogLines();
    flushLogLines();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/INFO waiting\n$/);
  });

  it("drops lines below the level", async () => {
    const writes = captureStderr();
    createLogger({ level: "info" }).debug("hidden");
    await nextImmediate();
    expect(writes).toEqual([]);
  });
});
