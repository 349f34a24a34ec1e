import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import getTime, { type GetTimeDetails } from "../../tools/getTime.ts";
import { foldName } from "../../tools/_lib/cities.ts";

/** 2026-11-30T01:49:05Z: Monday 10:49:05 in Tokyo, Sunday 20:49:05 in New York. */
const FIXED_NOW = new Date("2026-11-30T01:49:05Z");

async function run(args: { timezone?: string; city?: string }) {
  const result = await getTime.execute("call-1", args, new AbortController().signal, () => {});
  const first = result.content[0];
  return { text: first?.type === "text" ? first.text : "", details: result.details as GetTimeDetails };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(FIXED_NOW);
});

afterEach(() => {
  vi.useRealTimers();
});

describe("getTime validation", () => {
  it("asks for a timezone or a city when both are missing", () => {
    expect(getTime.validateRequiredArgs?.({})).toMatch(/Give "timezone".*or "city".*both are missing/);
    expect(getTime.validateRequiredArgs?.({ city: "  ", timezone: "" })).toMatch(/both are missing/);
  });

  it.each(["EST5EDT", "Tokyo", "garbage!!", "Asia/", "/Tokyo", "+09:00"])("refuses %j as not in IANA Area/Location form", (zone) => {
    const message = getTime.validateRequiredArgs?.({ timezone: zone });
    expect(message).toContain(`timezone ${JSON.stringify(zone)} is not an IANA time zone name`);
    expect(message).toContain('pass it as "city"');
  });

  it("refuses a well-formed zone the runtime does not know", () => {
    expect(getTime.validateRequiredArgs?.({ timezone: "Mars/Olympus" })).toBe(
      'timezone "Mars/Olympus" is not a time zone this runtime knows; use an IANA name such as "Asia/Tokyo" or "UTC"',
    );
  });

  it.each(["Asia/Tokyo", "America/Argentina/Salta", "Etc/GMT+5", "UTC", "asia/tokyo"])("accepts %j", (zone) => {
    expect(getTime.validateRequiredArgs?.({ timezone: zone })).toBeUndefined();
  });

  it("accepts a city alone", () => {
    expect(getTime.validateRequiredArgs?.({ city: "Tokyo" })).toBeUndefined();
  });

  it("execute refuses the same inputs when called without validation", async () => {
    await expect(run({})).rejects.toThrow(/both are missing/);
    await expect(run({ timezone: "EST5EDT" })).rejects.toThrow(/not an IANA time zone name/);
  });

  it("declares both fields optional and nothing else allowed", () => {
    expect(getTime.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
    expect(getTime.inputSchema.required).toBeUndefined();
    expect(Object.keys(getTime.inputSchema.properties as object).sort()).toEqual(["city", "timezone"]);
  });
});

describe("getTime results", () => {
  it("formats the time for an IANA timezone", async () => {
    const { text, details } = await run({ timezone: "America/New_York" });
    expect(text).toBe("America/New_York: Sunday 29 November 2026, 20:49:05 (UTC-05:00)");
    expect(details).toEqual({
      timezone: "America/New_York",
      matchedBy: "timezone",
      alternatives: [],
      iso: "2026-11-29T20:49:05-05:00",
      utcOffset: "UTC-05:00",
    });
  });

  it("uses the canonical spelling of a zone given in lower case", async () => {
    const { text, details } = await run({ timezone: "asia/tokyo" });
    expect(details.timezone).toBe("Asia/Tokyo");
    expect(text.startsWith("Asia/Tokyo: ")).toBe(true);
  });

  it("reports UTC with a zero offset", async () => {
    const { text, details } = await run({ timezone: "UTC" });
    expect(text).toBe("UTC: Monday 30 November 2026, 01:49:05 (UTC+00:00)");
    expect(details.iso).toBe("2026-11-30T01:49:05+00:00");
  });

  it("finds a city's zone offline (Tokyo → Asia/Tokyo)", async () => {
    const { text, details } = await run({ city: "Tokyo" });
    expect(text).toBe("Tokyo, Japan (Asia/Tokyo): Monday 30 November 2026, 10:49:05 (UTC+09:00)");
    expect(details).toMatchObject({
      timezone: "Asia/Tokyo",
      matchedBy: "city",
      city: "Tokyo",
      country: "Japan",
      alternatives: [],
      iso: "2026-11-30T10:49:05+09:00",
      utcOffset: "UTC+09:00",
    });
    expect(details.population).toBeGreaterThan(1_000_000);
  });

  it("matches city names regardless of case and accents", async () => {
    const { details } = await run({ city: "SÃO PAULO" });
    expect(details.timezone).toBe("America/Sao_Paulo");
  });

  it("folds ASCII and accented names alike: case, accents, runs of spaces (also non-ASCII ones)", () => {
    expect(foldName("  Tokyo ")).toBe("tokyo");
    expect(foldName("New   York")).toBe("new york");
    expect(foldName("S\u00e3o  Paulo")).toBe("sao paulo");
    expect(foldName("Sa\u0303o Paulo")).toBe("sao paulo");
    expect(foldName("Z\u00dcRICH\u00a0City")).toBe("zurich city");
  });

  it("resolves an ambiguous city to the most populous place and lists the others", async () => {
    const { text, details } = await run({ city: "London" });
    expect(details).toMatchObject({ city: "London", country: "United Kingdom", timezone: "Europe/London" });
    expect(details.alternatives.length).toBeGreaterThan(0);
    expect(details.alternatives).toContainEqual(
      expect.objectContaining({ city: "London", country: "Canada", timezone: "America/Toronto" }),
    );
    for (const alternative of details.alternatives) {
      expect(alternative.population).toBeLessThanOrEqual(details.population ?? 0);
    }
    expect(text).toContain("London, United Kingdom (Europe/London): Monday 30 November 2026, 01:49:05 (UTC+00:00)");
    expect(text).toContain("most populous of");
    expect(text).toContain("London, Canada (America/Toronto)");
  });

  it("names the province when same-named places share a country", async () => {
    const { text, details } = await run({ city: "Springfield" });
    const populations = [details.population ?? 0, ...details.alternatives.map((a) => a.population)];
    expect(populations).toEqual([...populations].sort((a, b) => b - a));
    expect(details.alternatives.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(new RegExp(`^Springfield, ${details.province}, United States of America \\(`));
  });

  it("narrows an ambiguous city with a ', country or state' qualifier", async () => {
    const canada = await run({ city: "London, Canada" });
    expect(canada.details).toMatchObject({ country: "Canada", timezone: "America/Toronto", alternatives: [] });
    const illinois = await run({ city: "Springfield, IL" });
    expect(illinois.details).toMatchObject({ province: "Illinois", timezone: "America/Chicago", alternatives: [] });
    expect(illinois.text).toMatch(/^Springfield, Illinois, United States of America \(America\/Chicago\): /);
    const uk = await run({ city: "London, UK" });
    expect(uk.details.timezone).toBe("Europe/London");
  });

  it("labels the zone with the city when both are given, and trusts the timezone", async () => {
    const { text, details } = await run({ city: "Home", timezone: "Europe/Paris" });
    expect(text).toBe("Home (Europe/Paris): Monday 30 November 2026, 02:49:05 (UTC+01:00)");
    expect(details.matchedBy).toBe("timezone");
  });

  it("fails clearly for an unknown city", async () => {
    await expect(run({ city: "Atlantis" })).rejects.toThrow('No city named "Atlantis" in the offline city list');
    await expect(run({ city: "London, Narnia" })).rejects.toThrow(/No city named "London, Narnia"/);
  });

  it("refuses to run when already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(getTime.execute("call-1", { city: "Tokyo" }, controller.signal, () => {})).rejects.toThrow(/aborted/);
  });
});
